"""Array plans outside the model: plan files, the hardware catalog, plans from an inventory,
the commands that build a plan, its script, and its JSON report.

Imports model and inventory only (no Qt, no history): the CLI and the GUI both use it.
"""

from __future__ import annotations

from stripewise.planner.catalog import Catalog, CatalogError, load_catalog
from stripewise.planner.from_inventory import catalog_controller, catalog_disk, plan_from_inventory
from stripewise.planner.plan_file import PlanFileError, load_plan, loads_plan
from stripewise.planner.plan_writer import dumps_plan

__all__ = [
    "Catalog",
    "CatalogError",
    "PlanFileError",
    "catalog_controller",
    "catalog_disk",
    "dumps_plan",
    "load_catalog",
    "load_plan",
    "loads_plan",
    "plan_from_inventory",
]

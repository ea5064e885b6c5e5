"""Disks named by their bay where a layout maps them: the Benchmark target list and the plan
("bay 6 (sdi)"), and by kernel name where none does."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from stripewise.inventory.chassis_files import layouts
from stripewise.model.bay_map import bay_of_disks
from stripewise.model.bench_targets import TargetKind, targets_from
from stripewise.model.topology import Inventory
from stripewise.planner.from_inventory import plan_from_inventory
from tests.bays.test_mapping import walk_x4500


def free_disks(inventory: Inventory) -> Inventory:
    """The recording keeps no mounts: here every disk is known free (as on a new box)."""
    return replace(
        inventory,
        arrays=(),
        controllers=tuple(
            replace(
                c,
                slots=tuple(
                    replace(s, disk=replace(s.disk, usage_known=True, holders=(), partitions=()))
                    if s.disk
                    else s
                    for s in c.slots
                ),
            )
            for c in inventory.controllers
        ),
    )


def test_free_disks_are_named_by_bay_in_the_target_list(x4500: Inventory) -> None:
    inventory = free_disks(x4500)
    layout = layouts(Path("/nonexistent"))["Sun Fire X4500"][0]
    bays = {n: b.label for n, b in bay_of_disks(layout, walk_x4500(inventory), inventory).items()}
    named = {
        t.path: t.label for t in targets_from(inventory, None, bays) if t.kind is TargetKind.DISK
    }
    assert len(named) == 48
    assert named["/dev/sdi"].startswith("bay 6 (sdi)  (free HITACHI")
    plain = {t.path: t.label for t in targets_from(inventory) if t.kind is TargetKind.DISK}
    assert plain["/dev/sdi"].startswith("/dev/sdi  (free HITACHI")  # no layout: as before
    # the targets are the same ones, named otherwise: a choice survives the naming
    assert [t.identity for t in targets_from(inventory, None, bays)] == [
        t.identity for t in targets_from(inventory)
    ]


def test_a_plan_names_each_disk_s_bay(x4500: Inventory) -> None:
    layout = layouts(Path("/nonexistent"))["Sun Fire X4500"][0]
    bays = {n: b.label for n, b in bay_of_disks(layout, walk_x4500(x4500), x4500).items()}
    plan = plan_from_inventory(x4500, bays=bays)
    slots = {d.id: d.slot for d in plan.disks}
    assert (
        slots["sdi"] == "bay 6" and len([s for s in slots.values() if s.startswith("bay ")]) == 48
    )
    unmapped = plan_from_inventory(x4500, bays={})
    assert next(d.slot for d in unmapped.disks if d.id == "sdi") == "port 0"

"""Data shipped with Stripewise: icons, tuning presets, the disk and controller catalog.

This folder is the package `stripewise.resources` (linked from app/stripewise/resources).
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable


def resource(*parts: str) -> Traversable:
    """A shipped file, e.g. resource("icons", "org.stripewise.Stripewise.svg")."""
    return resources.files(__name__).joinpath(*parts)

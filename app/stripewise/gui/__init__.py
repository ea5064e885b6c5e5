"""Widgets only. Importing this package itself loads no Qt, so the CLI can read VIEW_NAMES."""

from __future__ import annotations

VIEW_NAMES: tuple[str, ...] = (
    "hardware",
    "planner",
    "tuning",
    "benchmark",
    "experiment",
    "history",
)

KEYBOARD_PAGE = "keyboard"  # the manual's page of keys, for every view
MANUAL_PAGES: tuple[str, ...] = (*VIEW_NAMES, KEYBOARD_PAGE)

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

"""State colours of the hardware map, chosen to read on light and dark palettes alike."""

from __future__ import annotations

from PySide6.QtGui import QColor

from stripewise.model.topology import DiskState

PLANNED = "planned"

STATE_COLORS: dict[str, QColor] = {
    DiskState.SYSTEM.value: QColor("#d64541"),
    DiskState.ARRAY_MEMBER.value: QColor("#8e6cc4"),
    DiskState.IN_USE.value: QColor("#dd9a2b"),
    DiskState.UNKNOWN.value: QColor("#8a8f98"),
    DiskState.FREE.value: QColor("#3fa66a"),
    PLANNED: QColor("#3b82d6"),
}

STATE_NAMES: dict[str, str] = {
    DiskState.SYSTEM.value: "System disk",
    DiskState.ARRAY_MEMBER.value: "Array member",
    DiskState.IN_USE.value: "Mounted / in use",
    DiskState.UNKNOWN.value: "Use unknown",
    DiskState.FREE.value: "Free",
    PLANNED: "Planned member",
}

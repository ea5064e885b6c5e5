"""What every page shares: its title."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel


def page_title(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * 1.6)
    font.setBold(True)
    label.setFont(font)
    label.setAccessibleName(f"{text} page")
    return label

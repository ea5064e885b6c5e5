"""Windows opened at a size of their own stay on the screen: the console's usual modes are
800x600 and 1024x768, where a 1000x700 window put its buttons below the screen's edge."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QWidget

# of the screen's free area: what is left is for the window manager's frame and title bar
WIDTH_SHARE, HEIGHT_SHARE = 0.95, 0.92


def resize_within_screen(window: QWidget, wanted: QSize) -> None:
    """`wanted`, or as much of it as fits the screen of the window (of its parent, before it
    is shown), never below what its layout needs."""
    parent = window.parentWidget()
    screen = (parent or window).screen()
    if screen is None:
        window.resize(wanted)
        return
    room = screen.availableGeometry()
    width = min(wanted.width(), int(room.width() * WIDTH_SHARE))
    height = min(wanted.height(), int(room.height() * HEIGHT_SHARE))
    least = window.minimumSizeHint()
    window.resize(max(width, least.width()), max(height, least.height()))

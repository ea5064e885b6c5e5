"""Windows opened at a size of their own stay on the screen: the console's usual modes are
800x600 and 1024x768, where a 1000x700 window put its buttons below the screen's edge."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QSize, Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget

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


def widen_within_screen(window: QWidget, wanted_width: int) -> None:
    """`window` widened to `wanted_width`, or as much as the screen allows, around where it
    stood and moved back inside the screen: widened in place, an 8-run comparison opened in a
    1920 px screen's middle put its buttons 350 px past the right edge."""
    screen = window.screen()
    if screen is None:
        window.resize(wanted_width, window.height())
        return
    room = screen.availableGeometry()
    before = window.frameGeometry()
    border = before.width() - window.width()  # the window manager's, if it has one
    width = max(window.width(), min(wanted_width, int(room.width() * WIDTH_SHARE)))
    window.resize(width, window.height())
    if not window.isVisible():
        return  # placed when shown: a dialog over its parent, within the screen (Qt's own)
    outer = width + border
    left = max(room.left(), min(before.center().x() - outer // 2, room.right() + 1 - outer))
    window.move(QPoint(left, before.top()))


def scrolling_down(content: QWidget) -> QScrollArea:
    """`content` in a frameless area that scrolls down, never sideways: a dialog's fields that
    are taller than an 800x600 console, with its buttons kept in sight below them."""
    area = QScrollArea()
    area.setWidget(content)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    bar = area.verticalScrollBar().sizeHint().width()
    area.setMinimumWidth(content.minimumSizeHint().width() + bar)
    return area


def resize_showing_all(window: QWidget, area: QScrollArea, width: int | None = None) -> None:
    """`window` as tall as it needs to show all of `area`'s content unscrolled, as far as the
    screen allows (then the area scrolls); `width` or the window's own wish."""
    content = area.widget()
    extra = content.sizeHint().height() - area.sizeHint().height() if content else 0
    wanted = window.sizeHint()
    resize_within_screen(window, QSize(width or wanted.width(), wanted.height() + extra))

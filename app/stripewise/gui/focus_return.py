"""The keyboard back to the window underneath when one of ours closes, on a display without a
window manager.

A window manager activates the next window when a dialog or the manual closes. `--remote`'s
Xvnc and a bare X server have none: no window is active afterwards, and every key goes nowhere
until the admin clicks (through a VNC viewer, easily missed). Here, when the window that held
the keyboard is closed or hidden and a moment later no window has it, the window it belonged
to (a dialog's or the manual's parent) is activated, or else the newest visible window. A
window of ours closing while another program has the keyboard held none of it, and changes
nothing.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QWindow
from PySide6.QtWidgets import QApplication, QWidget
from shiboken6 import isValid

SETTLE_MS = 50  # a window manager's own activation arrives within this
_WATCHED = "stripewiseFocusReturn"  # a property: the window is watched already


class FocusReturn(QObject):
    """Watches each window that gets the keyboard; Qt drops the focus without a signal when
    the window holding it hides, so the window's own `visibleChanged` is what tells."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self._app = app
        app.focusWindowChanged.connect(self._watch)

    def _watch(self, window: QWindow | None) -> None:
        if window is None or window.property(_WATCHED):
            return
        window.setProperty(_WATCHED, True)
        window.visibleChanged.connect(lambda visible: self._on_visible(window, visible))

    def _on_visible(self, window: QWindow, visible: bool) -> None:
        # only the window holding the keyboard as it hides: with another program's window
        # active, none of ours is Qt's focus window, and nothing is taken from it
        if visible or not isValid(window) or self._app.focusWindow() is not window:
            return
        owner = self._owner(window)  # found now: `window` may be deleted by then
        QTimer.singleShot(SETTLE_MS, lambda: self._give_back(owner))

    def _owner(self, window: QWindow) -> QWidget | None:
        """The window `window`'s widget belongs to (a dialog's or the manual's parent)."""
        for widget in self._app.topLevelWidgets():
            if widget.windowHandle() is window:
                parent = widget.parentWidget()
                return parent.window() if parent is not None else None
        return None

    def _give_back(self, owner: QWidget | None) -> None:
        if self._app.focusWindow() is not None:
            return  # a window manager, or the admin, chose already
        if owner is None or not isValid(owner) or not owner.isVisible():
            shown = [w for w in self._app.topLevelWindows() if isValid(w) and w.isVisible()]
            if shown:
                shown[-1].requestActivate()
            return
        owner.activateWindow()

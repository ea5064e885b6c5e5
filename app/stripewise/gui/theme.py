"""Light and dark palettes that follow the system's colour scheme.

Fusion is used everywhere so both palettes render the same on every desktop; the scheme comes
from Qt's style hints (desktop portal, GNOME or KDE settings) unless the user forces one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

if TYPE_CHECKING:
    import pyqtgraph as pg

_DARK = {
    QPalette.ColorRole.Window: "#2b2d31",
    QPalette.ColorRole.WindowText: "#e6e6e6",
    QPalette.ColorRole.Base: "#1f2023",
    QPalette.ColorRole.AlternateBase: "#292b2f",
    QPalette.ColorRole.ToolTipBase: "#3a3d42",
    QPalette.ColorRole.ToolTipText: "#f0f0f0",
    QPalette.ColorRole.PlaceholderText: "#8a8d93",
    QPalette.ColorRole.Text: "#e6e6e6",
    QPalette.ColorRole.Button: "#33363b",
    QPalette.ColorRole.ButtonText: "#e6e6e6",
    QPalette.ColorRole.BrightText: "#ff6b6b",
    QPalette.ColorRole.Link: "#6cb6ff",
    QPalette.ColorRole.Highlight: "#2f7dd1",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.Light: "#45484e",
    QPalette.ColorRole.Midlight: "#3a3d42",
    QPalette.ColorRole.Mid: "#2f3136",
    QPalette.ColorRole.Dark: "#18191b",
    QPalette.ColorRole.Shadow: "#0d0d0e",
}
_DARK_DISABLED = {
    QPalette.ColorRole.WindowText: "#7b7e84",
    QPalette.ColorRole.Text: "#7b7e84",
    QPalette.ColorRole.ButtonText: "#7b7e84",
    QPalette.ColorRole.Highlight: "#3c4047",
}


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in _DARK.items():
        palette.setColor(role, QColor(colour))
    for role, colour in _DARK_DISABLED.items():
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(colour))
    return palette


def system_color_scheme() -> Qt.ColorScheme:
    return QGuiApplication.styleHints().colorScheme()


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


class ThemeController:
    """Applies `preference` ("system", "light" or "dark") now and whenever the system changes."""

    def __init__(
        self,
        app: QApplication,
        preference: str = "system",
        system_scheme: Callable[[], Qt.ColorScheme] = system_color_scheme,
    ) -> None:
        self._app = app
        self.preference = preference
        self._system_scheme = system_scheme
        app.setStyle("Fusion")
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_system_change)
        self.apply()

    @property
    def dark(self) -> bool:
        if self.preference == "system":
            return self._system_scheme() == Qt.ColorScheme.Dark
        return self.preference == "dark"

    def apply(self) -> None:
        style = self._app.style()
        self._app.setPalette(dark_palette() if self.dark else style.standardPalette())

    def detach(self) -> None:
        """Stop following the desktop (the palette stays as it is)."""
        QGuiApplication.styleHints().colorSchemeChanged.disconnect(self._on_system_change)

    def _on_system_change(self, _scheme: Qt.ColorScheme) -> None:
        if self.preference == "system":
            self.apply()


def style_axes(plots: Iterable[pg.PlotItem], palette: QPalette) -> None:
    """Axes, their ticks and labels in the palette's text colours (light and dark alike)."""
    text = palette.color(QPalette.ColorRole.Text)
    line = palette.color(QPalette.ColorRole.PlaceholderText)
    for plot in plots:
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            axis.setPen(line)
            axis.setTextPen(text)
            if axis.labelText:
                axis.setLabel(axis.labelText, color=text.name())

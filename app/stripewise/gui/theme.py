"""Light and dark palettes that follow the system's colour scheme.

Fusion is used everywhere so both palettes render the same on every desktop; the scheme comes
from Qt's style hints (desktop portal, GNOME or KDE settings) unless the user forces one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QApplication,
    QProxyStyle,
    QStyle,
    QStyleFactory,
    QStyleOption,
    QWidget,
)

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


_INDICATORS = (
    QStyle.PrimitiveElement.PE_IndicatorCheckBox,
    QStyle.PrimitiveElement.PE_IndicatorItemViewItemCheck,
    QStyle.PrimitiveElement.PE_IndicatorRadioButton,
)


class OutlinedIndicators(QProxyStyle):
    """Fusion, its check boxes and radio buttons outlined so a dark palette shows them: Fusion
    draws their edge a shade darker than the window, which on a dark one is the base's own
    colour (the Tuning page's device boxes were invisible, 1:1 against the list)."""

    def drawPrimitive(
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawPrimitive(element, option, painter, widget)
        if element not in _INDICATORS or not is_dark(option.palette):
            return
        rect = QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        edge = option.palette.color(QPalette.ColorRole.PlaceholderText)
        painter.setPen(QPen(edge, 1.0))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if element is QStyle.PrimitiveElement.PE_IndicatorRadioButton:
            painter.drawEllipse(rect)
        else:
            painter.drawRoundedRect(rect, 1.5, 1.5)
        painter.restore()


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
        app.setStyle(OutlinedIndicators(QStyleFactory.create("Fusion")))  # the app owns it
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

"""Line icons drawn in the palette's text colour, so they read on light and dark themes alike."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

from stripewise.resources import resource

_SIZES = (22, 44)  # the navigation size and its 2x for HiDPI


def _render(svg: bytes, colour: QColor, size: int) -> QPixmap:
    coloured = svg.replace(b"currentColor", colour.name().encode())
    renderer = QSvgRenderer(QByteArray(coloured))
    pixmap = QPixmap(QSize(size, size))
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    renderer.render(painter)
    painter.end()
    return pixmap


def line_icon(name: str, palette: QPalette) -> QIcon:
    """Icon `resources/icons/<name>.svg`, normal in WindowText, selected in HighlightedText."""
    svg = resource("icons", f"{name}.svg").read_bytes()
    normal = palette.color(QPalette.ColorRole.WindowText)
    selected = palette.color(QPalette.ColorRole.HighlightedText)
    disabled = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText)
    icon = QIcon()
    for size in _SIZES:
        icon.addPixmap(_render(svg, normal, size), QIcon.Mode.Normal)
        icon.addPixmap(_render(svg, selected, size), QIcon.Mode.Selected)
        icon.addPixmap(_render(svg, disabled, size), QIcon.Mode.Disabled)
    return icon

"""Plots saved as PNG or SVG: any widget, rendered as it is on screen.

SVG goes through Qt's own QSvgGenerator: pyqtgraph's SVG exporter cannot parse the polylines
Qt 6 writes, so its scene menu's Export... is taken away from our plots (see `without_export`).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QFileDialog, QGraphicsView, QWidget

from stripewise.gui import file_places
from stripewise.gui.help_dialogs import SAVE_PLOT

FILTERS = "PNG image (*.png);;SVG drawing (*.svg)"


def save_widget(widget: QWidget, path: Path, title: str = "Stripewise plot") -> None:
    """PNG at the widget's size, or SVG, by the file's suffix; OSError when not written."""
    if path.suffix.lower() == ".svg":
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(widget.size())
        generator.setViewBox(widget.rect())
        generator.setTitle(title)
        painter = QPainter(generator)
        try:
            if isinstance(widget, QGraphicsView):
                widget.render(painter)  # the scene as vectors
            else:  # a page of plots: each child draws itself
                QWidget.render(widget, painter, QPoint())
        finally:
            painter.end()
        if not path.exists():
            raise OSError(f"could not write {path}")
        return
    if not widget.grab().save(str(path)):
        raise OSError(f"could not write {path}")


def ask_path(parent: QWidget, suggested: str, caption: str = SAVE_PLOT) -> Path | None:
    """A .png or .svg path from a save dialog (the suffix follows the chosen type); the
    caption says what will be saved."""
    path, chosen = QFileDialog.getSaveFileName(
        parent, caption, file_places.suggested(suggested), FILTERS
    )
    file_places.chosen(path)
    if not path:
        return None
    result = Path(path)
    if result.suffix.lower() not in (".png", ".svg"):
        result = result.with_suffix(".svg" if "svg" in chosen.lower() else ".png")
    return result


def without_export(plot_widget: QWidget) -> None:
    """Drop pyqtgraph's scene menu (its Export... fails on SVG under Qt 6); Save Plot... does it."""
    scene = getattr(plot_widget, "scene", None)
    if callable(scene):
        scene().contextMenu = []

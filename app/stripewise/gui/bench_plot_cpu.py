"""The stacked CPU areas of the live plots, drawn as an image with one column per pixel, and
their legend swatches.

Filling polygons between peak-downsampled curves takes ~25 ms per band in the raster engine;
an image of the visible columns, kept between paints, costs well under a millisecond.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QImage, QPainter


class StackedArea(pg.GraphicsObject):  # type: ignore[misc]  # pyqtgraph has no type stubs: its classes are Any
    """Stacked CPU bands painted as an image with one column per pixel of the view; each
    column shows the mean of the samples under it (or holds the last one when zoomed in past
    the samples). Columns are kept between paints: while the view stands still, a refresh
    only recomputes the columns its new samples fall in."""

    def __init__(self, curves: Sequence[pg.PlotDataItem]) -> None:
        super().__init__()
        self._curves = curves  # the band tops; a band hidden from the legend is not drawn
        self._t = np.empty(0)
        self._tops: tuple[np.ndarray, ...] = ()
        self._sums: tuple[np.ndarray, ...] = ()  # running sums of the tops
        self._colours = [QColor()] * len(curves)
        self._key: tuple[Any, ...] | None = None  # what the cached columns were drawn for
        self._pixels = np.zeros((0, 0), dtype=np.uint32)
        self._done = 0  # samples already folded into the cached columns
        self.setZValue(-5)  # over the phase bands, under the curves

    def set_colours(self, colours: Sequence[QColor]) -> None:
        """Colours per band, already premultiplied by their alpha (the image's format)."""
        self._colours = list(colours)
        self.update()

    def set_data(
        self, t: np.ndarray, tops: Sequence[np.ndarray], sums: Sequence[np.ndarray]
    ) -> None:
        if len(t) < self._done:  # a new run: nothing cached holds
            self._key = None
        self._t, self._tops, self._sums = t, tuple(tops), tuple(sums)
        self.update()

    def viewTransformChanged(self) -> None:
        super().viewTransformChanged()
        self.prepareGeometryChange()

    def boundingRect(self) -> QRectF:
        view = self.viewRect()
        return QRectF() if view is None else QRectF(view.left(), 0.0, view.width(), 100.0)

    def paint(self, painter: QPainter, *_args: Any) -> None:
        view = self.viewRect()
        if len(self._t) < 2 or view is None:
            return
        target = painter.transform().mapRect(QRectF(view.left(), 0.0, view.width(), 100.0))
        width, height = round(target.width()), round(target.height())
        if width < 1 or height < 1:
            return
        lut = self._lut()
        key = (view.left(), view.right(), width, height, tuple(lut))
        if key != self._key:
            self._key, self._done = key, 0
            self._pixels = np.zeros((height, width), dtype=np.uint32)
        self._update_columns(view.left(), view.width() / width, lut)
        image = QImage(
            self._pixels.data, width, height, 4 * width, QImage.Format.Format_ARGB32_Premultiplied
        )
        painter.save()
        painter.resetTransform()  # an unscaled blit is the fast path
        painter.drawImage(QPointF(round(target.left()), round(target.top())), image)
        painter.restore()

    def _lut(self) -> np.ndarray:
        """Pixel value per band index; the last entry is above the stack (transparent)."""
        lut = np.zeros(len(self._curves) + 1, dtype=np.uint32)
        for index, (colour, curve) in enumerate(zip(self._colours, self._curves, strict=True)):
            lut[index] = colour.rgba() if curve.isVisible() else 0
        return lut

    def _update_columns(self, left: float, per_px: float, lut: np.ndarray) -> None:
        """Recompute the columns from the one holding the last sample seen so far (it may have
        gained samples) to the one holding the newest sample."""
        t, (height, width) = self._t, self._pixels.shape
        since = float(t[self._done - 1] if self._done else t[0])
        first = max(0, min(width, math.floor((since - left) / per_px)))
        last = max(0, min(width, math.floor((float(t[-1]) - left) / per_px) + 1))
        self._done = len(t)
        if last <= first:
            return
        edges = np.searchsorted(t, left + per_px * np.arange(first, last + 1))
        counts = np.diff(edges)
        held = np.clip(edges[:-1] - 1, 0, len(t) - 1)
        before = np.maximum(edges - 1, 0)  # sums[i] covers samples 0..i inclusive
        rows = np.arange(height, 0, -1, dtype=np.int32)[:, None]  # pixel rows up, top first
        band = np.zeros((height, last - first), dtype=np.uint8)  # tops below each pixel
        for top, sums in zip(self._tops, self._sums, strict=True):
            upto = np.where(edges > 0, sums[before], 0.0)
            mean = np.where(counts > 0, np.diff(upto) / np.maximum(counts, 1), top[held])
            band += rows > np.rint(mean * (height / 100.0)).astype(np.int32)
        self._pixels[:, first:last] = lut[band]


class SwatchSample(pg.ItemSample):  # type: ignore[misc]  # pyqtgraph has no type stubs: its classes are Any
    """Legend entry of a stacked CPU band: a filled swatch rather than a line."""

    def paint(self, painter: QPainter, *args: Any) -> None:
        brush = self.item.opts.get("fillBrush")
        if brush is None or not self.item.isVisible():
            super().paint(painter, *args)  # the crossed-out eye of a hidden entry
            return
        painter.setPen(pg.mkPen(self.item.opts["pen"]))
        painter.setBrush(pg.mkBrush(brush))
        painter.drawRect(QRectF(3, 4, 14, 13))


def premultiplied(colour: QColor) -> QColor:
    """The ARGB32 pixel value of `colour` with its RGB scaled by alpha, for an image."""
    alpha = colour.alphaF()
    return QColor.fromRgbF(
        colour.redF() * alpha, colour.greenF() * alpha, colour.blueF() * alpha, alpha
    )

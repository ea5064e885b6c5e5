"""Everything behind a live plot's data: the phase bands, the horizontal grid and the phase
names, painted as one item in device pixels with opaque 1 px lines (translucent or wider lines
leave the raster engine's fast path)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF, QRectF
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPalette

from stripewise.gui.bench_plot_data import Phase
from stripewise.model.bench import BONNIE_NAMES
from stripewise.model.bench import Phase as BenchPhase

LABEL_PAD_PX = 4.0
_GRID_MIX = 0.13  # share of the text colour in the base colour, for opaque thin lines
_EDGE_MIX = 0.35
_TINT_MIX = 0.05  # every other phase band


class Backdrop(pg.GraphicsObject):  # type: ignore[misc]  # pyqtgraph has no type stubs: its classes are Any
    """Everything behind one plot's data, in one item: the phase bands (every other one
    tinted, a line where each starts), the horizontal grid and, on the top plot, the phase
    names. A LinearRegionItem per phase and plot costs ~0.25 ms a frame each in Python paint
    and bounds calls, and pyqtgraph's grid makes each axis a translucent plot-sized layer."""

    def __init__(self, phases: list[Phase], axis: pg.AxisItem, labelled: bool) -> None:
        super().__init__()
        self._phases = phases  # RunData.phases, which grows as phases begin
        self._axis = axis  # the grid lines sit at its major ticks
        self._labelled = labelled
        self.end = 0.0  # the newest sample: the right edge of the running phase's band
        self.grid_values: Sequence[float] | None = None  # fixed grid lines (else the axis')
        self.tint, self.edge, self.grid = QColor(), QColor(), QColor()
        self.ink, self.backdrop = QColor(), QColor()
        self.font = QFont()
        # layouts kept between paints, keyed on what they depend on: most paints only differ
        # in the running band's right edge
        self._grid_cache: tuple[Any, Sequence[float]] = (None, ())
        self._labels_cache: tuple[Any, list[tuple[str, QRectF]]] = (None, [])
        self.setZValue(-10)  # behind everything the plot draws

    def viewTransformChanged(self) -> None:  # pyqtgraph: the view moved or was resized
        super().viewTransformChanged()  # drops the cached viewRect()
        self.prepareGeometryChange()

    def boundingRect(self) -> QRectF:
        view = self.viewRect()
        return QRectF() if view is None else view

    def spans(self) -> list[tuple[float, float]]:
        starts = [phase.start for phase in self._phases]
        ends = [*starts[1:], max(self.end, starts[-1])] if starts else []
        return list(zip(starts, ends, strict=True))

    def paint(self, painter: QPainter, *_args: Any) -> None:
        view = self.viewRect()
        if view is None:
            return
        to_px = painter.transform()  # scale and translation only, inside a ViewBox
        area = to_px.mapRect(view)
        sx, dx, sy, dy = to_px.m11(), to_px.dx(), to_px.m22(), to_px.dy()
        spans = [(sx * start + dx, sx * end + dx) for start, end in self.spans()]
        rows = [sy * value + dy for value in self._grid_values(view, area)]
        painter.save()
        painter.resetTransform()  # device pixels: crisp 1 px lines, simple text layout
        for index, (left, right) in enumerate(spans):
            if index % 2:  # opaque: a translucent fill costs ~10x more
                painter.fillRect(QRectF(left, area.top(), right - left, area.height()), self.tint)
        painter.setPen(self.grid)  # a colour: a cosmetic 1 px pen
        painter.drawLines([QLineF(area.left(), y, area.right(), y) for y in rows])
        painter.setPen(self.edge)
        painter.drawLines([QLineF(left, area.top(), left, area.bottom()) for left, _ in spans])
        if self._labelled:
            self._paint_labels(painter, spans, area)
        painter.restore()

    def _grid_values(self, view: QRectF, area: QRectF) -> Sequence[float]:
        """The axis' major ticks (or the fixed grid_values)."""
        if self.grid_values is not None:
            return self.grid_values
        key = (view.top(), view.bottom(), area.height())
        if key != self._grid_cache[0]:
            levels = self._axis.tickValues(*key)
            self._grid_cache = (key, levels[0][1] if levels else ())
        return self._grid_cache[1]

    def _paint_labels(
        self, painter: QPainter, spans: list[tuple[float, float]], area: QRectF
    ) -> None:
        painter.setFont(self.font)
        baseline = QFontMetricsF(self.font).ascent()
        for text, box in self._label_layout(spans, area):
            painter.fillRect(box, self.backdrop)  # readable over the curves
            painter.setPen(self.ink)
            painter.drawText(QPointF(box.left() + LABEL_PAD_PX, box.top() + baseline), text)

    def _label_layout(
        self, spans: list[tuple[float, float]], area: QRectF
    ) -> list[tuple[str, QRectF]]:
        """Names alternate between two rows, so each may run over the next band too, up to
        where the band after that starts (or the edge of the view). A name that does not fit
        gives way to the longest shorter one that does, or to none: a name cut to "Sequ..."
        says nothing. A band that starts left of the view has its name at the view's left
        edge."""
        names = [(phase.label, *phase.shorter) for phase in self._phases]
        lefts = [left for left, _right in spans]
        key = (tuple(lefts), area.left(), area.top(), area.right(), self.font.key(), *names)
        if key == self._labels_cache[0]:
            return self._labels_cache[1]
        metrics = QFontMetricsF(self.font)
        layout = []
        for index, (choices, (start, end)) in enumerate(zip(names, spans, strict=True)):
            if end <= area.left():
                continue  # scrolled out of view
            left = max(start, area.left())
            limit = lefts[index + 2] if index + 2 < len(lefts) else area.right()
            room = min(limit, area.right()) - left - 2 * LABEL_PAD_PX
            text = next((c for c in choices if metrics.horizontalAdvance(c) <= room), "")
            if text:
                top = area.top() + 2 + (index % 2) * (metrics.height() + 2)
                width = metrics.horizontalAdvance(text) + 2 * LABEL_PAD_PX
                layout.append((text, QRectF(left + 1, top, width, metrics.height())))
        self._labels_cache = (key, layout)
        return layout

    def drawn_labels(self) -> list[str]:
        """The names the last paint laid out, left to right."""
        return [text for text, _box in self._labels_cache[1]]


# a phase's name in a band too narrow for bonnie++'s: the form's words, then fio's
_SHORT_NAMES = {
    BenchPhase.SEQ_WRITE: ("Sequential write", "write"),
    BenchPhase.REWRITE: ("Rewrite", "rewrite"),
    BenchPhase.SEQ_READ: ("Sequential read", "read"),
    BenchPhase.RANDOM_READ: ("Random seeks", "seeks"),
    BenchPhase.RANDOM_WRITE: ("Random writes", "rnd write"),
    BenchPhase.MIXED: ("Mixed 70/30", "mixed"),
}


def band_names(phase: BenchPhase, repetition: int) -> tuple[str, ...]:
    """A pass's names for its band, longest first: "Sequential Output, Block, pass 1",
    "Sequential write, pass 1", "write 1"."""
    long, short = _SHORT_NAMES[phase]
    return (
        f"{BONNIE_NAMES[phase]}, pass {repetition}",
        f"{long}, pass {repetition}",
        f"{short} {repetition}",
    )


def style_backdrops(items: Sequence[Backdrop], palette: QPalette, font: QFont) -> None:
    """Band tint, lines and the names' ink from `palette`; the names a little smaller than
    `font`."""
    base, text = palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text)
    tint = mix(base, text, _TINT_MIX)
    backdrop = QColor(base)
    backdrop.setAlpha(160)
    font = QFont(font)
    font.setPointSizeF(font.pointSizeF() * 0.9)
    for item in items:
        item.tint, item.edge, item.ink = tint, mix(base, text, _EDGE_MIX), text
        item.grid = mix(base, text, _GRID_MIX)
        item.backdrop, item.font = backdrop, font
        item.update()


def mix(base: QColor, ink: QColor, share: float) -> QColor:
    """`share` of `ink` over `base`, as an opaque colour."""
    return QColor.fromRgbF(
        base.redF() + (ink.redF() - base.redF()) * share,
        base.greenF() + (ink.greenF() - base.greenF()) * share,
        base.blueF() + (ink.blueF() - base.blueF()) * share,
    )

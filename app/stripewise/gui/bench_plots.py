"""Live plots of a benchmark run: throughput, IOPS and CPU against time, with a band per phase.

Samples are appended to growable numpy columns (cheap, nothing is drawn); `refresh()` hands
views of those columns to pyqtgraph, which clips to the visible X range and peak-downsamples to
one min/max pair per pixel column, so a 2-hour run at 10 Hz redraws in well under 10 ms
(`python -m bench --only plots`).

The raster engine's costs decide the rest: lines wider than 1 px and translucent lines leave
its fast cosmetic-line path (40 ms for one 1.5 px curve of 1,800 points), and filling polygons
between peak-downsampled curves takes ~25 ms per band. So every line is 1 px and opaque (grid,
band tint and edges are mixed into the base colour beforehand), the stacked CPU areas are an
image with one column per pixel, and the phase bands, grid and phase names of a plot are one
item painted in one go. pyqtgraph's auto range is replaced too (see `_apply_ranges`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPalette
from PySide6.QtWidgets import QGraphicsItem, QVBoxLayout, QWidget

from stripewise.gui.plot_export import without_export
from stripewise.gui.theme import is_dark
from stripewise.model.units import MIB_PER_MB

# Columns of the sample buffer; the CPU ones hold the cumulative top of each stacked band.
_COLUMNS = (
    "t",
    "engine_read",
    "engine_write",
    "disk_read",
    "disk_write",
    "read_iops",
    "write_iops",
    "cpu_user",
    "cpu_system",
    "cpu_iowait",
    # running sums of the three CPU tops: the stacked areas' column means come from these
    "cpu_user_sum",
    "cpu_system_sum",
    "cpu_iowait_sum",
)
_THROUGHPUT = ("engine_read", "engine_write", "disk_read", "disk_write")
_IOPS = ("read_iops", "write_iops")
_CPU = ("cpu_user", "cpu_system", "cpu_iowait")
SERIES = (*_THROUGHPUT, *_IOPS, *_CPU)  # the names series() knows

# (light, dark): the dark variants are lighter so thin lines still read on a dark base.
_READ = ("#2f74c8", "#62a6f0")
_WRITE = ("#d9641e", "#f28f4e")
_CPU_COLOURS = {
    "cpu_user": ("#3a9a60", "#52b87a"),
    "cpu_system": ("#c9403c", "#e0625e"),
    "cpu_iowait": ("#8a68bf", "#a88ad8"),
}
_FILL_ALPHA = (110, 130)  # stacked CPU areas over a (light, dark) base
_LABELS = {
    "engine_read": "engine read",
    "engine_write": "engine write",
    "disk_read": "disk read",
    "disk_write": "disk write",
    "read_iops": "read IOPS",
    "write_iops": "write IOPS",
    "cpu_user": "user",
    "cpu_system": "system",
    "cpu_iowait": "iowait",
}
_AXIS_WIDTH = 62  # the same for all three plots so their X axes line up
_LABEL_PAD_PX = 4.0
_CPU_RANGE = (0.0, 100.0)
_CPU_TICKS = (0, 25, 50, 75, 100)
_GRID_MIX = 0.13  # share of the text colour in the base colour, for opaque thin lines
_EDGE_MIX = 0.35
_TINT_MIX = 0.05  # every other phase band
_HEADROOM = 0.03  # following a run, the time axis reaches this share past the newest sample
_MIN_SPAN_S = 10.0
_Y_MARGIN = 1.05
_NICE_STEPS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


class _Columns:
    """Named float64 columns that grow by doubling: O(1) amortised appends, and a column is a
    contiguous view of the live data, never a copy."""

    def __init__(self, names: Sequence[str], capacity: int = 1024) -> None:
        self._index = {name: i for i, name in enumerate(names)}
        self._data = np.empty((len(names), capacity))
        self.size = 0

    def reserve(self, extra: int) -> None:
        needed = self.size + extra
        capacity = self._data.shape[1]
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        grown = np.empty((self._data.shape[0], capacity))
        grown[:, : self.size] = self._data[:, : self.size]
        self._data = grown

    def append(self, row: Sequence[float]) -> None:
        self.reserve(1)
        self._data[:, self.size] = row
        self.size += 1

    def column(self, name: str) -> np.ndarray:
        return self._data[self._index[name], : self.size]

    def last(self, name: str) -> float:
        return float(self._data[self._index[name], self.size - 1])

    def clear(self) -> None:
        self.size = 0


class _StackedArea(pg.GraphicsObject):
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


@dataclass
class _Phase:
    label: str
    start: float
    has_samples: bool = False


class _Backdrop(pg.GraphicsObject):
    """Everything behind one plot's data, in one item: the phase bands (every other one
    tinted, a line where each starts), the horizontal grid and, on the top plot, the phase
    names. A LinearRegionItem per phase and plot costs ~0.25 ms a frame each in Python paint
    and bounds calls, and pyqtgraph's grid makes each axis a translucent plot-sized layer."""

    def __init__(self, phases: list[_Phase], axis: pg.AxisItem, labelled: bool) -> None:
        super().__init__()
        self._phases = phases  # shared with LivePlots, which appends to it
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
            painter.drawText(QPointF(box.left() + _LABEL_PAD_PX, box.top() + baseline), text)

    def _label_layout(
        self, spans: list[tuple[float, float]], area: QRectF
    ) -> list[tuple[str, QRectF]]:
        """Names alternate between two rows, so each may run over the next band too; it is
        elided where the band after that starts (or at the edge of the view). A band that
        starts left of the view has its name at the view's left edge."""
        labels = [phase.label for phase in self._phases]
        lefts = [left for left, _right in spans]
        key = (tuple(lefts), area.left(), area.top(), area.right(), self.font.key(), *labels)
        if key == self._labels_cache[0]:
            return self._labels_cache[1]
        metrics = QFontMetricsF(self.font)
        layout = []
        for index, (label, (start, end)) in enumerate(zip(labels, spans, strict=True)):
            if end <= area.left():
                continue  # scrolled out of view
            left = max(start, area.left())
            limit = lefts[index + 2] if index + 2 < len(lefts) else area.right()
            room = min(limit, area.right()) - left - 2 * _LABEL_PAD_PX
            text = metrics.elidedText(label, Qt.TextElideMode.ElideRight, max(0.0, room))
            if text:
                top = area.top() + 2 + (index % 2) * (metrics.height() + 2)
                width = metrics.horizontalAdvance(text) + 2 * _LABEL_PAD_PX
                layout.append((text, QRectF(left + 1, top, width, metrics.height())))
        self._labels_cache = (key, layout)
        return layout


class _SwatchSample(pg.ItemSample):
    """Legend entry of a stacked CPU band: a filled swatch rather than a line."""

    def paint(self, painter: QPainter, *args: Any) -> None:
        brush = self.item.opts.get("fillBrush")
        if brush is None or not self.item.isVisible():
            super().paint(painter, *args)  # the crossed-out eye of a hidden entry
            return
        painter.setPen(pg.mkPen(self.item.opts["pen"]))
        painter.setBrush(pg.mkBrush(brush))
        painter.drawRect(QRectF(3, 4, 14, 13))


def _number(value: Any) -> float:
    return 0.0 if value is None else float(value)


def _disk_sums(disks: Any) -> tuple[float, float]:
    """Kernel counters summed over the disks; NaN (no line) when the sample has none."""
    if not disks:
        return math.nan, math.nan
    read = sum(_number(d.get("read_mb_s")) for d in disks.values())
    write = sum(_number(d.get("write_mb_s")) for d in disks.values())
    return read, write


def _mix(base: QColor, ink: QColor, share: float) -> QColor:
    """`share` of `ink` over `base`, as an opaque colour."""
    return QColor.fromRgbF(
        base.redF() + (ink.redF() - base.redF()) * share,
        base.greenF() + (ink.greenF() - base.greenF()) * share,
        base.blueF() + (ink.blueF() - base.blueF()) * share,
    )


class LivePlots(QWidget):
    """Three stacked plots sharing a linked time axis, fed with the helper's `sample` events."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._columns = _Columns(_COLUMNS)
        self._mib = False
        self._dirty = False
        self._t_offset = 0.0  # added to t_s once the sampler's clock was seen to restart
        self._last_cpu = (0.0, 0.0, 0.0)
        self._cpu_sums = (0.0, 0.0, 0.0)
        self._phases: list[_Phase] = []
        self._curves: dict[str, pg.PlotDataItem] = {}
        self._follow = True  # the time axis follows the run until the user zooms or pans
        self._peaks = dict.fromkeys((*_THROUGHPUT, *_IOPS), math.nan)  # running maxima
        self._peaks_upto = 0
        self._view = pg.GraphicsLayoutWidget()
        without_export(self._view)  # Save Plot... on the page writes PNG or SVG
        self._view.ci.layout.setContentsMargins(2, 2, 10, 2)
        self._view.ci.layout.setVerticalSpacing(0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._view)
        self._build_plots()
        self._build_curves()
        self._area = _StackedArea([self._curves[name] for name in _CPU])
        self.cpu_plot.addItem(self._area, ignoreBounds=True)
        self._build_legends()
        self._backdrops = [
            _Backdrop(self._phases, plot.getAxis("left"), plot is self.throughput_plot)
            for plot in self._plots()
        ]
        self._backdrops[2].grid_values = _CPU_TICKS
        for plot, backdrop in zip(self._plots(), self._backdrops, strict=True):
            plot.addItem(backdrop, ignoreBounds=True)
        self.throughput_plot.getViewBox().sigXRangeChanged.connect(self._on_x_range)
        self._apply_palette()
        self.auto_range()

    # --- construction -------------------------------------------------------------------------
    def _build_plots(self) -> None:
        # rows: 0 throughput legend, 1 throughput, 2 IOPS, 3 CPU legend, 4 CPU
        self.throughput_plot = self._add_plot(1, "MB/s")
        self.iops_plot = self._add_plot(2, "IOPS")
        self.cpu_plot = self._add_plot(4, "CPU %")
        # the band tops are means per pixel column, like the areas under them: stacked peaks
        # would not add up, and a plain line is half the strokes of a min/max zigzag
        self.cpu_plot.setDownsampling(auto=True, mode="mean")
        grid = self._view.ci.layout
        for row, stretch in ((1, 4), (2, 3), (4, 4)):  # the CPU plot carries the time axis
            grid.setRowStretchFactor(row, stretch)
        grid.setRowSpacing(1, 12)  # room for the "0" above and the IOPS plot's top value
        for plot in (self.iops_plot, self.cpu_plot):
            plot.setXLink(self.throughput_plot)
        self.cpu_plot.setYRange(*_CPU_RANGE, padding=0)
        self.cpu_plot.getAxis("left").setTicks([[(v, f"{v}") for v in _CPU_TICKS]])
        self.cpu_plot.showAxis("bottom")
        self.cpu_plot.setLabel("bottom", "time (s)")

    def _add_plot(self, row: int, unit: str) -> pg.PlotItem:
        plot: pg.PlotItem = self._view.addPlot(row=row, col=0)
        plot.setMenuEnabled(False, enableViewBoxMenu=True)  # no FFT/log/downsampling toggles
        plot.setMouseEnabled(x=True, y=False)  # zoom and pan in time only
        plot.setClipToView(True)
        plot.setDownsampling(auto=True, mode="peak")
        plot.hideAxis("bottom")  # the shared time axis is shown once, under the CPU plot
        left = plot.getAxis("left")
        left.setWidth(_AXIS_WIDTH)
        left.setStyle(maxTickLevel=0)  # labels where _Backdrop draws the grid
        for side in ("left", "bottom"):
            # pyqtgraph 0.14 computes the SI scale once more as it is disabled (x1000 for the
            # 0..1 range before any data) and then keeps it: no enable range makes it 1.
            plot.getAxis(side).setSIPrefixEnableRanges(())
            plot.getAxis(side).enableAutoSIPrefix(False)
        plot.setLabel("left", unit)
        for side in ("left", "bottom"):  # repainted under every curve change otherwise
            plot.getAxis(side).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        plot.disableAutoRange()  # ranges are set here: see _apply_ranges
        plot.hideButtons()
        view = plot.getViewBox()
        view.sigRangeChangedManually.connect(self._on_manual_range)
        for action in view.menu.actions():  # its axis options would fight _apply_ranges
            action.setVisible(False)
        view.menu.addAction("Auto range", self.auto_range)
        return plot

    def _new_curve(self, plot: pg.PlotItem, name: str) -> None:
        curve = pg.PlotDataItem(
            name=_LABELS[name],
            antialias=False,
            clipToView=True,
            autoDownsample=True,
            downsampleMethod="mean" if name in _CPU else "peak",
            # one min/max pair per pixel column: bins wider than a pixel draw a moiré
            autoDownsampleFactor=1.0,
            # no clipping of huge values, and so no full-data min/max scan on every update
            dynamicRangeLimit=None,
        )
        plot.addItem(curve)
        self._curves[name] = curve

    def _build_curves(self) -> None:
        for name in _THROUGHPUT:
            self._new_curve(self.throughput_plot, name)
        for name in _IOPS:
            self._new_curve(self.iops_plot, name)
        for name in _CPU:
            self._new_curve(self.cpu_plot, name)
            self._curves[name].visibleChanged.connect(lambda: self._area.update())

    def _build_legends(self) -> None:
        """Legends get rows of their own above the throughput and CPU plots: inside a plot
        they would cover data. The IOPS plot uses the throughput colours (engine read/write)."""
        self._throughput_legend = pg.LegendItem(colCount=4, horSpacing=8, frame=False)
        self._view.addItem(self._throughput_legend, row=0, col=0)
        self._cpu_legend = pg.LegendItem(
            colCount=3, horSpacing=8, frame=False, sampleType=_SwatchSample
        )
        self._view.addItem(self._cpu_legend, row=3, col=0)
        for legend in (self._throughput_legend, self._cpu_legend):
            legend.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        for name in _THROUGHPUT:
            self._throughput_legend.addItem(self._curves[name], _LABELS[name])
        for name in _CPU:
            self._cpu_legend.addItem(self._curves[name], f"CPU {_LABELS[name]}")

    # --- data -------------------------------------------------------------------------------
    def clear(self) -> None:
        """Forget everything: a new run starts."""
        self._columns.clear()
        self._t_offset = 0.0
        self._last_cpu = (0.0, 0.0, 0.0)
        self._cpu_sums = (0.0, 0.0, 0.0)
        self._phases.clear()
        self._set_band_end(0.0)
        for curve in self._curves.values():
            curve.setData([], [])
        self._area.set_data(np.empty(0), (), ())
        self._peaks = dict.fromkeys(self._peaks, math.nan)
        self._peaks_upto = 0
        self._dirty = False
        self.auto_range()

    def begin_phase(self, label: str, t_s: float) -> None:
        """Start a phase band at `t_s`; it grows with the samples until the next phase starts."""
        start = t_s + self._t_offset
        if self._phases:
            start = max(start, self._phases[-1].start)
        self._phases.append(_Phase(label, start))
        self._set_band_end(start)

    def add_sample(self, sample: Mapping[str, Any]) -> None:
        """Append one sample; drawing waits for refresh()."""
        t = _number(sample.get("t_s")) + self._t_offset
        if self._columns.size and t < self._columns.last("t"):
            t = self._restart_clock(t - self._t_offset)
        disk_read, disk_write = _disk_sums(sample.get("disks"))
        cpu = self._cpu_stack(sample.get("cpu"))
        sums = self._cpu_sums
        self._cpu_sums = (sums[0] + cpu[0], sums[1] + cpu[1], sums[2] + cpu[2])
        self._columns.append(
            (
                t,
                _number(sample.get("engine_read_mb_s")),
                _number(sample.get("engine_write_mb_s")),
                disk_read,
                disk_write,
                _number(sample.get("engine_read_iops")),
                _number(sample.get("engine_write_iops")),
                *cpu,
                *self._cpu_sums,
            )
        )
        if self._phases:
            self._phases[-1].has_samples = True
        self._dirty = True

    def add_samples(self, samples: Sequence[Mapping[str, Any]]) -> None:
        self._columns.reserve(len(samples))
        for sample in samples:
            self.add_sample(sample)

    def _restart_clock(self, raw_t: float) -> float:
        """A t_s that runs backwards means the sampler's clock restarted with a new phase
        (one sampler per phase): continue after the last sample instead of drawing backwards."""
        last = self._columns.last("t")
        self._t_offset = last
        phase = self._phases[-1] if self._phases else None
        if phase is not None and not phase.has_samples:  # begun on the old clock: move it here
            phase.start = last
            self._set_band_end(last)
        return raw_t + last

    def _cpu_stack(self, cpu: Any) -> tuple[float, float, float]:
        """Cumulative tops of the user, system and iowait bands; a sample without a CPU split
        (too short an interval) repeats the previous one instead of dropping to zero."""
        if cpu:
            user = _number(cpu.get("user"))
            system = user + _number(cpu.get("system"))
            self._last_cpu = (user, system, system + _number(cpu.get("iowait")))
        return self._last_cpu

    @property
    def sample_count(self) -> int:
        return self._columns.size

    def series(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The x and y handed to the curve `name` at the last refresh, in display units (all
        points: pyqtgraph's clipping and downsampling happen after this)."""
        x, y = self._curves[name].getOriginalDataset()
        if x is None or y is None:
            return np.empty(0), np.empty(0)
        return np.asarray(x), np.asarray(y)

    def drawn_points(self, name: str) -> int:
        """How many points the curve `name` draws after clipping and downsampling."""
        x, _y = self._curves[name].curve.getData()
        return 0 if x is None else len(x)

    @property
    def phase_labels(self) -> list[str]:
        return [phase.label for phase in self._phases]

    def phase_spans(self) -> list[tuple[float, float]]:
        """(start, end) in seconds of each phase band as drawn."""
        return self._backdrops[0].spans()

    # --- drawing ------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Push the buffered samples to the curves (the page calls this on a timer)."""
        if not self._dirty:
            return
        self._dirty = False
        if self._columns.size == 0:
            return
        t = self._columns.column("t")
        for name, curve in self._curves.items():
            curve.setData(t, self._display(name))
        self._area.set_data(
            t,
            [self._columns.column(name) for name in _CPU],
            [self._columns.column(f"{name}_sum") for name in _CPU],
        )
        self._set_band_end(float(t[-1]))
        self._update_peaks()
        self._apply_ranges()

    def _display(self, name: str) -> np.ndarray:
        column = self._columns.column(name)
        if self._mib and name in _THROUGHPUT:
            return column * MIB_PER_MB
        return column

    def _set_band_end(self, end: float) -> None:
        for backdrop in self._backdrops:
            backdrop.end = end
            backdrop.update()

    def set_binary_units(self, mib: bool) -> None:
        """Show throughput in MiB/s (2^20 B/s) instead of MB/s (10^6 B/s)."""
        if mib == self._mib:
            return
        self._mib = mib
        self.throughput_plot.setLabel("left", self.throughput_unit)
        self._apply_axis_colours()
        self._dirty = True
        self.refresh()

    @property
    def binary_units(self) -> bool:
        return self._mib

    @property
    def throughput_unit(self) -> str:
        return "MiB/s" if self._mib else "MB/s"

    # --- ranges -------------------------------------------------------------------------------
    # pyqtgraph's auto range is off: it rescans every curve's bounds on every change, and its Y
    # range would jitter with every new peak. Following a run, the time axis steps ahead of the
    # data by a few percent, so most refreshes move no axis and recompute no downsampling; Y
    # tops are round numbers above the highest visible value.
    def auto_range(self) -> None:
        """Show the whole run and follow it again after the user zoomed or panned."""
        self._follow = True
        self._apply_ranges()

    @property
    def following(self) -> bool:
        return self._follow

    def _on_manual_range(self, *_args: Any) -> None:
        self._follow = False  # the user zoomed or panned: stay where they are

    def _on_x_range(self, *_args: Any) -> None:
        if not self._follow:
            self._fit_y()

    def _apply_ranges(self) -> None:
        if self._follow:
            self._follow_x()
        self._fit_y()

    def _follow_x(self) -> None:
        """The whole run with a little room on the right; the axis only moves when the newest
        sample reaches its end (or the room is far too large: a new run)."""
        t = self._columns.column("t")
        left = min(0.0, float(t[0])) if len(t) else 0.0
        span = max((float(t[-1]) if len(t) else 0.0) - left, _MIN_SPAN_S)
        (x0, x1), _y = self.throughput_plot.getViewBox().viewRange()
        if abs(x0 - left) < 1e-9 and left + span <= x1 <= left + span * (1 + 2 * _HEADROOM):
            return
        self.throughput_plot.setXRange(left, left + span * (1 + _HEADROOM), padding=0)

    def _fit_y(self) -> None:
        for plot, names in ((self.throughput_plot, _THROUGHPUT), (self.iops_plot, _IOPS)):
            peak = np.fmax.reduce([self._visible_peak(name) for name in names])
            top = _nice_ceiling(float(peak) * _Y_MARGIN)
            if plot.getViewBox().viewRange()[1] != [0.0, top]:
                plot.setYRange(0.0, top, padding=0)
        self.cpu_plot.setYRange(*_CPU_RANGE, padding=0)

    def _visible_peak(self, name: str) -> float:
        """The highest value of `name` in view, in display units (NaN: nothing to show)."""
        if self._follow:  # the whole run is in view
            peak = self._peaks[name]
        else:
            (left, right), _y = self.throughput_plot.getViewBox().viewRange()
            lo, hi = np.searchsorted(self._columns.column("t"), (left, right))
            chunk = self._columns.column(name)[lo:hi]
            peak = float(np.fmax.reduce(chunk)) if len(chunk) else math.nan
        return peak * MIB_PER_MB if self._mib and name in _THROUGHPUT else peak

    def _update_peaks(self) -> None:
        """Fold the samples added since the last refresh into the running maxima."""
        size = self._columns.size
        for name, peak in self._peaks.items():
            chunk = self._columns.column(name)[self._peaks_upto : size]
            if len(chunk):
                self._peaks[name] = float(np.fmax(peak, np.fmax.reduce(chunk)))
        self._peaks_upto = size

    def _plots(self) -> tuple[pg.PlotItem, pg.PlotItem, pg.PlotItem]:
        return self.throughput_plot, self.iops_plot, self.cpu_plot

    # --- palette ------------------------------------------------------------------------------
    def changeEvent(self, event: QEvent) -> None:
        built = hasattr(self, "_backdrops")  # a parent's palette may arrive during __init__
        if built and event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange):
            self._apply_palette()  # light <-> dark; the phase names follow the font
        super().changeEvent(event)

    def _apply_palette(self) -> None:
        palette = self.palette()
        dark = is_dark(palette)
        self._view.setBackground(palette.color(QPalette.ColorRole.Base))
        self._apply_axis_colours()
        fills = []
        for name, curve in self._curves.items():
            curve.setPen(_pen(name, dark))
            if name in _CPU:
                fill = QColor(_CPU_COLOURS[name][dark])
                fill.setAlpha(_FILL_ALPHA[dark])
                curve.setBrush(fill)  # no fill of its own (no fillLevel): read by the legend
                fills.append(fill)
        self._area.set_colours([_premultiplied(fill) for fill in fills])
        self._style_legends(palette)
        self._style_backdrops(palette)

    def _apply_axis_colours(self) -> None:
        palette = self.palette()
        text = palette.color(QPalette.ColorRole.Text)
        line = palette.color(QPalette.ColorRole.PlaceholderText)
        for plot in self._plots():
            for side in ("left", "bottom"):
                axis = plot.getAxis(side)
                axis.setPen(line)
                axis.setTextPen(text)
                if axis.labelText:
                    axis.setLabel(axis.labelText, color=text.name())

    def _style_legends(self, palette: QPalette) -> None:
        text = palette.color(QPalette.ColorRole.Text)
        for legend in (self._throughput_legend, self._cpu_legend):
            legend.setLabelTextColor(text)
            for _sample, label in legend.items:
                label.setText(label.text)  # setLabelTextColor only reaches new text
            legend.update()

    def _style_backdrops(self, palette: QPalette) -> None:
        base, text = palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text)
        tint = _mix(base, text, _TINT_MIX)
        backdrop = QColor(base)
        backdrop.setAlpha(160)
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 0.9)
        for item in self._backdrops:
            item.tint, item.edge, item.ink = tint, _mix(base, text, _EDGE_MIX), text
            item.grid = _mix(base, text, _GRID_MIX)
            item.backdrop, item.font = backdrop, font
            item.update()


def _pen(name: str, dark: bool) -> Any:
    """Engine lines solid, the kernel's disk counters dashed in the same colour."""
    if name in _CPU:
        return pg.mkPen(_CPU_COLOURS[name][dark])
    colour = (_READ if "read" in name else _WRITE)[dark]
    style = Qt.PenStyle.DashLine if name.startswith("disk") else Qt.PenStyle.SolidLine
    return pg.mkPen(colour, style=style)


def _nice_ceiling(value: float) -> float:
    """The smallest round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k) >= `value`."""
    if not math.isfinite(value) or value <= 0:
        return 1.0
    scale = 10.0 ** math.floor(math.log10(value))
    return next(step * scale for step in _NICE_STEPS if step * scale >= value * (1 - 1e-12))


def _premultiplied(colour: QColor) -> QColor:
    """The ARGB32 pixel value of `colour` with its RGB scaled by alpha, for an image."""
    alpha = colour.alphaF()
    return QColor.fromRgbF(
        colour.redF() * alpha, colour.greenF() * alpha, colour.blueF() * alpha, alpha
    )

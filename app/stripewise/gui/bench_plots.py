"""Live plots of a benchmark run: throughput, IOPS and CPU against time, with a band per phase.

Samples are appended to growable numpy columns (cheap, nothing is drawn); `refresh()` hands
pyqtgraph what a pixel column shows of them (`plot_envelope`: its min and max, the CPU tops
their mean, the newest sample itself), kept between refreshes but for the last column, so a
2-hour run at 10 Hz redraws in the time a 2-minute one does (`python -m bench --only plots`).

The raster engine's costs decide the rest: lines wider than 1 px and translucent lines leave
its fast cosmetic-line path (40 ms for one 1.5 px curve of 1,800 points), and filling polygons
between peak-downsampled curves takes ~25 ms per band. So every line is 1 px and opaque (grid,
band tint and edges are mixed into the base colour beforehand), the stacked CPU areas are an
image with one column per pixel, and the phase bands, grid and phase names of a plot are one
item painted in one go. pyqtgraph's auto range is replaced too (see `_apply_ranges`).

The samples are kept in `bench_plot_data`, the CPU areas drawn by `bench_plot_cpu` and the
bands, grid and names by `bench_plot_backdrop`; this module is the widget that ties them up.
The disk lines' legend says which layer they measure ("disk read (vda, under loop0)").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QGraphicsItem, QVBoxLayout, QWidget

from stripewise.gui.bench_plot_backdrop import Backdrop, style_backdrops
from stripewise.gui.bench_plot_cpu import StackedArea, SwatchSample, premultiplied
from stripewise.gui.bench_plot_data import CPU, IOPS, SERIES, THROUGHPUT, RunData, nice_ceiling
from stripewise.gui.latency_map import LatencyMap
from stripewise.gui.live_heap import LiveHeap
from stripewise.gui.plot_envelope import Envelope, Grid
from stripewise.gui.plot_export import without_export
from stripewise.gui.plot_stack import PLOTS_MIN_PX
from stripewise.gui.theme import is_dark, style_axes
from stripewise.model.units import MIB_PER_MB
from stripewise.protocol.events import Sample

__all__ = ["MIB_PER_MB", "SERIES", "LivePlots"]

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
_LEGEND_GAP = 8  # between a legend's entries
_CPU_RANGE = (0.0, 100.0)
_CPU_TICKS = (0, 25, 50, 75, 100)
_HEADROOM = 0.03  # following a run, the time axis reaches this share past the newest sample
_MIN_SPAN_S = 10.0
_Y_MARGIN = 1.05


def columns_that_fit(widths: list[float], room: float, gap: float) -> int:
    """The most columns a legend's entries (laid out row by row, as pyqtgraph's LegendItem
    does) take without its widest row of columns exceeding `room`; 1 at the least."""
    for columns in range(len(widths), 1, -1):
        column_widths = [max(widths[start::columns]) for start in range(columns)]
        if sum(column_widths) + gap * columns <= room:
            return columns
    return 1


class LivePlots(QWidget):
    """Three stacked plots sharing a linked time axis, fed with the helper's `sample` events."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._data = RunData()
        self._columns = self._data.columns  # kept for the run: clear() empties it in place
        self._mib = False
        self._dirty = False
        self._shown = 0  # samples handed to the lines at the last refresh
        self._heap = LiveHeap()  # no full garbage collection of the program mid-run
        self._drawing = False  # inside refresh(): its range change redraws nothing itself
        self._envelope = Envelope(["mean" if name in CPU else "peak" for name in SERIES])
        self._curves: dict[str, pg.PlotDataItem] = {}
        self._follow = True  # the time axis follows the run until the user zooms or pans
        self._disk_layer = ""  # what the disk lines' legend names
        self._view = pg.GraphicsLayoutWidget()
        self._view.installEventFilter(self)
        without_export(self._view)  # Save Plot... on the page writes PNG or SVG
        self._view.ci.layout.setContentsMargins(2, 2, 10, 2)
        self._view.ci.layout.setVerticalSpacing(0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self._view.setMinimumHeight(PLOTS_MIN_PX)  # the map below gives up its room first
        layout.addWidget(self._view, 3)
        self.latency_map = LatencyMap()  # shown once a sample carries its interval's latency
        self.latency_map.hide()
        layout.addWidget(self.latency_map, 2)
        self._build_plots()
        self._build_curves()
        self._area = StackedArea([self._curves[name] for name in CPU])
        self.cpu_plot.addItem(self._area, ignoreBounds=True)
        self._build_legends()
        self._backdrops = [
            Backdrop(self._data.phases, plot.getAxis("left"), plot is self.throughput_plot)
            for plot in self._plots()
        ]
        self._backdrops[2].grid_values = _CPU_TICKS
        for plot, backdrop in zip(self._plots(), self._backdrops, strict=True):
            plot.addItem(backdrop, ignoreBounds=True)
        self.throughput_plot.getViewBox().sigXRangeChanged.connect(self._on_x_range)
        self.throughput_plot.getViewBox().sigResized.connect(self._on_resized)
        self._apply_palette()
        self.auto_range()

    # --- construction -------------------------------------------------------------------------
    def _build_plots(self) -> None:
        # rows: 0 throughput legend, 1 throughput, 2 IOPS, 3 CPU legend, 4 CPU
        self.throughput_plot = self._add_plot(1, "MB/s")
        self.iops_plot = self._add_plot(2, "IOPS")
        self.cpu_plot = self._add_plot(4, "CPU %")
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
        plot.hideAxis("bottom")  # the shared time axis is shown once, under the CPU plot
        left = plot.getAxis("left")
        left.setWidth(_AXIS_WIDTH)
        left.setStyle(maxTickLevel=0)  # labels where the Backdrop draws the grid
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
        # handed a pixel column's min and max (plot_envelope), not every sample: no clipping or
        # downsampling of pyqtgraph's, nor its clipping of huge values (a scan of every point)
        curve = pg.PlotDataItem(name=_LABELS[name], antialias=False, dynamicRangeLimit=None)
        plot.addItem(curve)
        self._curves[name] = curve

    def _build_curves(self) -> None:
        for name in THROUGHPUT:
            self._new_curve(self.throughput_plot, name)
        for name in IOPS:
            self._new_curve(self.iops_plot, name)
        for name in CPU:
            self._new_curve(self.cpu_plot, name)
            self._curves[name].visibleChanged.connect(lambda: self._area.update())

    def _build_legends(self) -> None:
        """Legends get rows of their own above the throughput and CPU plots: inside a plot
        they would cover data. The IOPS plot uses the throughput colours (engine read/write)."""
        self._throughput_legend = pg.LegendItem(colCount=4, horSpacing=_LEGEND_GAP, frame=False)
        self._view.addItem(self._throughput_legend, row=0, col=0)
        self._cpu_legend = pg.LegendItem(
            colCount=3, horSpacing=8, frame=False, sampleType=SwatchSample
        )
        self._view.addItem(self._cpu_legend, row=3, col=0)
        for legend in (self._throughput_legend, self._cpu_legend):
            legend.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        for name in THROUGHPUT:
            self._throughput_legend.addItem(self._curves[name], _LABELS[name])
        for name in CPU:
            self._cpu_legend.addItem(self._curves[name], f"CPU {_LABELS[name]}")

    # --- data -------------------------------------------------------------------------------
    def clear(self) -> None:
        """Forget everything: a new run starts."""
        self._heap.run_started()
        self._data.clear()
        self.latency_map.clear()
        self.latency_map.hide()
        self._set_band_end(0.0)
        for curve in self._curves.values():
            curve.setData([], [])
        self._area.set_data(np.empty(0), (), ())
        self._envelope.reset()
        self._shown = 0
        self._dirty = False
        self._name_disk_layer()
        self.auto_range()

    def begin_phase(self, label: str, t_s: float, shorter: tuple[str, ...] = ()) -> None:
        """Start a phase band at `t_s`; it grows with the samples until the next phase starts.
        A band too narrow for `label` is named by the longest of `shorter` that fits."""
        self._set_band_end(self._data.begin_phase(label, t_s, shorter))

    def add_sample(self, sample: Sample) -> None:
        """Append one sample; drawing waits for refresh()."""
        moved = self._data.add_sample(sample)
        self.latency_map.add_sample(sample)
        if sample.latency_us is not None and self.latency_map.isHidden():
            self.latency_map.show()
        if moved is not None:  # the sampler's clock restarted under a new phase
            self._set_band_end(moved)
        self._dirty = True

    def add_samples(self, samples: Sequence[Sample]) -> None:
        self._columns.reserve(len(samples))
        for sample in samples:
            self.add_sample(sample)

    @property
    def sample_count(self) -> int:
        return self._columns.size

    def series(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The x and y of the line `name` as of the last refresh, in display units (every
        sample: what a pixel column draws of them is `drawn_points`)."""
        t = self._columns.column("t")[: self._shown]
        y = self._columns.column(name)[: self._shown]
        return t.copy(), y * MIB_PER_MB if self._mib and name in THROUGHPUT else y.copy()

    def drawn_points(self, name: str) -> int:
        """How many points the curve `name` draws after decimation for its pixel columns."""
        x, _y = self._curves[name].curve.getData()
        return 0 if x is None else len(x)

    @property
    def phase_labels(self) -> list[str]:
        return [phase.label for phase in self._data.phases]

    def drawn_phase_labels(self) -> list[str]:
        """The phase names as the last paint of the top plot laid them out."""
        return self._backdrops[0].drawn_labels()

    def phase_spans(self) -> list[tuple[float, float]]:
        """(start, end) in seconds of each phase band as drawn."""
        return self._backdrops[0].spans()

    # --- drawing ------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Push the buffered samples to the curves (the page calls this on a timer)."""
        self.latency_map.refresh()
        if not self._dirty:
            return
        self._dirty = False
        if self._columns.size == 0:
            return
        self._shown = self._columns.size
        self._heap.samples_kept(self._shown)
        t = self._columns.column("t")
        self._area.set_data(
            t,
            [self._columns.column(name) for name in CPU],
            [self._columns.column(f"{name}_sum") for name in CPU],
        )
        self._set_band_end(float(t[-1]))
        self._data.update_peaks()
        self._name_disk_layer()
        self._drawing = True
        try:
            self._apply_ranges()
        finally:
            self._drawing = False
        self._draw_lines()

    def _draw_lines(self) -> None:
        """Hand each line what its pixel columns show of the samples in view."""
        view = self.throughput_plot.getViewBox()
        (left, right), _y = view.viewRange()
        columns = round(view.width() * self.devicePixelRatioF())
        t = self._columns.column("t")[: self._shown]
        ys = [self._columns.column(name)[: self._shown] for name in SERIES]
        x, drawn = self._envelope.update(t, ys, Grid(left, right, columns))
        for name, y in zip(SERIES, drawn, strict=True):
            if self._mib and name in THROUGHPUT:
                y = y * MIB_PER_MB
            self._curves[name].setData(x, y)

    def _on_resized(self, *_args: Any) -> None:
        if self._shown:
            self._draw_lines()  # more or fewer pixel columns

    def _name_disk_layer(self) -> None:
        """The disk lines' legend names the layer they measure once the samples say it."""
        layer = self._data.disk_layer
        if layer == self._disk_layer:
            return
        self._disk_layer = layer
        for name in ("disk_read", "disk_write"):
            text = f"{_LABELS[name]} ({layer})" if layer else _LABELS[name]
            self._curves[name].opts["name"] = text
            for sample, label in self._throughput_legend.items:
                if sample.item is self._curves[name]:
                    label.setText(text)
        self._throughput_legend.updateSize()
        self._fit_legend()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The legends fit the plots' own width, known once their view has been resized (this
        widget's resize comes before its layout passes it on)."""
        if watched is self._view and event.type() == QEvent.Type.Resize:
            self._fit_legend()
        return False

    def _fit_legend(self) -> None:
        """Each legend in as many columns as fit the plots' width: all on one row when there
        is room, fewer beside a narrow plot (an 800x600 screen over VNC cut "engine write"
        and "CPU iowait" off)."""
        left, _top, right, _bottom = self._view.ci.layout.getContentsMargins()
        room = self._view.width() - left - right
        for legend in (self._throughput_legend, self._cpu_legend):
            widths = [
                sample.boundingRect().width() + label.item.boundingRect().width()
                for sample, label in legend.items
            ]
            columns = columns_that_fit(widths, room, _LEGEND_GAP)
            if columns != legend.columnCount:
                legend.setColumnCount(columns)

    def legend_labels(self) -> list[str]:
        """The throughput legend's entries as shown."""
        return [label.text for _sample, label in self._throughput_legend.items]

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
        if self._drawing:
            return  # refresh() draws the lines once its ranges are set
        if self._shown:
            self._draw_lines()  # zoomed or panned: other samples in other columns
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
        for plot, names in ((self.throughput_plot, THROUGHPUT), (self.iops_plot, IOPS)):
            peak = np.fmax.reduce([self._visible_peak(name) for name in names])
            top = nice_ceiling(float(peak) * _Y_MARGIN)
            if plot.getViewBox().viewRange()[1] != [0.0, top]:
                plot.setYRange(0.0, top, padding=0)
        self.cpu_plot.setYRange(*_CPU_RANGE, padding=0)

    def _visible_peak(self, name: str) -> float:
        """The highest value of `name` in view, in display units (NaN: nothing to show)."""
        if self._follow:  # the whole run is in view
            peak = self._data.peak(name)
        else:
            (left, right), _y = self.throughput_plot.getViewBox().viewRange()
            peak = self._data.peak_between(name, left, right)
        return peak * MIB_PER_MB if self._mib and name in THROUGHPUT else peak

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
            if name in CPU:
                fill = QColor(_CPU_COLOURS[name][dark])
                fill.setAlpha(_FILL_ALPHA[dark])
                curve.setBrush(fill)  # no fill of its own (no fillLevel): read by the legend
                fills.append(fill)
        self._area.set_colours([premultiplied(fill) for fill in fills])
        self._style_legends(palette)
        style_backdrops(self._backdrops, palette, self.font())

    def _apply_axis_colours(self) -> None:
        style_axes(self._plots(), self.palette())

    def _style_legends(self, palette: QPalette) -> None:
        text = palette.color(QPalette.ColorRole.Text)
        for legend in (self._throughput_legend, self._cpu_legend):
            legend.setLabelTextColor(text)
            for _sample, label in legend.items:
                label.setText(label.text)  # setLabelTextColor only reaches new text
            legend.update()


def _pen(name: str, dark: bool) -> Any:
    """Engine lines solid, the kernel's disk counters dashed in the same colour."""
    if name in CPU:
        return pg.mkPen(_CPU_COLOURS[name][dark])
    colour = (_READ if "read" in name else _WRITE)[dark]
    style = Qt.PenStyle.DashLine if name.startswith("disk") else Qt.PenStyle.SolidLine
    return pg.mkPen(colour, style=style)

"""Live plots of a group run: throughput and IOPS against time, one line per host plus the
total, each line shown or hidden with its check box.

A host's line is read + write of its engine (a phase mostly does one of them; a mixed one
both), so a host is one line and the total is the sum of the hosts' lines. Samples go into
growable numpy columns per host (`bench_plot_data.Columns`); `refresh()`, on the page's timer,
hands views of them to pyqtgraph: eight hosts at a few samples per second cost the GUI thread a
few milliseconds per redraw. Every line is 1 px and opaque, as in `bench_plots` (the raster
engine's fast path).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QColor, QIcon, QPalette, QPixmap
from PySide6.QtWidgets import QCheckBox, QGraphicsItem, QVBoxLayout, QWidget

from stripewise.gui.bench_plot_data import Columns, nice_ceiling
from stripewise.gui.flow_layout import FlowLayout
from stripewise.gui.live_heap import freeze_for_live_runs
from stripewise.gui.plot_export import without_export
from stripewise.gui.theme import is_dark, style_axes
from stripewise.model.units import MIB_PER_MB
from stripewise.protocol.events import Sample

TOTAL = "total"
COLUMNS = ("t", "mb_s", "iops")
# (light, dark) per host in order; after the last they repeat
HOST_COLOURS = (
    ("#2f74c8", "#62a6f0"),
    ("#d9641e", "#f28f4e"),
    ("#3a9a60", "#52b87a"),
    ("#8a68bf", "#a88ad8"),
    ("#c9403c", "#e0625e"),
    ("#1f9aa5", "#4cc3cc"),
    ("#b08a1e", "#d8b24a"),
    ("#b0508f", "#d67ab5"),
)
_AXIS_WIDTH = 62
_Y_MARGIN = 1.05
_MIN_SPAN_S = 10.0
PREPARED_LINES = 9  # made with the widget: eight hosts and the total start without delay


class GroupPlots(QWidget):
    """Throughput over IOPS, sharing the time axis; a check box per line above them."""

    lineToggled = Signal(str, bool)  # host label (or "total"), shown

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._mib = False
        self._dirty = False
        self._hosts: list[str] = []  # in the group's order; "total" is kept apart
        self._data: dict[str, Columns] = {}
        self._curves: dict[str, tuple[pg.PlotDataItem, pg.PlotDataItem]] = {}
        self.toggles: dict[str, QCheckBox] = {}
        self._slots: list[tuple[pg.PlotDataItem, pg.PlotDataItem, QCheckBox]] = []
        self._failed: set[str] = set()
        self._boxes = QWidget()
        self._box_row = FlowLayout(self._boxes, spacing=12)
        self._view = pg.GraphicsLayoutWidget()
        without_export(self._view)
        self._view.ci.layout.setContentsMargins(2, 2, 10, 2)
        self.throughput_plot = self._add_plot(0, "MB/s")
        self.iops_plot = self._add_plot(1, "IOPS")
        self.iops_plot.setXLink(self.throughput_plot)
        self.iops_plot.showAxis("bottom")
        self.iops_plot.setLabel("bottom", "time (s)")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._boxes)
        layout.addWidget(self._view, 1)
        for _ in range(PREPARED_LINES):
            self._add_slot()
        self._boxes.setVisible(False)  # until a run's hosts are known
        self._apply_palette()

    def _add_plot(self, row: int, unit: str) -> pg.PlotItem:
        axis = CompactAxis("left")
        plot: pg.PlotItem = self._view.addPlot(row=row, col=0, axisItems={"left": axis})
        plot.setMenuEnabled(False)
        plot.setMouseEnabled(x=True, y=False)
        plot.setClipToView(True)
        plot.setDownsampling(auto=True, mode="peak")
        plot.hideAxis("bottom")
        plot.hideButtons()
        plot.showGrid(x=False, y=True, alpha=0.25)
        left = plot.getAxis("left")
        left.setWidth(_AXIS_WIDTH)
        for side in ("left", "bottom"):
            plot.getAxis(side).enableAutoSIPrefix(False)
            plot.getAxis(side).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        plot.setLabel("left", unit)
        plot.disableAutoRange()
        return plot

    # --- hosts --------------------------------------------------------------------------------
    def set_hosts(self, labels: list[str]) -> None:
        """A new run on these hosts: everything before it is forgotten. Lines and boxes are
        kept from run to run and only made when more are needed (each costs the GUI thread
        about half a millisecond to make)."""
        freeze_for_live_runs()  # no full garbage collection of the whole program mid-run
        self._hosts = list(labels)
        names = [*self._hosts, TOTAL]
        while len(self._slots) < len(names):
            self._add_slot()
        self._data, self._curves, self.toggles = {}, {}, {}
        self._failed = set()
        for index, (throughput, iops, box) in enumerate(self._slots):
            used = index < len(names)
            for curve in (throughput, iops):
                curve.setData([], [])
                curve.setVisible(used)
            box.blockSignals(True)
            box.setChecked(True)
            box.blockSignals(False)
            box.setVisible(used)
            if used:
                label = names[index]
                self._data[label] = Columns(COLUMNS, capacity=256)
                self._curves[label] = (throughput, iops)
                self.toggles[label] = box
                box.setText(label)
                box.setToolTip("")
                box.setAccessibleName(f"Show {label}")
        self._boxes.setVisible(True)
        self._apply_palette()
        self._dirty = False
        self._apply_ranges()

    def _add_slot(self) -> None:
        index = len(self._slots)
        box = QCheckBox()
        box.toggled.connect(lambda shown: self._on_box(index, shown))
        self._box_row.addWidget(box)
        pair = (self._new_curve(self.throughput_plot), self._new_curve(self.iops_plot))
        self._slots.append((*pair, box))

    def _on_box(self, index: int, shown: bool) -> None:
        names = self.line_names()
        if index < len(names):
            self.set_line_visible(names[index], shown)

    def _new_curve(self, plot: pg.PlotItem) -> pg.PlotDataItem:
        curve = pg.PlotDataItem(
            antialias=False,
            clipToView=True,
            autoDownsample=True,
            downsampleMethod="peak",
            autoDownsampleFactor=1.0,
            dynamicRangeLimit=None,
        )
        curve.setVisible(False)
        plot.addItem(curve)
        return curve

    @property
    def hosts(self) -> list[str]:
        return list(self._hosts)

    def line_names(self) -> list[str]:
        """Every line's name: the hosts in order, then "total"."""
        return [*self._hosts, TOTAL] if self._hosts else []

    def set_line_visible(self, label: str, shown: bool) -> None:
        for curve in self._curves[label]:
            curve.setVisible(shown)
        box = self.toggles[label]
        if box.isChecked() != shown:
            box.setChecked(shown)
        self._apply_ranges()
        self.lineToggled.emit(label, shown)

    def line_visible(self, label: str) -> bool:
        return bool(self._curves[label][0].isVisible())

    def mark_failed(self, label: str) -> None:
        """The host's line stops where it failed; its box says so."""
        if label in self.toggles and label not in self._failed:
            self._failed.add(label)
            self.toggles[label].setText(f"{label} (failed)")
            self.toggles[label].setToolTip(f"{label} failed mid-run: its line stops there")

    # --- data ---------------------------------------------------------------------------------
    def add_sample(self, sample: Sample) -> None:
        label = sample.host or TOTAL
        columns = self._data.get(label)
        if columns is None:
            return  # a host this run does not have
        columns.append(
            (
                sample.t_s,
                sample.engine_read_mb_s + sample.engine_write_mb_s,
                sample.engine_read_iops + sample.engine_write_iops,
            )
        )
        self._dirty = True

    def sample_count(self, label: str) -> int:
        return self._data[label].size if label in self._data else 0

    def series(self, label: str, plot: str = "throughput") -> tuple[np.ndarray, np.ndarray]:
        """What the line of `label` in the throughput (or "iops") plot was handed at the last
        refresh, in display units."""
        curve = self._curves[label][0 if plot == "throughput" else 1]
        x, y = curve.getOriginalDataset()
        if x is None or y is None:
            return np.empty(0), np.empty(0)
        return np.asarray(x), np.asarray(y)

    def refresh(self) -> None:
        """Push the buffered samples to the lines (the page calls this on a timer)."""
        if not self._dirty:
            return
        self._dirty = False
        scale = MIB_PER_MB if self._mib else 1.0
        for label, columns in self._data.items():
            if columns.size == 0:
                continue
            throughput, iops = self._curves[label]
            t = columns.column("t")
            throughput.setData(t, columns.column("mb_s") * scale)
            iops.setData(t, columns.column("iops"))
        self._apply_ranges()

    def set_binary_units(self, mib: bool) -> None:
        if mib == self._mib:
            return
        self._mib = mib
        self.throughput_plot.setLabel("left", "MiB/s" if mib else "MB/s")
        self._apply_axis_colours()
        self._dirty = True
        self.refresh()

    # --- ranges -------------------------------------------------------------------------------
    def _apply_ranges(self) -> None:
        """The whole run in X; Y from 0 to a round number over the highest visible line."""
        ends = [c.column("t")[-1] for c in self._data.values() if c.size]
        right = max((float(t) for t in ends), default=0.0)
        self.throughput_plot.setXRange(0.0, max(right, _MIN_SPAN_S) * 1.03, padding=0)
        scale = MIB_PER_MB if self._mib else 1.0
        for plot, column, factor in (
            (self.throughput_plot, "mb_s", scale),
            (self.iops_plot, "iops", 1.0),
        ):
            peak = max(
                (
                    float(np.max(c.column(column)))
                    for label, c in self._data.items()
                    if c.size and self.line_visible(label)
                ),
                default=math.nan,
            )
            plot.setYRange(0.0, nice_ceiling(peak * factor * _Y_MARGIN), padding=0)

    # --- palette ------------------------------------------------------------------------------
    def changeEvent(self, event: QEvent) -> None:
        if hasattr(self, "iops_plot") and event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()
        super().changeEvent(event)

    def colour(self, label: str) -> QColor:
        dark = is_dark(self.palette())
        if label == TOTAL:
            return self.palette().color(QPalette.ColorRole.Text)
        index = self._hosts.index(label) if label in self._hosts else 0
        return QColor(HOST_COLOURS[index % len(HOST_COLOURS)][dark])

    def _apply_palette(self) -> None:
        self._view.setBackground(self.palette().color(QPalette.ColorRole.Base))
        self._apply_axis_colours()
        for label, pair in self._curves.items():
            colour = self.colour(label)
            for curve in pair:
                curve.setPen(pg.mkPen(colour, width=1))
            swatch = QPixmap(12, 12)
            swatch.fill(colour)
            self.toggles[label].setIcon(QIcon(swatch))

    def _apply_axis_colours(self) -> None:
        style_axes((self.throughput_plot, self.iops_plot), self.palette())


class CompactAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph has no type stubs: its classes are Any
    """Tick labels that fit the axis: 250k, 2.5M rather than 250000 or 2.5e+06."""

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [compact_number(value * scale, spacing * scale) for value in values]


def compact_number(value: float, step: float) -> str:
    """`value` with k (10^3), M (10^6) or G (10^9) and as many decimals as `step` needs."""
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor and step >= factor / 100:
            return f"{value / factor:.{_decimals(step / factor)}f}{suffix}"
    return f"{value:.{_decimals(step)}f}"


def _decimals(step: float) -> int:
    """The fewest decimals (at most 3) that write multiples of `step` exactly."""
    for digits in range(3):
        if abs(round(step, digits) - step) <= abs(step) * 1e-9:
            return digits
    return 3

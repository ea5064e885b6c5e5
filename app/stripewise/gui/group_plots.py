"""Live plots of a group run: throughput and IOPS against time, one line per host plus the
total, each line shown or hidden with its check box.

A host's line is read + write of its engine (a phase mostly does one of them; a mixed one
both), so a host is one line and the total is the sum of the hosts' lines. The samples are
merged into numpy columns per line off the GUI thread (`services.group_series`, fed by the
group run's driver thread); a timer at the screen's rate redraws the lines whose samples grew
since the last frame, each as its pixel columns' min and max (`plot_envelope`), so eight hosts
cost the GUI thread one redraw per frame at most, never one per sample. Every line is 1 px and
opaque, as in `bench_plots` (the raster engine's fast path).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPalette, QPixmap
from PySide6.QtWidgets import QCheckBox, QGraphicsItem, QVBoxLayout, QWidget

from stripewise.gui.bench_plot_data import nice_ceiling
from stripewise.gui.flow_layout import FlowLayout
from stripewise.gui.live_heap import LiveHeap
from stripewise.gui.plot_envelope import Envelope, Grid
from stripewise.gui.plot_export import without_export
from stripewise.gui.theme import is_dark, style_axes
from stripewise.model.units import MIB_PER_MB
from stripewise.protocol.events import Sample
from stripewise.services.group_series import TOTAL, GroupSeries

__all__ = ["TOTAL", "GroupPlots", "compact_number"]
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

    def __init__(self, series: GroupSeries | None = None, parent: QWidget | None = None) -> None:
        """`series`: the lines as a group run's driver merges them; by default the plots' own,
        fed by `add_sample`."""
        super().__init__(parent)
        self._mib = False
        self._series = series or GroupSeries()
        self._drawn_version = -1  # the series' version at the last redraw
        self._heap = LiveHeap()  # no full garbage collection of the program mid-run
        self._shown: dict[str, int] = {}  # samples per line at the last redraw
        self._envelopes: dict[str, Envelope] = {}  # per line: MB/s and IOPS
        self._drawing = False  # inside refresh(): its range change redraws nothing itself
        self._frames = QTimer(self)  # at the screen's rate while a run is on
        self._frames.timeout.connect(self.refresh)
        self._hosts: list[str] = []  # in the group's order; "total" is kept apart
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
        self.throughput_plot.getViewBox().sigXRangeChanged.connect(self._on_view_changed)
        self.throughput_plot.getViewBox().sigResized.connect(self._on_view_changed)
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
        self._heap.run_started()
        self._hosts = list(labels)
        names = [*self._hosts, TOTAL]
        self._series.reset(names)
        while len(self._slots) < len(names):
            self._add_slot()
        self._curves, self.toggles, self._shown, self._envelopes = {}, {}, {}, {}
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
                self._envelopes[label] = Envelope(["peak", "peak"])
                self._curves[label] = (throughput, iops)
                self.toggles[label] = box
                box.setText(label)
                box.setToolTip("")
                box.setAccessibleName(f"Show {label}")
        self._boxes.setVisible(True)
        self._apply_palette()
        self._drawn_version = self._series.version
        self._apply_ranges()
        screen = self.screen() or QGuiApplication.primaryScreen()
        rate = screen.refreshRate() if screen is not None else 60.0
        self._frames.start(max(8, round(1000 / (rate if rate > 1 else 60.0))))

    def end_run(self) -> None:
        """The run ended: its last samples drawn, no more frames until the next."""
        self._frames.stop()
        self.refresh()

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
        # handed its pixel columns' min and max (plot_envelope): no downsampling of pyqtgraph's
        curve = pg.PlotDataItem(antialias=False, dynamicRangeLimit=None)
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
        """Keep a sample when no group run's driver merges them (a host this run does not have
        is ignored); drawing waits for the next frame."""
        self._series.add(sample)

    def sample_count(self, label: str) -> int:
        """The samples of the line `label` kept so far, drawn or not."""
        return self._series.count(label) if label in self._curves else 0

    def series(self, label: str, plot: str = "throughput") -> tuple[np.ndarray, np.ndarray]:
        """Every sample of the line `label` in the throughput (or "iops") plot as of the last
        redraw, in display units (what its pixel columns draw of them is the curve's data)."""
        t, mb_s, iops = self._series.view(label)
        shown = self._shown.get(label, 0)
        if plot == "throughput":
            return t[:shown].copy(), mb_s[:shown] * (MIB_PER_MB if self._mib else 1.0)
        return t[:shown].copy(), iops[:shown].copy()

    def refresh(self) -> None:
        """Draw what arrived since the last frame (the frame timer calls this)."""
        version = self._series.version
        if version == self._drawn_version:
            return
        self._drawn_version = version
        for label in self._curves:
            self._shown[label] = self._series.count(label)
        self._heap.samples_kept(sum(self._shown.values()))
        self._drawing = True
        try:
            self._apply_ranges()
        finally:
            self._drawing = False
        self._draw_lines()

    def _draw_lines(self) -> None:
        """Each line its pixel columns' min and max of the samples in view."""
        view = self.throughput_plot.getViewBox()
        (left, right), _y = view.viewRange()
        grid = Grid(left, right, round(view.width() * self.devicePixelRatioF()))
        scale = MIB_PER_MB if self._mib else 1.0
        for label, (throughput, iops) in self._curves.items():
            shown = self._shown.get(label, 0)
            t, mb_s, ops = self._series.view(label)
            x, (y_mb, y_ops) = self._envelopes[label].update(
                t[:shown], [mb_s[:shown], ops[:shown]], grid
            )
            throughput.setData(x, y_mb * scale if self._mib else y_mb)
            iops.setData(x, y_ops)

    def _on_view_changed(self, *_args: Any) -> None:
        if not self._drawing and self._shown:
            self._draw_lines()  # zoomed, panned or resized: other pixel columns

    def set_binary_units(self, mib: bool) -> None:
        if mib == self._mib:
            return
        self._mib = mib
        self.throughput_plot.setLabel("left", "MiB/s" if mib else "MB/s")
        self._apply_axis_colours()
        self._drawn_version = -1
        self.refresh()

    # --- ranges -------------------------------------------------------------------------------
    def _apply_ranges(self) -> None:
        """The whole run in X; Y from 0 to a round number over the highest visible line."""
        lines = {label: self._series.view(label) for label in self._curves}
        shown = {label: self._shown.get(label, 0) for label in lines}
        ends = [float(lines[label][0][shown[label] - 1]) for label in lines if shown[label]]
        right = max(ends, default=0.0)
        self.throughput_plot.setXRange(0.0, max(right, _MIN_SPAN_S) * 1.03, padding=0)
        scale = MIB_PER_MB if self._mib else 1.0
        for plot, column, factor in ((self.throughput_plot, 1, scale), (self.iops_plot, 2, 1.0)):
            peak = max(
                (
                    float(np.max(lines[label][column][: shown[label]]))
                    for label in lines
                    if shown[label] and self.line_visible(label)
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

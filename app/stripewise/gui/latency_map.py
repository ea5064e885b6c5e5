"""Latency over time as a heat map per phase (issue 33): time across, completion latency up on
a log scale, each interval on columns of its own from its start to its end, coloured by the
share of its I/Os in each latency bucket; its p50, p99 and p99.9 drawn as lines over their
middle, stalls marked (model/latency.py), and a legend under it says which is which.

A map is one phase and repetition (and host, in a run on several hosts: one map each); the
phase chooser follows the run live until the user picks another. Costs: a 2-hour run at 2 Hz
is 14,400 columns; they are placed by time on at most `_MAX_COLUMNS`, a column holding
several taking their highest share (so a one-interval stall still shows), the rows resampled to
a uniform log grid, and the whole map handed to pyqtgraph as one image (`python -m bench
--only latency`: < 50 ms).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QStackedLayout,
    QVBoxLayout,
    QWidget,
)

from stripewise.model.latency import (
    GRID_BUCKETS,
    PERCENTILES,
    IntervalLatency,
    LatencyBuckets,
    LatencyInterval,
    Stall,
    find_stalls,
    grid_edge_us,
    grid_index,
)
from stripewise.protocol.events import Sample

MapKey = tuple[str | None, str, int]  # host (None: this machine), phase, repetition
_MAX_COLUMNS = 1600  # about two screen widths: more would be downscaled when painted anyway
_ROWS_PER_DECADE = 24
# an interval follows the one before unless it ended this many periods after it: the sampler's
# last up to 2 (a tick skipped, a round's closing sample), more means samples are missing
_LONGEST = 2.5
# the map's least height: three decades of latency with their labels legible; below it the
# plots above give up their room (they keep plot_stack.PLOTS_MIN_PX between them)
MAP_MIN_PX = 150
_FAINTEST = 1e-4  # a share below this (1 I/O in 10,000) is drawn as the faintest colour
_LINES = {"p50": "#ffffff", "p99": "#ffb000", "p999": "#ff4040"}
_LINE_NAMES = {"p50": "p50", "p99": "p99", "p999": "p99.9"}
_LEGEND_SHARES = (1e-4, 1e-3, 1e-2, 0.1, 1.0)  # the colour scale's steps in the legend
_EDGES_LOG = np.log10(np.maximum([grid_edge_us(i) for i in range(GRID_BUCKETS + 1)], 1e-3))


@dataclass(frozen=True)
class Placement:
    """Where a phase's intervals are drawn: columns of `width` seconds from `start`; interval
    i (in the order added) on columns first[i] up to, not including, last[i]."""

    start: float
    width: float
    first: npt.NDArray[np.int64]
    last: npt.NDArray[np.int64]

    @property
    def count(self) -> int:
        return int(self.last.max())

    def centres(self) -> npt.NDArray[np.float64]:
        """Each interval's x: the middle of its own columns, where its percentiles go."""
        middles: npt.NDArray[np.float64] = self.start + (self.first + self.last) / 2 * self.width
        return middles


@dataclass
class PhaseMap:
    """One phase's intervals: their end times, percentiles and shares per grid bucket."""

    times: list[float] = field(default_factory=list)
    percentiles: dict[str, list[float]] = field(
        default_factory=lambda: {key: [] for key in PERCENTILES}
    )
    # one row per interval, grown by doubling: stacking 14,400 rows at each draw cost more
    # than the drawing
    _rows: npt.NDArray[np.float32] = field(
        default_factory=lambda: np.zeros((64, GRID_BUCKETS), dtype=np.float32)
    )

    def add(self, t_s: float, latency: IntervalLatency, histogram: LatencyBuckets | None) -> None:
        """One interval; one without a histogram on the grid keeps its time and percentiles,
        its column empty (nothing to colour), so the next is not drawn over its time."""
        count = len(self.times)
        if count == len(self._rows):
            self._rows = np.concatenate((self._rows, np.zeros_like(self._rows)))
        first = grid_index(histogram.edges_us[0]) if histogram and histogram.total else None
        if histogram is not None and first is not None:
            counts = np.asarray(histogram.counts, dtype=np.float32)
            self._rows[count, first : first + len(counts)] = counts / histogram.total
        self.times.append(t_s)
        for key in PERCENTILES:
            self.percentiles[key].append(getattr(latency, key))

    @property
    def stalls(self) -> tuple[Stall, ...]:
        return find_stalls(list(zip(self.times, self.percentiles["p99"], strict=True)))

    def image(self) -> tuple[npt.NDArray[np.float32], QRectF] | None:
        """The map as (columns x rows of shares, the rectangle it covers in time x log10 us);
        None when no interval has a histogram."""
        shares = self._rows[: len(self.times)]
        used = np.flatnonzero(shares.max(axis=0))
        if not used.size:
            return None
        low, high = _EDGES_LOG[used[0]], _EDGES_LOG[used[-1] + 1]
        rows = max(2, math.ceil((high - low) * _ROWS_PER_DECADE))
        centres = low + (np.arange(rows) + 0.5) * (high - low) / rows
        buckets = np.clip(np.searchsorted(_EDGES_LOG, centres, side="right") - 1, 0, None)
        placed = self.placement()
        span = placed.count * placed.width
        return self._columns(shares, placed)[:, buckets], QRectF(
            placed.start, low, span, high - low
        )

    def spans(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Each interval's start and end. The sampler's interval holds the I/Os completed since
        the phase's previous sample, so it starts where the one before it ended (in time
        order). Where that one is not known (the phase's first; after a gap, samples lost or
        without latency, that leaves more than `_LONGEST` periods since the one before), it
        lasted one period, the phase's median interval, and the gap stays empty. An interval
        ending as the run began (t 0) is given a period too, so that the map has a width."""
        ends = np.asarray(self.times, dtype=np.float64)
        order = np.argsort(ends, kind="stable")
        ordered = ends[order]
        lengths = np.diff(ordered)
        lasted = lengths[lengths > 0]
        period = float(np.median(lasted)) if lasted.size else 0.5
        before = np.concatenate(([-math.inf], ordered[:-1]))
        starts = np.where(ordered - before <= _LONGEST * period, before, ordered - period)
        starts = np.maximum(starts, 0.0)
        if ordered[-1] <= starts[0]:  # every interval at t 0
            starts[0] = ordered[-1] - period
        placed = np.empty_like(ends)
        placed[order] = starts
        return placed, ends

    def placement(self) -> Placement:
        """Every interval on columns of its own, as many as it lasted: the columns are as
        narrow as the shortest interval, so each has at least one; an interval's columns run
        from its start to its end, rounded to the nearest column edge, so neighbours meet
        with neither a gap nor a shared column. Past `_MAX_COLUMNS` (a long run, or a sliver
        of an interval) columns are wider than some intervals: such an interval shares the
        column it starts in, which shows the highest share of those it holds."""
        starts, ends = self.spans()
        begin, finish = float(starts.min()), float(ends.max())
        lengths = ends - starts
        shortest = float(lengths[lengths > 0].min()) if np.any(lengths > 0) else finish - begin
        count = min(_MAX_COLUMNS, max(1, math.ceil((finish - begin) / shortest - 1e-6)))
        width = (finish - begin) / count
        first = np.floor((starts - begin) / width + 0.5).astype(np.int64)
        last = np.floor((ends - begin) / width + 0.5).astype(np.int64)
        first = np.clip(first, 0, count - 1)
        last = np.clip(np.maximum(last, first + 1), 1, count)
        return Placement(begin, width, first, last)

    def centres(self) -> npt.NDArray[np.float64]:
        """Each interval's x (in the order added): the middle of its own columns."""
        return self.placement().centres()

    def _columns(
        self, shares: npt.NDArray[np.float32], placed: Placement
    ) -> npt.NDArray[np.float32]:
        """The intervals' shares on their columns; a column holding several (past
        `_MAX_COLUMNS`) takes their highest share: a one-interval stall stays visible."""
        widths = placed.last - placed.first
        owner = np.repeat(np.arange(len(widths)), widths)
        # each owner's columns, counted from its first
        offsets = np.arange(owner.size) - np.repeat(np.cumsum(widths) - widths, widths)
        column = placed.first[owner] + offsets
        order = np.argsort(column, kind="stable")
        column, owner = column[order], owner[order]
        used, first = np.unique(column, return_index=True)
        columns = np.zeros((placed.count, GRID_BUCKETS), np.float32)
        columns[used] = np.maximum.reduceat(shares[owner], first, axis=0)  # ufunc.at: 40 ms
        return columns


class LatencyAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph has no type stubs: its classes are Any
    """Latency on a log axis, each label with its unit (500 µs, 2 ms, 1 s): under two decades
    on show, 1, 2 and 5 times a power of ten are named; over that, the powers of ten alone.
    pyqtgraph's own names every tick of a short range (4·10², 5·10², ... 9·10², crowded)."""

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        if not self.logMode:
            return list(super().tickStrings(values, scale, spacing))
        low, high = self.range
        named = (1.0,) if high - low >= 2 else (1.0, 2.0, 5.0)
        return [latency_text(10**value) if _mantissa(value) in named else "" for value in values]


def _mantissa(log_value: float) -> float:
    """The first significant figures of 10**log_value: 5.0 for 500."""
    return round(10 ** (log_value - math.floor(log_value + 1e-9)), 2)


def latency_text(us: float) -> str:
    """A latency with its unit, as few digits as it takes: 0.5 µs, 500 µs, 2 ms, 1.5 s."""
    if us >= 1e6:
        return f"{us / 1e6:g} s"
    if us >= 1e3:
        return f"{us / 1e3:g} ms"
    return f"{us:g} µs"


def _shade(shares: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
    """Shares of I/Os as indexes into the lookup table: 1 (1 in 10,000 or fewer) to 255
    (every I/O) on a log scale; 0 where there is none."""
    levels = np.log10(np.maximum(shares, _FAINTEST))  # -4 (faint) .. 0 (every I/O)
    shaded: npt.NDArray[np.uint8] = np.where(shares > 0, 1 + (levels + 4) * (254 / 4), 0).astype(
        np.uint8
    )
    return shaded


def legend_html() -> str:
    """The lines' colours and the colour scale in words, each swatch on black as the map's
    own background, so it reads the same in a light or a dark theme."""
    table = _lookup_table()

    def swatch(colour: str, mark: str) -> str:
        return f'<span style="background-color:#000000; color:{colour}">&nbsp;{mark}&nbsp;</span>'

    lines = " ".join(
        f"{swatch(_LINES[key], '&#9473;&#9473;')} {name}" for key, name in _LINE_NAMES.items()
    )
    steps = _shade(np.asarray(_LEGEND_SHARES, dtype=np.float32))
    scale = " ".join(
        f"{swatch(pg.mkColor(*table[step][:3]).name(), '&#9608;')} {share * 100:g}&nbsp;%"
        for step, share in zip(steps, _LEGEND_SHARES, strict=True)
    )
    return f"Lines: {lines}. Colour: share of the interval's I/Os at that latency, {scale}"


def _lookup_table() -> npt.NDArray[np.uint8]:
    """Viridis from faint to full share; index 0 (no I/O) transparent."""
    table = pg.colormap.get("viridis").getLookupTable(0.0, 1.0, 256, alpha=True)
    table[0] = (0, 0, 0, 0)
    return np.asarray(table, dtype=np.uint8)


class LatencyMap(QWidget):
    """The heat map of one phase at a time, a chooser of the phases seen, the stalls in words."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._maps: dict[MapKey, PhaseMap] = {}
        self._shown: MapKey | None = None
        self._follow = True  # show the newest phase until the user chooses one
        self._dirty = False
        self.chooser = QComboBox()
        self.chooser.activated.connect(self._on_chosen)
        self.stall_label = QLabel()
        self.stall_label.setWordWrap(True)
        # under the plot, never over its data: what the lines and the colours mean
        self.legend = QLabel(legend_html())
        self.legend.setObjectName("latencyLegend")
        self.legend.setWordWrap(True)
        self.plot = pg.PlotWidget(axisItems={"left": LatencyAxis("left")})
        self.plot.setMinimumHeight(MAP_MIN_PX)
        item = self.plot.getPlotItem()
        item.setLogMode(x=False, y=True)
        item.setMenuEnabled(False)
        item.setMouseEnabled(x=True, y=False)
        item.setDownsampling(auto=True, mode="peak")  # the lines: a min/max pair per pixel
        item.setClipToView(True)
        item.setLabel("left", "latency")
        item.getAxis("left").setStyle(maxTextLevel=0)  # decades named; 2..9 between, unnamed
        item.setLabel("bottom", "time since the run began (s)")
        item.getAxis("bottom").enableAutoSIPrefix(False)  # seconds, never "(x0.001)"
        self.image = pg.ImageItem(axisOrder="col-major")
        self.image.setLookupTable(_lookup_table())
        item.addItem(self.image)
        self.lines = {
            key: item.plot([], [], pen=pg.mkPen(colour, width=1), name=key)
            for key, colour in _LINES.items()
        }
        self.stall_marks = item.plot(
            [], [], pen=None, symbol="t", symbolBrush="#ff2020", symbolPen="#000000", symbolSize=9
        )
        # in the plot's place until a run's first intervals come (no empty axes meanwhile);
        # a page of a stack: swapping it lays nothing else out again
        self.waiting = QLabel()
        self.waiting.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.waiting.setWordWrap(True)
        self.waiting.setEnabled(False)  # greyed, as a note
        top = QHBoxLayout()
        top.addWidget(QLabel("Latency over time:"))
        top.addWidget(self.chooser, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        self.area = QStackedLayout()
        layout.addLayout(self.area, 1)  # first: a stack without a parent shows its current
        self.area.addWidget(self.plot)  # widget as a window of its own, taking the focus
        self.area.addWidget(self.waiting)
        layout.addWidget(self.legend)
        layout.addWidget(self.stall_label)

    # --- data -------------------------------------------------------------------------------
    def clear(self) -> None:
        self._maps.clear()
        self._shown, self._follow, self._dirty = None, True, False
        self.chooser.clear()
        self._draw(None)

    def expect(self, words: str) -> None:
        """Empty, saying in the plot's place when its intervals will come (a group's come at
        each phase's end): the map keeps its place from a run's start, and the page is not
        laid out again when they do."""
        self.clear()
        self.waiting.setText(words)
        self.area.setCurrentWidget(self.waiting)
        self.legend.hide()  # nothing drawn to explain yet

    def add_sample(self, sample: Sample) -> None:
        """Append one sample's interval (drawing waits for refresh()); one without latency
        adds nothing."""
        if sample.latency_us is None or sample.host == "total":
            return
        key: MapKey = (sample.host, sample.phase.value, sample.repetition)
        self._add(key, sample.t_s, sample.latency_us, sample.histogram)

    def show_intervals(self, intervals: Sequence[LatencyInterval]) -> None:
        """A stored run's intervals (the History detail): its first phase shown."""
        self.clear()
        for interval in intervals:
            key: MapKey = (interval.host, interval.phase, interval.repetition)
            self._add(key, interval.t_s, interval.latency, interval.histogram)
        if self._maps:
            self.show_map(next(iter(self._maps)))

    def _add(
        self, key: MapKey, t_s: float, latency: IntervalLatency, histogram: LatencyBuckets | None
    ) -> None:
        if key not in self._maps:
            if not self._maps:
                self.area.setCurrentWidget(self.plot)
                self.legend.show()
            self._maps[key] = PhaseMap()
            self.chooser.addItem(_label(key))
            if self._follow:
                self._shown = key
                self.chooser.setCurrentIndex(self.chooser.count() - 1)
        self._maps[key].add(t_s, latency, histogram)
        self._dirty = self._dirty or key == self._shown

    @property
    def keys(self) -> list[MapKey]:
        return list(self._maps)

    def show_map(self, key: MapKey) -> None:
        """Show this phase's map and stop following the run."""
        self._shown, self._follow, self._dirty = key, False, True
        self.chooser.setCurrentIndex(list(self._maps).index(key))
        self.refresh()

    def shown(self) -> PhaseMap | None:
        return self._maps.get(self._shown) if self._shown is not None else None

    # --- drawing ----------------------------------------------------------------------------
    def refresh(self) -> None:
        if self._dirty:
            self._dirty = False
            self._draw(self.shown())

    def _draw(self, phase: PhaseMap | None) -> None:
        if phase is None or not phase.times:
            self.image.clear()
            for line in (*self.lines.values(), self.stall_marks):
                line.setData([], [])
            self.stall_label.setText("")
            return
        drawn = phase.image()
        if drawn is None:
            self.image.clear()
        else:
            self._paint(*drawn)
        # each interval's lines over the middle of its own columns, in time order
        x = phase.centres()
        order = np.argsort(x, kind="stable")
        for key, line in self.lines.items():
            line.setData(x[order], np.asarray(phase.percentiles[key])[order])
        stalls = phase.stalls
        marked = {t: x[i] for i, t in enumerate(phase.times)}
        self.stall_marks.setData([marked[s.t_s] for s in stalls], [s.p99_us for s in stalls])
        self.stall_label.setText(_stall_words(stalls))

    def _paint(self, shares: npt.NDArray[np.float32], rect: QRectF) -> None:
        self.image.setImage(_shade(shares), levels=(0, 255), autoLevels=False)
        self.image.setRect(rect)

    def _on_chosen(self, index: int) -> None:
        self.show_map(list(self._maps)[index])


def _label(key: MapKey) -> str:
    host, phase, repetition = key
    where = f"{host}: " if host else ""
    return f"{where}{phase.replace('_', ' ')}, pass {repetition}"


def _stall_words(stalls: tuple[Stall, ...]) -> str:
    if not stalls:
        return "No stalls (no interval's p99 over 10x the phase's median p99)."
    listed = ", ".join(f"{s.t_s:.1f} s (p99 {s.p99_us / 1000:,.1f} ms)" for s in stalls[:12])
    more = f" and {len(stalls) - 12} more" if len(stalls) > 12 else ""
    return f"Stalls: {listed}{more}."

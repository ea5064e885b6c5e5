"""The Experiment page's live chart: the metric against the varied parameter, each point's mean
with its 95 % interval as an error bar and the starting settings drawn apart; for a grid of two
parameters, heat maps of the metric and of p99 latency instead.

Sizes (read-ahead, block size, max_sectors_kb...) go on a log axis: doubling steps read best
there, as in the field notes. Items are made once per design and given new data per point, so a
redraw with 50 points of 9 passes stays well inside a frame.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QStackedWidget, QWidget

from stripewise.gui.plot_export import without_export
from stripewise.gui.theme import style_axes
from stripewise.model.experiment import UNORDERED, Metric, Objective, Value, Values, shown_value
from stripewise.model.experiment_result import Point

QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's "no maximum" for a size
POINT_COLOUR = "#0072b2"  # Okabe-Ito blue, as a comparison's first run
BASELINE_COLOUR = "#d55e00"  # vermilion: the starting settings, told apart from the blue
# knobs whose values are sizes or counts spanning decades: a log axis
LOG_PARAMETERS = frozenset(
    {
        "read_ahead_kb",
        "block_size",
        "max_sectors_kb",
        "nr_requests",
        "stripe_cache_size",
        "queue_depth",
        "streams",
        "vm.dirty_bytes",
        "vm.dirty_background_bytes",
    }
)
CELL_DARK = "#202020"  # figures on the light end of viridis
MAX_CELL_LABELS = 100  # a grid this small gets its figures written in its cells
MAX_TICK_LABELS = 12  # more labels under the axis run together (and cost a frame to paint)


# a figure with its unit, as a chart's axis and the points table's heading say it
METRIC_FIGURES = {
    Metric.MB_S: "MB/s",
    Metric.IOPS: "IOPS",
    Metric.LAT_P50_US: "p50 latency (\u00b5s)",
    Metric.LAT_P99_US: "p99 latency (\u00b5s)",
    Metric.CPU_PCT: "CPU %",
    Metric.KB_S_PER_CPU_PCT: "KB/s per CPU %",
}


def objective_text(objective: Objective) -> str:
    """What an experiment judges, in the Benchmark page's words: "seq_read MB/s"."""
    return f"{objective.phase.value} {METRIC_FIGURES[objective.metric]}"


@dataclass(frozen=True)
class Drawn:
    """A point's figures as drawn: its interval is worked out once per pass, not per redraw
    (Student's t quantile is the costly part with 50 points of 9 passes)."""

    values: Values
    mean: float | None
    low: float | None
    high: float | None
    p99: float | None
    baseline: bool
    passes: int

    @classmethod
    def of(cls, point: Point) -> Drawn:
        ci = point.ci95
        low, high = (None, None) if ci is None else ci
        return cls(
            point.values, point.mean, low, high, point.p99_mean, point.baseline, len(point.passes)
        )


def log_axis(name: str, values: Sequence[Value]) -> bool:
    numbers = [v for v in values if isinstance(v, int)]
    return (
        name in LOG_PARAMETERS
        and len(numbers) == len(values)
        and bool(numbers)
        and min(numbers) > 0
    )


class ExperimentChart(QStackedWidget):
    """A line chart (one parameter, or a latency search) or two heat maps (a grid)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Experiment chart")
        self.line = pg.PlotWidget()
        self.line.setMinimumHeight(200)
        without_export(self.line)
        self.grid = pg.GraphicsLayoutWidget()
        without_export(self.grid)
        self.addWidget(self.line)
        self.addWidget(self.grid)
        plot = self.line.getPlotItem()
        # no grid: its lines are most of a redraw's cost (15 ms a pass with 50 points, 6 ms
        # without, bench/experiment_chart.py); the ticks mark the values run, the dashed line
        # the starting settings' level
        self._curve = pg.PlotDataItem(
            pen=pg.mkPen(POINT_COLOUR, width=1),
            symbol="o",
            symbolBrush=POINT_COLOUR,
            symbolPen=POINT_COLOUR,
            symbolSize=8,
            name="mean, 95 % CI",  # short: the chart is 170 px wide at 800x600
        )
        self._bars = pg.ErrorBarItem(pen=pg.mkPen(POINT_COLOUR, width=1.5), beam=0.12)
        self._base = pg.ScatterPlotItem(
            symbol="d", size=14, brush=BASELINE_COLOUR, pen=pg.mkPen(BASELINE_COLOUR)
        )
        self._base_bars = pg.ErrorBarItem(pen=pg.mkPen(BASELINE_COLOUR, width=1.5), beam=0.12)
        self._base_line = pg.InfiniteLine(
            angle=0, pen=pg.mkPen(BASELINE_COLOUR, width=1, style=pg.QtCore.Qt.PenStyle.DashLine)
        )
        _legend_above(plot)
        for item in (self._base_line, self._curve, self._bars, self._base, self._base_bars):
            plot.addItem(item)
        self._base_line.hide()
        self._heat: list[tuple[pg.PlotItem, pg.ImageItem]] = []
        self._labels: list[dict[tuple[int, int], pg.TextItem]] = []  # per heat map, by cell
        self.parameters: tuple[tuple[str, tuple[Value, ...]], ...] = ()
        self._log = False
        self._x_span: tuple[float, float] | None = None  # the x range set, from the values
        self._points: dict[Values, Drawn] = {}
        self._metric = ""
        # no figures beside an axis with nothing on it (pyqtgraph's 0..1 means nothing)
        self._y_values_shown = False
        plot.getAxis("left").setStyle(showValues=False)
        plot.getAxis("left").enableAutoSIPrefix(False)  # never "MB/s (x0.001)" or "(x1000)"
        self.redraws = 0  # for tests and the bench: how many times the data was set
        self.restyle()  # the page's colours before any experiment (pyqtgraph's are black)

    # --- set-up ---------------------------------------------------------------------------
    def set_design(
        self,
        parameters: Sequence[tuple[str, Sequence[Value]]],
        figure: str,
        baseline: bool = True,
    ) -> None:
        """A new experiment: its parameters with their values (a search's: its bounds, and
        no starting settings to draw apart)."""
        self.parameters = tuple((name, tuple(values)) for name, values in parameters)
        self._x_span = None
        legend = self.line.getPlotItem().legend
        if legend is not None:
            legend.removeItem(self._base)
            if baseline:
                legend.addItem(self._base, "start")  # as the points table marks it
        self._metric = figure  # what is judged, with its unit: "seq_read MB/s"
        self._points = {}
        if len(self.parameters) == 2:
            self._build_grid()
            self.setCurrentWidget(self.grid)
        else:
            name, values = self.parameters[0] if self.parameters else ("", ())
            self._log = log_axis(name, values)
            plot = self.line.getPlotItem()
            plot.setLabel("bottom", name + (" (log scale)" if self._log else ""))
            plot.setLabel("left", self._metric)
            self._set_ticks(values)
            self.setCurrentWidget(self.line)
        self._redraw()
        self.restyle()

    def _x(self, value: Value) -> float:
        name, values = self.parameters[0] if self.parameters else ("", ())
        if name in UNORDERED or not isinstance(value, int):
            return float(values.index(value)) if value in values else float(len(values))
        return math.log2(value) if self._log else float(value)

    def _set_ticks(self, values: Sequence[Value]) -> None:
        name = self.parameters[0][0] if self.parameters else ""
        step = math.ceil(len(values) / MAX_TICK_LABELS)
        ticks = [(self._x(v), shown_value(name, v)) for v in values[::step]]
        self.line.getPlotItem().getAxis("bottom").setTicks([ticks, []])

    def _build_grid(self) -> None:
        self.grid.clear()
        self._heat, self._labels = [], []
        (first, first_values), (second, second_values) = self.parameters
        for index, title in enumerate((self._metric, "p99 latency (\u00b5s)")):
            plot = self.grid.addPlot(row=index, col=0, title=title)  # stacked: fits 1024 px
            image = pg.ImageItem()
            image.setColorMap(pg.colormap.get("viridis"))
            plot.addItem(image)
            plot.setLabel("bottom", second)
            plot.setLabel("left", first)
            plot.getAxis("bottom").setTicks(
                [[(i + 0.5, shown_value(second, v)) for i, v in enumerate(second_values)], []]
            )
            plot.getAxis("left").setTicks(
                [[(i + 0.5, shown_value(first, v)) for i, v in enumerate(first_values)], []]
            )
            plot.setMouseEnabled(x=False, y=False)
            plot.setRange(
                xRange=(0, len(second_values)), yRange=(0, len(first_values)), padding=0.02
            )
            self._heat.append((plot, image))
            cells: dict[tuple[int, int], pg.TextItem] = {}
            if len(first_values) * len(second_values) <= MAX_CELL_LABELS:
                for column, row in np.ndindex(len(second_values), len(first_values)):
                    cells[column, row] = pg.TextItem("", color="w", anchor=(0.5, 0.5))
                    cells[column, row].setPos(column + 0.5, row + 0.5)
                    plot.addItem(cells[column, row])
            self._labels.append(cells)

    # --- data -----------------------------------------------------------------------------
    def update_point(self, point: Point) -> None:
        """A pass recorded: this point's mean and interval drawn anew."""
        self._points[point.values] = Drawn.of(point)
        self._redraw()

    def show_points(self, points: Sequence[Point]) -> None:
        self._points = {p.values: Drawn.of(p) for p in points}
        self._redraw()

    def _redraw(self) -> None:
        self.redraws += 1
        if len(self.parameters) == 2:
            self._redraw_grid()
        else:
            self._redraw_line()

    def _redraw_line(self) -> None:
        measured = sorted(
            (p for p in self._points.values() if p.mean is not None),
            key=lambda p: self._x(p.values[0][1]),
        )
        if bool(measured) != self._y_values_shown:
            self._y_values_shown = bool(measured)
            self.line.getPlotItem().getAxis("left").setStyle(showValues=bool(measured))
        others = [p for p in measured if not p.baseline]
        base = [p for p in measured if p.baseline]
        xs = np.array([self._x(p.values[0][1]) for p in others])
        ys = np.array([p.mean or 0.0 for p in others])
        self._curve.setData(xs, ys)
        self._bars.setData(x=xs, y=ys, **_bar_heights(others))
        bx = np.array([self._x(p.values[0][1]) for p in base])
        by = np.array([p.mean or 0.0 for p in base])
        self._base.setData(bx, by)
        self._base_bars.setData(x=bx, y=by, **_bar_heights(base))
        if base:
            self._base_line.setPos(float(by[0]))
            self._base_line.show()
        else:
            self._base_line.hide()
        name = self.parameters[0][0] if self.parameters else ""
        listed = self.parameters[0][1] if self.parameters else ()
        seen = tuple(dict.fromkeys([*listed, *(p.values[0][1] for p in measured)]))
        if len(seen) != len(listed) and name not in UNORDERED:  # a search's probes
            self._set_ticks(sorted(seen, key=self._x))
        positions = sorted(self._x(v) for v in seen)
        if positions and (positions[0], positions[-1]) != self._x_span:
            # set from the values, not auto-ranged: the end markers stay whole, and a redraw
            # does not lay the axis out again
            self._x_span = low, high = positions[0], positions[-1]
            if high == low:
                low, high = low - 1.0, high + 1.0
            self.line.getPlotItem().setXRange(low, high, padding=0.08)

    def _redraw_grid(self) -> None:
        (first, first_values), (second, second_values) = self.parameters
        metric = np.full((len(second_values), len(first_values)), np.nan)
        p99 = np.full_like(metric, np.nan)
        for point in self._points.values():
            found = dict(point.values)
            if first not in found or second not in found:
                continue  # the starting settings when they lie outside the grid
            try:
                row = first_values.index(found[first])
                column = second_values.index(found[second])
            except ValueError:
                continue
            if point.mean is not None:
                metric[column, row] = point.mean
            if point.p99 is not None:
                p99[column, row] = point.p99
        for index, ((_plot, image), data) in enumerate(zip(self._heat, (metric, p99), strict=True)):
            low, high = 0.0, 1.0
            if np.isnan(data).all():
                image.clear()
            else:
                low, high = float(np.nanmin(data)), float(np.nanmax(data))
                high = high if high > low else low + 1.0
                # cells not measured yet stay empty (NaN is drawn transparent), not the lowest
                image.setImage(data, levels=(low, high))
                image.setRect(0, 0, len(second_values), len(first_values))
            for (column, row), label in self._labels[index].items():
                value = data[column, row]
                text = "" if math.isnan(value) else f"{value:,.0f}"
                if label.textItem.toPlainText() != text:  # only the cell that changed
                    label.setText(text)
                # viridis turns light towards its top: dark figures there, white below
                colour = (
                    CELL_DARK if not math.isnan(value) and value - low > 0.6 * (high - low) else "w"
                )
                if label.textItem.defaultTextColor().name() != pg.mkColor(colour).name():
                    label.setColor(colour)

    def clear_points(self) -> None:
        self._points = {}
        self._redraw()

    # --- looks ----------------------------------------------------------------------------
    def restyle(self) -> None:
        palette = self.palette()
        background = palette.color(QPalette.ColorRole.Base)
        self.line.setBackground(background)
        self.grid.setBackground(background)
        style_axes([self.line.getPlotItem(), *(plot for plot, _image in self._heat)], palette)
        text = palette.color(QPalette.ColorRole.Text)
        legend = self.line.getPlotItem().legend
        if legend is not None:
            legend.setLabelTextColor(text)
            for _sample, entry in legend.items:
                entry.setText(entry.text)  # the colour is taken when the text is set
        for plot, _image in self._heat:
            plot.setTitle(plot.titleLabel.text, color=text.name())

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.restyle()  # light <-> dark: axes and legend follow the text colour
        super().changeEvent(event)

    def heat_data(self) -> list[np.ndarray | None]:
        """The metric's and p99's grids as drawn (None before a first point)."""
        return [image.image for _plot, image in self._heat]

    def point_count(self) -> int:
        return sum(1 for p in self._points.values() if p.passes)


def _legend_above(plot: pg.PlotItem) -> None:
    """The legend in a row of its own above the data, in the title's place (the line chart
    has none): inside the view box the top points' line ran through its text."""
    legend = pg.LegendItem(colCount=2, horSpacing=12, frame=False)
    plot.layout.removeItem(plot.titleLabel)
    plot.titleLabel.hide()
    plot.layout.addItem(legend, 0, 1)
    plot.layout.setRowMinimumHeight(0, 0)
    plot.layout.setRowMaximumHeight(0, QWIDGETSIZE_MAX)
    plot.legend = legend  # where pyqtgraph's addLegend keeps it: restyle and tests find it
    left, top, _right, bottom = plot.layout.getContentsMargins()
    plot.layout.setContentsMargins(left, top, 12, bottom)  # the last tick's figures whole


def _bar_heights(points: Sequence[Drawn]) -> dict[str, np.ndarray]:
    """Each point's interval above and below its mean (none yet under 2 passes: 0)."""
    top, bottom = [], []
    for point in points:
        mean = point.mean or 0.0
        top.append(0.0 if point.high is None else point.high - mean)
        bottom.append(0.0 if point.low is None else mean - point.low)
    return {"top": np.array(top), "bottom": np.array(bottom)}

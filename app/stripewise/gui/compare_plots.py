"""The comparison window's charts and its sweep table: each run's MB/s over time in one phase,
and a figure against the one parameter the runs differ in (`model.compare_sweep`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from stripewise.gui.compare_cells import figure_name, number, shown_unit
from stripewise.model.compare import Comparison, MetricRow
from stripewise.model.compare_sweep import Sweep
from stripewise.model.latency import p99_over_time
from stripewise.services.history import CompareSeries

# Okabe-Ito: eight colours told apart with every common colour-vision deficiency
RUN_COLOURS = (
    "#0072b2",
    "#e69f00",
    "#009e73",
    "#cc79a7",
    "#56b4e9",
    "#d55e00",
    "#f0e442",
    "#8c8c8c",  # grey rather than black: it shows on dark backgrounds too
)


def run_colour(index: int) -> str:
    return RUN_COLOURS[index % len(RUN_COLOURS)]


def draw_series(
    plot: pg.PlotWidget,
    c: Comparison,
    series: CompareSeries,
    phase: str,
    label: Callable[[int], str],
    scale: float = 1.0,
) -> None:
    """One line per run, from its first sample of the phase; MB/s times `scale`, on an axis
    from 0."""
    lines = [series.get(detail.summary.id, {}).get(phase, ((), ())) for detail in c.runs]
    scaled = [(xs, [y * scale for y in ys]) for xs, ys in lines]
    _draw_runs(plot, scaled, label)
    # from 0, never below: a flat 0 MB/s line was centred on an axis of -0.4..0.4 MB/s
    top = max((y for _xs, ys in scaled for y in ys if math.isfinite(y)), default=0.0)
    plot.setLimits(yMin=0.0)
    plot.setYRange(0.0, top * 1.05 if top > 0 else 1.0, padding=0.0)


def draw_latency(
    plot: pg.PlotWidget, c: Comparison, phase: str, label: Callable[[int], str]
) -> bool:
    """Each run's interval p99 in the phase against seconds since its first interval, on a
    log scale, in its colour; -> whether any run has one."""
    plot.clear()
    lines = [p99_over_time(detail.latency).get(phase, ((), ())) for detail in c.runs]
    _draw_runs(plot, lines, label)
    return any(xs for xs, _ys in lines)


def _draw_runs(
    plot: pg.PlotWidget,
    lines: Sequence[tuple[Sequence[float], Sequence[float]]],
    label: Callable[[int], str],
) -> None:
    """Each run's line in its colour, from the phase's start. A phase shorter than two
    sampling periods has one point: a dot, not a line, over the phase's first second (not
    -0.5..0.5 around it)."""
    decimated(plot)
    longest = 0.0
    for index, (xs, ys) in enumerate(lines):
        if not xs:
            continue
        longest = max(longest, xs[-1])
        colour = run_colour(index)
        plot.plot(
            list(xs),
            list(ys),
            pen=pg.mkPen(colour, width=1),
            name=label(index),
            symbol="o" if len(xs) < 3 else None,
            symbolBrush=colour,
            symbolPen=colour,
            symbolSize=7,
            autoDownsampleFactor=1.0,  # one min/max pair per pixel column
        )
    if longest > 0:
        plot.enableAutoRange(axis="x")
    else:
        plot.setXRange(0.0, 1.0, padding=0.02)


def decimated(plot: pg.PlotWidget) -> None:
    """A run of 2 hours at 10 Hz is 72,000 samples a line: each line draws only the samples in
    view, as one min/max pair per pixel column (pyqtgraph's peak downsampling keeps a spike of
    one sample), so a comparison of long runs redraws as fast as one of short runs."""
    plot.setClipToView(True)
    plot.setDownsampling(auto=True, mode="peak")


def draw_sweep(plot: pg.PlotWidget, sweep: Sweep, row: MetricRow, mib: bool = False) -> None:
    """The row's figure of each run against the parameter, with each run's own spread."""
    scale = shown_unit(row.unit, mib)[0]
    points = sorted(
        (x, y * scale, None if spread is None else (spread.low * scale, spread.high * scale))
        for x, y, spread in zip(sweep.values, row.shown_values, row.spreads, strict=True)
        if y is not None
    )
    xs = [p[0] for p in points]
    # doubling steps (chunk 64..1024, block 4K..1M) read best on a log axis, as in the notes
    log_x = bool(xs) and min(xs) > 0 and max(xs) / min(xs) >= 8
    plot.setLogMode(x=log_x, y=False)
    # ticks at the values that were run: a log axis's own minor labels run together
    plot.getAxis("bottom").setTicks(
        [[(math.log10(x) if log_x else x, f"{x:g}") for x in sorted(set(xs))], []]
    )
    colour = RUN_COLOURS[0]
    plot.plot(
        xs,
        [p[1] for p in points],
        pen=pg.mkPen(colour, width=1),
        symbol="o",
        symbolBrush=colour,
        symbolPen=colour,
    )
    spread = [(x, y, s) for x, y, s in points if s is not None]
    if spread:  # each run's own spread, so a step inside it is seen to be noise
        positions = [math.log10(x) if log_x else x for x, _y, _s in spread]
        plot.addItem(
            pg.ErrorBarItem(
                x=np.array(positions),
                y=np.array([y for _x, y, _s in spread]),
                top=np.array([high - y for _x, y, (_low, high) in spread]),
                bottom=np.array([y - low for _x, y, (low, _high) in spread]),
                beam=0.02 if log_x else 0.0,
                pen=pg.mkPen(colour, width=1),
            )
        )
    unit = f" ({sweep.unit})" if sweep.unit else ""
    plot.setLabel("bottom", f"{sweep.label}{unit}")
    plot.setLabel("left", f"{figure_name(row.metric, row.unit, mib)}, mean of passes")


def fill_sweep_table(table: QTableWidget, c: Comparison, mib: bool = False) -> None:
    """Like the field notes' chunk-size table: one row per parameter value."""
    table.clear()
    sweep = c.sweep
    if sweep is None:
        table.setRowCount(0)
        return
    rows = [row for row in c.rows if any(v is not None for v in row.values)]
    order = sorted(range(len(c.runs)), key=lambda i: sweep.values[i])
    table.setColumnCount(1 + len(rows))
    table.setHorizontalHeaderLabels(
        [sweep.label] + [f"{r.phase}\n{figure_name(r.metric, r.unit, mib)}\nmean" for r in rows]
    )
    table.setRowCount(len(order))
    for line, i in enumerate(order):
        table.setItem(line, 0, QTableWidgetItem(f"{sweep.values[i]:g}"))
        for column, row in enumerate(rows, start=1):
            item = QTableWidgetItem(number(row.shown_values[i], shown_unit(row.unit, mib)[0]))
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(line, column, item)
    table.resizeColumnsToContents()

"""The Experiment page's live chart: how long drawing one new pass takes with 50 points of 9
passes on screen (the issue's target: under 16 ms, a frame at 60 Hz).

`python -m bench --only experiment-chart` runs `redraw_ms()` in-process on an offscreen
QApplication; `python -m bench.experiment_chart` prints the median and the worst.
"""

from __future__ import annotations

import os
import random
import time

POINTS = 50
PASSES = 9


def redraw_ms(rounds: int = 50, grid: bool = False) -> list[float]:
    """Milliseconds of update_point() plus the repaint it causes, one point's new pass each
    round, with POINTS points of PASSES passes already drawn (1024x700 chart). `grid`: a
    10 x 5 grid's heat maps instead of one parameter's line."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from dataclasses import replace

    from PySide6.QtWidgets import QApplication

    from stripewise.gui.experiment_chart import ExperimentChart
    from stripewise.model.experiment_result import Point

    app = QApplication.instance() or QApplication([])
    rng = random.Random(1)
    chart = ExperimentChart()
    chart.resize(1024, 700)
    chart.show()
    if grid:
        depths, blocks = [2**n for n in range(10)], [4096 * 4**n for n in range(5)]
        parameters = [("queue_depth", depths), ("block_size", blocks)]
        grid_values = [(("queue_depth", d), ("block_size", b)) for d in depths for b in blocks]
    else:
        sizes = [16 * (n + 1) for n in range(POINTS)]  # read_ahead_kb 16..800 on a log axis
        parameters = [("read_ahead_kb", sizes)]
        grid_values = [(("read_ahead_kb", size),) for size in sizes]
    chart.set_design(parameters, "seq_read MB/s")
    points = []
    for index, values in enumerate(grid_values):
        level = 400.0 + 3.0 * index
        passes = tuple(level * (1 + 0.05 * rng.gauss(0, 1)) for _ in range(PASSES))
        p99 = tuple(900.0 * (1 + 0.1 * rng.gauss(0, 1)) for _ in range(PASSES))
        point = Point(values, passes, tuple(range(PASSES)), p99, baseline=index == 0)
        points.append(point)
        chart.update_point(point)
    app.processEvents()
    timings = []
    for round_number in range(rounds):
        index = round_number % len(points)
        point = points[index]
        fresh = point.passes[0] * (1 + 0.05 * rng.gauss(0, 1))
        points[index] = replace(point, passes=(*point.passes[1:], fresh))
        started = time.perf_counter()
        chart.update_point(points[index])
        app.processEvents()  # the repaint is part of the cost
        timings.append((time.perf_counter() - started) * 1000)
    chart.close()
    chart.deleteLater()
    app.processEvents()
    return timings


if __name__ == "__main__":
    for grid in (False, True):
        values = sorted(redraw_ms(grid=grid))
        what = "grid 10x5" if grid else "line"
        print(f"{what}: median {values[len(values) // 2]:.2f} ms, max {values[-1]:.2f} ms")

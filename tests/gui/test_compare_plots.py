"""The comparison window's charts of long runs: each line drawn as the pixel columns of its
view, without losing a peak."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QApplication

from stripewise.gui.compare_plots import draw_latency, draw_series
from stripewise.model.latency import IntervalLatency, LatencyInterval


def test_a_2_hour_run_is_drawn_decimated_with_its_spike(qtbot: Any) -> None:
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.resize(800, 400)
    plot.show()
    qtbot.waitExposed(plot)
    rng = np.random.default_rng(5)
    xs = list(np.arange(72_000) / 10.0)
    ys = list(800 + 80 * rng.standard_normal(72_000))
    ys[40_001] = 6_000.0  # one sample
    runs = [SimpleNamespace(summary=SimpleNamespace(id=7))]
    draw_series(plot, SimpleNamespace(runs=runs), {7: {"seq_write": (xs, ys)}}, "seq_write", str)
    QApplication.processEvents()
    (curve,) = plot.getPlotItem().listDataItems()
    drawn_x, drawn_y = curve.getData()
    assert 0 < len(drawn_x) < 4_000  # a min/max pair per pixel column, not 72,000 points
    assert drawn_y.max() == 6_000.0
    original_x, _y = curve.getOriginalDataset()
    assert len(original_x) == 72_000  # every sample kept: only the drawing is decimated


def test_a_phase_of_one_latency_interval_is_a_dot_over_its_first_second(qtbot: Any) -> None:
    """A short phase logs one interval: a line of one point draws nothing, so it is a dot, as
    its throughput is, over a second from the phase's start (not -0.5..0.5)."""
    plot = pg.PlotWidget()
    plot.setLogMode(x=False, y=True)
    qtbot.addWidget(plot)
    one = LatencyInterval(None, "seq_write", 1, 0.07, IntervalLatency(900.0, 2500.0, 4000.0), None)
    runs = [SimpleNamespace(latency=(one,))]
    assert draw_latency(plot, SimpleNamespace(runs=runs), "seq_write", str)
    (dot,) = plot.getPlotItem().listDataItems()
    assert dot.opts["symbol"] == "o" and list(dot.getOriginalDataset()[1]) == [2500.0]
    low, high = plot.getPlotItem().viewRange()[0]
    assert low > -0.1 and high >= 1.0

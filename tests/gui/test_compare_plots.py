"""The comparison window's charts of long runs: each line drawn as the pixel columns of its
view, without losing a peak."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QApplication

from stripewise.gui.compare_plots import draw_series


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

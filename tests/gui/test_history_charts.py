"""A stored steady-state run with its latency over time, on the History page at the console's
1024x768 and at 1280x900: its charts, one at a time under their tabs, show their axes whole
and the page neither scrolls nor overflows. Side by side, each chart had about 200 px at
1024x768 (the page overflowed sideways, the verdict wrapped a word a line) and at 1280x900 the
rounds lost their x axis below the window. A real run: the CLI, the helper, the built-in
engine."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, QSize
from PySide6.QtWidgets import QScrollArea, QWidget

from stripewise.gui.history_page import HistoryPage
from stripewise.gui.run_charts import LATENCY_TAB, ROUNDS_MIN_PX, STEADY_TAB
from tests.fixtures.cancelled_run import stripewise
from tests.gui.conftest import WindowFactory


@pytest.fixture(scope="module")
def steady_run_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("steady-history")
    (folder / "target").mkdir()
    url = f"sqlite:///{folder / 'history.db'}"
    done = stripewise(
        url,
        *("bench", "--target", str(folder / "target"), "--size", "8M", "--engine", "builtin"),
        *("--phases", "seq_write", "--steady-state", "--max-rounds", "5", "--rate", "2"),
        "--save",
    )
    assert done.returncode in (0, 1), done.stderr  # 1: flagged (never steady in 5 rounds)
    return url


def whole_in(widget: QWidget, window: QWidget) -> bool:
    """Shown, and its whole rectangle inside the window's."""
    top_left = widget.mapTo(window, QPoint(0, 0))
    inside = window.rect().contains(top_left) and window.rect().contains(
        top_left + QPoint(widget.width() - 1, widget.height() - 1)
    )
    return widget.isVisible() and inside


@pytest.mark.parametrize("size", [QSize(1024, 768), QSize(1280, 900)], ids=str)
def test_a_runs_charts_show_whole_one_at_a_time(
    make_window: WindowFactory, steady_run_db: str, qtbot: Any, size: QSize
) -> None:
    window = make_window(url=steady_run_db, view="history")
    window.resize(size)
    page = window.page_widgets["history"]
    assert isinstance(page, HistoryPage)
    qtbot.waitUntil(lambda: window.size() == size)
    page.show_run(1)
    qtbot.waitUntil(lambda: page.shown_run is not None, timeout=5_000)
    detail = page.shown_run
    assert detail is not None and detail.rounds and detail.latency
    charts = page.detail.charts
    qtbot.waitUntil(lambda: charts.isVisible(), timeout=2_000)
    qtbot.wait(200)  # laid out
    area = window.findChild(QScrollArea, "pageScroll")
    assert area is not None
    assert not area.verticalScrollBar().isVisible(), "the page scrolled"
    assert not area.horizontalScrollBar().isVisible(), "the page overflowed sideways"
    assert charts.tabs.isVisible()

    assert charts.tabs.currentIndex() == STEADY_TAB
    rounds = charts.steady_rounds
    assert rounds.isVisible() and charts.latency_map.isHidden()
    qtbot.waitUntil(lambda: whole_in(rounds.plot, window), timeout=2_000)  # its axes whole
    assert rounds.plot.height() >= ROUNDS_MIN_PX
    charts.tabs.setCurrentIndex(LATENCY_TAB)
    assert charts.latency_map.isVisible() and rounds.isHidden()
    qtbot.waitUntil(lambda: whole_in(charts.latency_map, window), timeout=2_000)

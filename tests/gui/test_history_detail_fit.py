"""The History page's run detail keeps bonnie++'s results table whole when the pane is
shorter than its rows (at 1280x900 under a long run list its vertical scroll bar took the
room of "KB/s per CPU %", which read "7,22"), and names its other figures in words, in µs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from stripewise.gui.history_detail import OtherFigures, RunDetailPane
from stripewise.model.run import ResultValue
from tests.fixtures.compared_runs import run

_FIGURES = (
    ("seq_write", 152.0, 21.0, 7228.0),
    ("rewrite", 73.3, 12.0, 6105.0),
    ("seq_read", 309.0, 19.0, 16264.0),
)


def _bonnie_run() -> Any:
    results: list[ResultValue] = []
    for phase, mb_s, cpu, efficiency in _FIGURES:
        results += [
            ResultValue(phase, "throughput", "MB/s", mb_s),
            ResultValue(phase, "cpu", "%", cpu),
            ResultValue(phase, "efficiency", "KB/s per CPU %", efficiency),
            ResultValue(phase, "latency_max", "us", 951_000.0),
        ]
    results.append(ResultValue("random_read", "iops", "IOPS", 689.0))
    return replace(run(5, ctx={}), results=tuple(results), source="imported")


def test_a_short_pane_keeps_the_results_columns_whole(qtbot: Any) -> None:
    pane = RunDetailPane()
    qtbot.addWidget(pane)
    pane.resize(1216, 200)  # shorter than the table's rows: it scrolls up and down
    pane.show()
    pane.show_detail(_bonnie_run())
    qtbot.waitExposed(pane)
    qtbot.wait(50)
    table = pane.results
    assert table.verticalScrollBar().isVisible(), "the pane is meant to be short"
    assert table.horizontalScrollBar().maximum() == 0, "a column is cut"


def test_other_figures_are_named_in_words_and_micro_seconds(qtbot: Any) -> None:
    pane = RunDetailPane()
    qtbot.addWidget(pane)
    pane.show_detail(_bonnie_run())
    other = pane.other_figures
    rows = {
        other.item(r, 0).text(): (other.item(r, 1).text(), other.item(r, 3).text())
        for r in range(other.rowCount())
    }
    assert rows["rewrite"] == ("Latency max", "\u00b5s")
    assert other.isColumnHidden(4), "no figure here was imported in another unit"


def test_the_room_left_goes_to_the_figures_words_not_their_unit(qtbot: Any) -> None:
    """With "As imported" hidden, the last column shown, Unit, took the room left: 426 px
    between "µs" and its value. The figure's words take it; each other column is as wide
    as its contents."""
    other = OtherFigures()
    qtbot.addWidget(other)
    other.show_values(_bonnie_run().results)
    other.resize(700, 300)
    other.show()
    qtbot.waitExposed(other)
    header = other.horizontalHeader()
    unit = other.HEADERS.index("Unit")
    assert other.isColumnHidden(len(other.HEADERS) - 1)
    assert header.sectionSize(unit) <= max(
        other.sizeHintForColumn(unit), header.sectionSizeHint(unit)
    )
    shown = [c for c in range(other.columnCount()) if not other.isColumnHidden(c)]
    assert sum(header.sectionSize(c) for c in shown) >= other.viewport().width() - 1
    assert header.sectionSize(1) > other.sizeHintForColumn(1)  # the words took the rest

"""The Experiment page's kept experiments, on a real SQLite history built from model values
(no benchmark runs): listed newest first, one opened draws its chart and card, exported to a
file that parses, trashed and restored with its runs, two read-ahead sweeps compared and a grid
refused; and while a real experiment runs, the Benchmark page's Start waits, saying why."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox, QStyle

from stripewise.cli.main import main
from stripewise.gui.bench_page import BenchPage
from stripewise.gui.experiment_kept import COLUMNS, KeptExperiments, summary_cells
from stripewise.gui.experiment_kept_compare import KeptComparisonDialog
from stripewise.gui.experiment_page import ExperimentPage
from stripewise.gui.experiment_pass_note import EXPERIMENT_RUNNING
from stripewise.history.database import Database, open_database, path_to_url
from stripewise.history.experiments import create_experiment, finish_experiment, list_experiments
from stripewise.history.store import HistoryStore
from stripewise.model.bench import Phase
from stripewise.model.experiment import Design, Metric, Objective, Values
from stripewise.model.experiment_plan import LatencySearch
from stripewise.model.experiment_result import Verdict
from tests.fixtures.experiments import (
    HOST,
    grid_design,
    grid_means,
    read_ahead_design,
    read_ahead_means,
    simulated_result,
    store_point_runs,
)
from tests.gui.conftest import WindowFactory
from tests.gui.test_experiment_page import design, experiment_page, on_directory, run_to_end

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
START = (("read_ahead_kb", 128),)


def _kept(
    db: Database, name: str, design: Design, means: dict[Values, float], start: Values, days: int
) -> int:
    experiment_id = create_experiment(
        db, name, design, host_info=HOST, created_at=T0 + timedelta(days=days)
    )
    runs = store_point_runs(db, experiment_id, design)
    finish_experiment(db, experiment_id, simulated_result(design, means, start, runs), "complete")
    return experiment_id


@pytest.fixture
def kept_url(tmp_path: Path) -> str:
    """Read-ahead before (1) and after (3) a change of HBA, a grid between (2)."""
    url = path_to_url(tmp_path / "kept.db")
    with open_database(url) as db:
        _kept(db, "read-ahead, old HBA", read_ahead_design(), read_ahead_means(1.2), START, 0)
        grid_start = (("queue_depth", 1), ("block_size", 4096))
        _kept(db, "raid qd x bs", grid_design(), grid_means(), grid_start, 1)
        _kept(db, "read-ahead, new HBA", read_ahead_design(), read_ahead_means(1.5), START, 2)
    return url


def kept_view(make_window: WindowFactory, url: str, qtbot: Any) -> tuple[ExperimentPage, Any]:
    window = make_window(url=url, view="experiment")
    page = experiment_page(window)
    page.tabs.setCurrentWidget(page.kept)
    qtbot.waitUntil(lambda: len(page.kept.summaries) == 3, timeout=10_000)
    return page, page.kept


def open_one(kept: KeptExperiments, experiment_id: int, qtbot: Any) -> None:
    kept.select(experiment_id)
    qtbot.waitUntil(
        lambda: (
            kept.detail.kept is not None and kept.detail.kept.stored.summary.id == experiment_id
        ),
        timeout=10_000,
    )


def runs_of(url: str, experiment_id: int, *, trash: bool) -> list[int]:
    with open_database(url) as db:
        listed = HistoryStore(db).list_runs(trash=trash)
    return sorted(r.id for r in listed if f"experiment:{experiment_id}" in r.tags)


def test_kept_experiments_are_listed_newest_first(
    make_window: WindowFactory, kept_url: str, qtbot: Any
) -> None:
    page, kept = kept_view(make_window, kept_url, qtbot)
    assert page.tabs.tabText(1) == "Kept Experiments (3)"
    assert [s.id for s in kept.summaries] == [3, 2, 1]
    cells = [kept.table.item(2, c).text() for c in range(kept.table.columnCount())]
    assert cells[:2] == ["1", "read-ahead, old HBA"]
    assert cells[3:] == [
        "/dev/loop7", "read_ahead_kb", "better", "read_ahead_kb=512", "3", "6", "complete"
    ]  # fmt: skip
    assert kept.table.item(1, 4).text() == "queue_depth, block_size"
    assert kept.count.text() == "3 experiments kept, newest first"


def test_opening_one_draws_its_chart_points_and_card_with_apply(
    make_window: WindowFactory, kept_url: str, qtbot: Any
) -> None:
    page, kept = kept_view(make_window, kept_url, qtbot)
    open_one(kept, 1, qtbot)
    detail = kept.detail
    assert detail.chart.currentWidget() is detail.chart.line
    assert detail.chart.point_count() == 3
    assert detail.points.passes_shown() == {
        "read_ahead_kb=128": 5, "read_ahead_kb=512": 5, "read_ahead_kb=4096": 5
    }  # fmt: skip
    assert detail.card.verdict is Verdict.BETTER
    assert "read_ahead_kb=512" in detail.card.title.text()
    assert "+20.0 %" in detail.card.change.text()
    assert detail.card.apply_button.isVisibleTo(page)  # a tunable, better: Apply offered
    qtbot.mouseClick(detail.card.apply_button, Qt.MouseButton.LeftButton)
    box = detail.apply.box_up  # the preview, from the starting settings it measured
    assert box is not None and "loop7  read_ahead_kb: 128 \u2192 512" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert detail.apply.box_up is None  # declined: nothing written
    assert detail.title.text().startswith("#1 read-ahead, old HBA: /dev/loop7 on thumper")
    # what is judged, in the Benchmark page's words with its unit, never its key (mb_s)
    assert "; seq_read MB/s; " in detail.title.text()
    assert detail.chart.line.getPlotItem().getAxis("left").labelText == "seq_read MB/s"
    mean = detail.points.horizontalHeaderItem(2)
    assert mean is not None and mean.text().replace("\n", " ") == "Mean MB/s"  # or folded

    open_one(kept, 2, qtbot)  # the grid: heat maps of the metric and of p99
    assert detail.chart.currentWidget() is detail.chart.grid
    heat = detail.chart.heat_data()
    assert len(heat) == 2 and all(h is not None for h in heat)
    assert not detail.card.apply_button.isVisibleTo(page)  # workload values: nothing to apply


@pytest.mark.parametrize(
    ("picked", "suffix"),
    [
        ("JSON (*.json)", "json"),
        ("CSV (*.csv)", "csv"),
        ("HTML report (*.html)", "html"),
        ("HTML report (*.html)", "csv"),  # the name typed decides, not the default filter
    ],
)
def test_export_writes_a_file_that_parses(
    make_window: WindowFactory,
    kept_url: str,
    qtbot: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    picked: str,
    suffix: str,
) -> None:
    _page, kept = kept_view(make_window, kept_url, qtbot)
    target = tmp_path / f"chosen.{suffix}"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_a, **_k: (str(target), picked))
    open_one(kept, 2, qtbot)
    qtbot.mouseClick(kept.export_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "written to" in kept.note.text(), timeout=10_000)
    text = target.read_text(encoding="utf-8")
    if suffix == "json":
        assert json.loads(text)["id"] == 2
    elif suffix == "html":
        parser = HTMLParser()
        parser.feed(text)
        parser.close()
        assert text.startswith("<!DOCTYPE html>") and "<svg" in text  # with its charts
    else:
        assert len(list(csv.DictReader(text.splitlines()))) == 6  # a row per grid point


def test_delete_moves_its_runs_to_the_trash_and_restore_brings_them_back(
    make_window: WindowFactory, kept_url: str, qtbot: Any
) -> None:
    page, kept = kept_view(make_window, kept_url, qtbot)
    runs = runs_of(kept_url, 3, trash=False)
    assert len(runs) == 6
    open_one(kept, 3, qtbot)
    qtbot.mouseClick(kept.delete_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: [s.id for s in kept.summaries] == [2, 1], timeout=10_000)
    assert "Experiment 3 and its 6 runs moved to the trash" in kept.note.text()
    assert runs_of(kept_url, 3, trash=True) == runs and runs_of(kept_url, 3, trash=False) == []
    assert page.tabs.tabText(1) == "Kept Experiments (2)"
    assert kept.detail.kept is None  # what was open is gone from the list

    kept.scope.setCurrentIndex(kept.scope.findData("trash"))
    qtbot.waitUntil(lambda: [s.id for s in kept.summaries] == [3], timeout=10_000)
    assert kept.restore_button.isVisible() and not kept.delete_button.isVisible()
    kept.select(3)
    qtbot.mouseClick(kept.restore_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: kept.summaries == [], timeout=10_000)
    assert kept.count.text() == "The trash holds no experiment."
    assert runs_of(kept_url, 3, trash=False) == runs and runs_of(kept_url, 3, trash=True) == []
    kept.scope.setCurrentIndex(kept.scope.findData("kept"))
    qtbot.waitUntil(lambda: [s.id for s in kept.summaries] == [3, 2, 1], timeout=10_000)


def test_two_read_ahead_sweeps_compared_and_a_grid_refused(
    make_window: WindowFactory, kept_url: str, qtbot: Any
) -> None:
    _page, kept = kept_view(make_window, kept_url, qtbot)
    kept.select(3, 1)
    assert kept.compare_button.isEnabled()
    qtbot.mouseClick(kept.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(kept.dialogs) and kept.dialogs[-1].isVisible(), timeout=10_000)
    dialog = kept.dialogs[-1]
    assert isinstance(dialog, KeptComparisonDialog)
    assert dialog.windowTitle() == "Experiments #1 and #3 compared"  # the older first
    change, verdict = dialog.change_shown("read_ahead_kb=512")
    assert change.startswith("+25.0 %") and verdict == "better"  # 150 against 120
    change, verdict = dialog.change_shown("read_ahead_kb=128")
    assert change.startswith("+0.0 %") and verdict == "within the noise"
    said = dialog.recommendations.text()
    assert "#1 recommends (better)" in said and "#3 recommends (better)" in said
    assert dialog.differences.isHidden(), "the same benchmark: nothing to say"
    dialog.close()

    kept.select(1, 2)
    qtbot.mouseClick(kept.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: kept.note.text().startswith("Not compared"), timeout=10_000)
    assert (
        "vary different parameters (read_ahead_kb against queue_depth, block_size)"
        in kept.note.text()
    )
    QApplication.processEvents()
    assert len(kept.dialogs) == 1  # no comparison opened for them


def test_the_benchmark_start_waits_while_an_experiment_runs_and_the_list_gains_it(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> None:
    window, page = on_directory(make_window, tmp_path)
    qtbot.waitUntil(lambda: page.kept.count.text().startswith("No experiment kept yet"))
    window.show_view("benchmark")
    bench = window.page_widgets["benchmark"]
    assert isinstance(bench, BenchPage)
    bench.form.queue_depth.setValue(7)  # the admin's own next run: kept through the experiment
    bench.form.file_size.setText("3M")
    window.show_view("experiment")
    design(page, "queue_depth", "1,4")
    seen: list[tuple[bool, str]] = []
    shown: list[tuple[bool, bool, str, dict[str, str]]] = []  # form, note, heading, settings

    def on_point(_point: object) -> None:
        seen.append((bench.start_button.isEnabled(), bench.start_button.toolTip()))
        note = bench.pass_note
        shown.append(
            (not bench.form.isHidden(), not note.isHidden(), note.heading.text(), note.settings())
        )

    page.runner.point.connect(on_point)
    result = run_to_end(page, qtbot)
    assert seen and all(state == (False, EXPERIMENT_RUNNING) for state in seen)
    assert bench.start_button.isEnabled() and bench.start_button.toolTip() == ""
    # each pass listed in the form's place as the helper runs it, never the form's 7 and 3 MiB
    assert [(form, note) for form, note, _h, _s in shown] == [(False, True)] * len(shown)
    depths = [settings["Queue depth"] for _f, _n, _h, settings in shown]
    assert set(depths) == {"1", "4"}, depths
    assert all(settings["Target"] == str(tmp_path / "target") for _f, _n, _h, settings in shown)
    assert all("queue_depth" in heading and "Experiment" in heading for *_x, heading, _s in shown)
    assert not bench.form.isHidden() and bench.pass_note.isHidden()
    assert bench.form.queue_depth.value() == 7 and bench.form.file_size.text() == "3M"
    qtbot.waitUntil(lambda: [s.id for s in page.kept.summaries] == [result.experiment])
    assert page.tabs.tabText(1) == "Kept Experiments (1)"


def _latency_search(db: Database) -> int:
    """A latency target searched on queue_depth 1..64: p99 grows with the depth, 2 ms at 16."""
    base = read_ahead_design()
    design = Design(
        target=base.target,
        spec=base.spec,
        parameters=(),
        objective=Objective(Phase.RANDOM_READ, Metric.IOPS),
        latency_target_us=1000.0,
        search=(1, 64),
    )
    design = replace(design, spec=replace(base.spec, phases=(Phase.RANDOM_READ,)))
    plan = LatencySearch(design, "queue_depth")
    run = 0
    while (values := plan.next_visit()) is not None:
        depth = int(values[0][1])
        run += 1
        plan.record(values, 1000.0 * depth**0.5 * (1 + 0.01 * (run % 3)), 125.0 * depth, None)
    experiment_id = create_experiment(db, "qd under 1 ms", design, host_info=HOST, created_at=T0)
    finish_experiment(db, experiment_id, plan.result(restored=True), "complete")
    return experiment_id


def test_a_latency_search_opens_on_its_parameter_and_a_running_one_cannot_be_deleted(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> None:
    url = path_to_url(tmp_path / "kept.db")
    with open_database(url) as db:
        searched = _latency_search(db)
        running = create_experiment(
            db, "still going", read_ahead_design(), host_info=HOST, created_at=T0
        )
    window = make_window(url=url, view="experiment")
    page = experiment_page(window)
    page.tabs.setCurrentWidget(page.kept)
    kept = page.kept
    qtbot.waitUntil(lambda: len(kept.summaries) == 2, timeout=10_000)
    open_one(kept, searched, qtbot)
    detail = kept.detail
    assert detail.chart.currentWidget() is detail.chart.line
    assert detail.chart.parameters[0][0] == "queue_depth"
    assert detail.chart.point_count() >= 3  # its probes
    assert kept.delete_button.isEnabled()

    open_one(kept, running, qtbot)
    assert "No result kept" in detail.card.title.text()
    assert detail.points.rowCount() == 0
    assert not kept.delete_button.isEnabled()  # its runs are still being written
    assert "Still running" in kept.delete_button.toolTip()


def test_a_comparison_says_what_the_benchmarks_did_differently(
    make_window: WindowFactory, kept_url: str, qtbot: Any
) -> None:
    design = read_ahead_design()
    other = replace(design, spec=replace(design.spec, block_bytes=4096, direct=False))
    with open_database(kept_url) as db:
        four = _kept(db, "read-ahead, 4K buffered", other, read_ahead_means(1.5), START, 3)
    page = experiment_page(make_window(url=kept_url, view="experiment"))
    page.tabs.setCurrentWidget(page.kept)
    kept = page.kept
    qtbot.waitUntil(lambda: len(kept.summaries) == 4, timeout=10_000)
    kept.select(four, 1)
    qtbot.mouseClick(kept.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(kept.dialogs) and kept.dialogs[-1].isVisible(), timeout=10_000)
    dialog = kept.dialogs[-1]
    assert isinstance(dialog, KeptComparisonDialog) and dialog.differences.isVisible()
    assert dialog.differences.text().startswith(
        "The benchmarks differ: Block size 1 MiB vs 4 KiB; Direct I/O yes vs no."
    )
    dialog.close()


def test_on_a_narrow_screen_the_name_gives_way_before_what_to_keep(
    make_window: WindowFactory, kept_url: str, qtbot: Any
) -> None:
    """What to keep was cut (`queue_depth=16, bl…` at 1024x768, `block_…` and a header of
    `:ommend` at 800x600) while the name and the values varied kept their width: they give
    way first, and at 1024x768 what to keep and the verdict are whole."""
    page, kept = kept_view(make_window, kept_url, qtbot)
    page.window().resize(1024, 768)
    qtbot.waitUntil(lambda: kept.table.viewport().width() < 900, timeout=5_000)
    kept.fit_columns()
    table = kept.table
    header = table.horizontalHeader()
    assert header.length() <= table.viewport().width() + 1
    metrics = table.fontMetrics()
    for name in ("Recommended", "Verdict"):
        column = COLUMNS.index(name)
        texts = [table.item(row, column).text() for row in range(table.rowCount())]
        widest = max(metrics.horizontalAdvance(text) for text in [*texts, name])
        assert table.columnWidth(column) >= widest, (name, texts, table.columnWidth(column))
    assert table.columnWidth(COLUMNS.index("Name")) < 220


def test_narrower_than_every_wrapping_the_cells_are_elided_on_one_line(
    make_window: WindowFactory, kept_url: str, qtbot: Any
) -> None:
    """Past the last wrapping the text columns are narrowed to NARROWEST_PX and elided, whole
    in their tooltips: wrapped there, a row grew six lines tall and two experiments filled
    the list."""
    page, kept = kept_view(make_window, kept_url, qtbot)
    table = kept.table
    table.setFixedWidth(360)
    qtbot.waitUntil(lambda: table.viewport().width() < 360, timeout=5_000)
    kept.fit_columns()
    assert not table.wordWrap()
    line = table.verticalHeader().defaultSectionSize()
    assert all(table.rowHeight(row) <= line for row in range(table.rowCount()))
    table.setMinimumWidth(0)
    table.setMaximumWidth(16_777_215)
    page.window().resize(1280, 900)
    qtbot.waitUntil(lambda: table.viewport().width() > 700, timeout=5_000)
    kept.fit_columns()
    assert table.wordWrap()  # wide enough to wrap again where it must


@pytest.mark.parametrize("verdict", list(Verdict))
def test_the_kept_list_says_a_verdict_as_the_cli_does(
    verdict: Verdict, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The list said "no value beats the start" where `experiment show` and `list` say "no
    value beats what you have": one wording, wherever a verdict is read."""
    url = path_to_url(tmp_path / "one.db")
    with open_database(url) as db:
        design = read_ahead_design()
        found = create_experiment(db, "read-ahead", design, host_info=HOST)
        result = simulated_result(design, read_ahead_means(), START, passes=3)
        rec = replace(result.recommendation, verdict=verdict)
        finish_experiment(db, found, replace(result, recommendation=rec), "complete")
        (summary,) = list_experiments(db)
    assert main(["--db", url, "experiment", "list"]) == 0
    table = capsys.readouterr().out
    cell = summary_cells(summary)[COLUMNS.index("Verdict")]
    assert cell in table, (cell, table)


def _lines(text: str, width: int, metrics: Any) -> int:
    """Lines the table needs for `text` wrapped between words at `width` px (a word wider
    than the column counts as cut: many lines)."""
    used, line = 1, 0
    for word in text.split():
        advance = metrics.horizontalAdvance(word)
        if advance > width:
            return 99
        wanted = advance if line == 0 else line + metrics.horizontalAdvance(" ") + advance
        used, line = (used, wanted) if wanted <= width else (used + 1, advance)
    return used


def test_at_800x600_the_list_and_the_points_table_keep_every_value_whole(
    make_window: WindowFactory, kept_url: str, qtbot: Any
) -> None:
    """At 800x600 what to keep read `read_ahead_kb=…`, the name, target and values varied six
    characters each, and the points table's Runs were 26 px ("22, 23" cut): now the list's
    cells wrap between words (Varied and Points give way, said elsewhere) and the chart gives
    the points table the width of its columns."""
    page, kept = kept_view(make_window, kept_url, qtbot)
    page.window().resize(800, 600)
    open_one(kept, 2, qtbot)
    qtbot.waitUntil(lambda: kept.table.viewport().width() < 720, timeout=5_000)
    qtbot.wait(100)  # the listing and the opened one laid out at this width
    table = kept.table
    assert table.horizontalHeader().length() <= table.viewport().width() + 1
    metrics = table.fontMetrics()
    margin = 2 * (table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1)
    for column, heading in enumerate(COLUMNS):
        if heading in ("Verdict", "Recommended", "Name", "Target", "Started"):
            assert not table.isColumnHidden(column), heading
        if table.isColumnHidden(column):
            continue
        for row in range(table.rowCount()):
            text = table.item(row, column).text()
            lines = _lines(text, table.columnWidth(column) - margin, metrics)
            assert lines * metrics.lineSpacing() <= table.rowHeight(row), (heading, text)
    points = kept.detail.points
    header = points.horizontalHeader()
    assert header.length() <= points.viewport().width() + 1
    runs = points.columnCount() - 1
    for row in range(points.rowCount()):
        text = points.item(row, runs).text()
        assert metrics.horizontalAdvance(text) + margin <= header.sectionSize(runs), text

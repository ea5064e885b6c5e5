"""The comparison window driven with pytest-qt on three stored runs: a chunk-size sweep where
one change is beyond the runs' spread and one is not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stripewise.gui.compare_view import CompareWindow
from stripewise.gui.history_page import HistoryPage
from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.run import ResultValue, RunStatus
from tests.fixtures.background import wait_for_deliveries
from tests.gui.conftest import WindowFactory
from tests.seed import HOST

# chunk KiB -> (seq_read MB/s median, min, max): 128 is inside 64's spread, 256 is beyond it
CHUNKS = {64: (400.0, 380.0, 420.0), 128: (410.0, 395.0, 425.0), 256: (520.0, 510.0, 530.0)}


def store_sweep(url: str) -> list[int]:
    db = open_database(url)
    try:
        store = HistoryStore(db)
        host = store.ensure_host(HOST)
        ids = []
        for chunk, (median, low, high) in CHUNKS.items():
            context = {
                "kernel": "6.18.0",
                "ram_bytes": 16 * 2**30,
                "filesystem": "xfs",
                "array": {"device": "md0", "level": "raid5", "chunk_kib": chunk},
                "spec": {"size": 32 * 2**30},
            }
            run_id = store.create_run(
                host,
                name=f"chunk {chunk}K",
                target="/srv/raid",
                engine="builtin",
                engine_version="1",
                spec={"size": 32 * 2**30},
                context=context,
            )
            store.add_samples(
                run_id,
                [
                    SampleRow(
                        i,
                        i / 10,
                        "seq_read" if i < 50 else "seq_write",
                        0,
                        {"engine_read_mb_s": median if i < 50 else 0.0, "engine_write_mb_s": 0.0},
                    )
                    for i in range(100)
                ],
            )
            store.add_results(
                run_id,
                [
                    ResultValue("seq_read", "throughput", "MB/s", median, low, high, 3),
                    ResultValue("seq_read", "latency_p99", "us", 900.0),
                ],
            )
            store.finish_run(run_id, RunStatus.COMPLETE)
            ids.append(run_id)
        return ids
    finally:
        db.close()


@pytest.fixture
def compared(make_window: WindowFactory, db_url: str, qtbot: Any) -> CompareWindow:
    ids = store_sweep(db_url)
    window = make_window(view="history")
    page = window.page_widgets["history"]
    assert isinstance(page, HistoryPage)
    page.select_runs(ids)
    with qtbot.waitSignal(page.compareRequested):
        page.compare_button.click()
    compare = window.compare_windows[-1]
    qtbot.waitUntil(lambda: compare.comparison is not None, timeout=10_000)
    yield compare
    compare.close()


def cell(compare: CompareWindow, figure: str, column: int) -> Any:
    table = compare.results
    row = next(r for r in range(table.rowCount()) if table.item(r, 1).text() == figure)
    return table.item(row, column)


def test_results_are_coloured_only_beyond_the_spread(compared: CompareWindow) -> None:
    assert compared.results.columnCount() == 5
    assert [compared.results.horizontalHeaderItem(c).text() for c in (2, 3, 4)] == [
        f"#{run.summary.id} {run.summary.name}" for run in compared.comparison.runs
    ]
    baseline = cell(compared, "Throughput (MB/s)", 2)
    within = cell(compared, "Throughput (MB/s)", 3)
    beyond = cell(compared, "Throughput (MB/s)", 4)
    assert baseline.text() == "400.0"
    assert within.text() == "410.0  (+2.5 % \u2248)" and not within.font().bold()
    assert beyond.text() == "520.0  (+30.0 %)" and beyond.font().bold()
    assert "noise" in within.toolTip() and "better" in beyond.toolTip()


def test_baseline_can_be_changed(compared: CompareWindow, qtbot: Any) -> None:
    compared.baseline_box.setCurrentIndex(2)
    with qtbot.waitSignal(compared.loaded, timeout=10_000):
        compared._baseline_picked()
    assert compared.comparison.baseline_index == 2
    assert cell(compared, "Throughput (MB/s)", 4).text() == "520.0"
    assert "(baseline)" in compared.heading.text()


def test_series_context_and_sweep(compared: CompareWindow, tmp_path: Path) -> None:
    assert [compared.phase_box.itemText(i) for i in range(compared.phase_box.count())] == [
        "seq_read",
        "seq_write",
    ]
    assert compared.series_plot.getPlotItem().listDataItems() == [], "drawn when first shown"
    compared.tabs.setCurrentIndex(compared.series_index)
    compared.phase_box.setCurrentText("seq_read")
    curves = compared.series_plot.getPlotItem().listDataItems()
    assert len(curves) == 3
    xs, _ys = curves[0].getData()
    assert xs[0] == 0.0, "each phase aligned at its start"
    groups = {
        compared.context.topLevelItem(i).text(0): compared.context.topLevelItem(i)
        for i in range(compared.context.topLevelItemCount())
    }
    changed = [groups[g].child(i).text(0) for g in groups for i in range(groups[g].childCount())]
    assert "array.chunk_kib" in changed and not any("kernel" in key for key in changed)
    assert compared.tabs.isTabEnabled(compared.sweep_index)
    assert compared.sweep_table.rowCount() == 3
    assert [compared.sweep_table.item(r, 0).text() for r in range(3)] == ["64", "128", "256"]
    compared.tabs.setCurrentIndex(compared.sweep_index)
    compared.save("plot", tmp_path / "sweep.svg")
    compared.save("plot", tmp_path / "sweep.png")
    assert (tmp_path / "sweep.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "sweep.png").read_bytes()[:4] == b"\x89PNG"


def test_exports_are_written_off_the_gui_thread(
    compared: CompareWindow, tmp_path: Path, qtbot: Any
) -> None:
    for key in ("csv", "json", "html"):
        with qtbot.waitSignal(compared.saved, timeout=10_000) as said:
            compared.save(key, tmp_path / f"c.{key}")
        assert "written" in said.args[0]
    html = (tmp_path / "c.html").read_text()
    assert "<svg" in html and "chunk 256K" in html and "<script" not in html
    assert "chunk 64K" in (tmp_path / "c.csv").read_text()


def test_closing_before_the_runs_arrive_is_quiet(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    ids = store_sweep(db_url)
    window = make_window(view="history")
    compare = window.compare_runs(ids)
    compare.close()  # deleted on close, while its comparison is still being read
    wait_for_deliveries(qtbot)  # the delivery ran; an exception there would fail this test

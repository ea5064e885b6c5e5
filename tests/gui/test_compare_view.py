"""The comparison window driven with pytest-qt on stored runs: a chunk-size sweep of three
passes each where one change is beyond the passes' noise and one is not; single-pass runs it
can't judge, with the way to run them again; a phase too short for a line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTableWidget, QVBoxLayout, QWidget

from stripewise.gui.bench_form import size_text
from stripewise.gui.bench_page import BenchPage
from stripewise.gui.compare_cells import fit_width
from stripewise.gui.compare_view import CompareWindow
from stripewise.gui.history_page import HistoryPage
from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.run import ResultValue, RunStatus
from stripewise.model.run_context import RunContext
from stripewise.protocol.spec import spec_from_json
from tests.fixtures.background import wait_for_deliveries
from tests.gui.conftest import WindowFactory
from tests.seed import HOST, record_run

# chunk KiB -> seq_read MB/s of three passes: 128 is inside 64's noise, 256 is beyond it
CHUNKS = {64: (380.0, 400.0, 420.0), 128: (395.0, 410.0, 425.0), 256: (510.0, 520.0, 530.0)}
# the spec as the helper normalised it (runs.spec)
SPEC = {
    "target": "/srv/raid",
    "size": 3 * 2**30,
    "block_size": 2**19,
    "random_block_size": 4096,
    "direct": False,
    "phases": ["seq_write", "seq_read"],
    "queue_depth": 4,
    "streams": 2,
    "repetitions": 1,
    "runtime_cap_s": 120.0,
    "sample_rate_hz": 5.0,
    "engine": "builtin",
}


def store_sweep(url: str) -> list[int]:
    db = open_database(url)
    try:
        store = HistoryStore(db)
        host = store.ensure_host(HOST)
        ids = []
        for chunk, passes in CHUNKS.items():
            low, median, high = passes
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
                spec=spec_from_json(dict(SPEC, repetitions=3)),
                context=RunContext.from_json(context),
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
                    ResultValue("seq_read", "throughput", "MB/s", median, low, high, 3, passes),
                    ResultValue("seq_read", "latency_p99", "us", 900.0),
                ],
            )
            store.finish_run(run_id, RunStatus.COMPLETE)
            ids.append(run_id)
        return ids
    finally:
        db.close()


def compared_from_history(make_window: WindowFactory, qtbot: Any, ids: list[int]) -> CompareWindow:
    """These runs selected on the History page and its Compare button clicked, as an admin does;
    the window once its comparison is read."""
    window = make_window(view="history")
    page = window.page_widgets["history"]
    assert isinstance(page, HistoryPage)
    page.select_runs(ids)
    with qtbot.waitSignal(page.compareRequested):
        page.compare_button.click()
    compare = window.compare_windows[-1]
    qtbot.waitUntil(lambda: compare.comparison is not None, timeout=10_000)
    return compare


@pytest.fixture
def compared(make_window: WindowFactory, db_url: str, qtbot: Any) -> CompareWindow:
    compare = compared_from_history(make_window, qtbot, store_sweep(db_url))
    yield compare
    compare.close()


def cell(compare: CompareWindow, figure: str, column: int) -> Any:
    table = compare.results
    row = next(r for r in range(table.rowCount()) if table.item(r, 1).text() == figure)
    return table.item(row, column)


def test_results_are_coloured_only_beyond_the_spread(compared: CompareWindow) -> None:
    assert compared.results.columnCount() == 5
    assert [compared.results.horizontalHeaderItem(c).text() for c in (2, 3, 4)] == [
        f"#{run.summary.id} {run.summary.name}\nmean of passes" for run in compared.comparison.runs
    ]
    baseline = cell(compared, "Throughput (MB/s)", 2)
    within = cell(compared, "Throughput (MB/s)", 3)
    beyond = cell(compared, "Throughput (MB/s)", 4)
    assert baseline.text() == "400.0"
    assert re.fullmatch(r"410\.0  \(\+2\.5 % ± \d+\.\d % \(95 %\) \u2248\)", within.text())
    assert not within.font().bold()
    assert re.fullmatch(r"520\.0  \(\+30\.0 % ± \d+\.\d % \(95 %\)\)", beyond.text())
    assert beyond.font().bold()
    assert within.toolTip().startswith("noise: the means of the passes changed +2.5 % ±")
    assert (
        beyond.toolTip().startswith("better: ") and "3 passes, 510.0 .. 530.0" in beyond.toolTip()
    )
    assert "Holm's correction for the 2 figures tested" in compared.legend.text()
    assert compared.more_passes.isHidden(), "every run has its passes: nothing to run again"


def test_baseline_can_be_changed(compared: CompareWindow, qtbot: Any) -> None:
    compared.baseline_box.setCurrentIndex(2)
    with qtbot.waitSignal(compared.loaded, timeout=10_000):
        compared._baseline_picked()
    assert compared.comparison.baseline_index == 2
    assert cell(compared, "Throughput (MB/s)", 4).text() == "520.0"
    # three passes made, one figure kept: the median the run filed, said as such
    assert cell(compared, "Completion latency p99 (µs)", 2).text() == "900.0 median  (+0.0 % ?)"
    assert "(baseline)" in compared.heading.text()


def test_series_context_and_sweep(compared: CompareWindow, tmp_path: Path) -> None:
    assert [compared.phase_box.itemText(i) for i in range(compared.phase_box.count())] == [
        "seq_write",
        "seq_read",
    ], "bonnie++'s order"
    assert compared.series_plot.getPlotItem().listDataItems() == [], "drawn when first shown"
    compared.tabs.setCurrentIndex(compared.series_index)
    compared.phase_box.setCurrentText("seq_read")
    curves = compared.series_plot.getPlotItem().listDataItems()
    assert len(curves) == 3
    xs, _ys = curves[0].getData()
    assert xs[0] == 0.0, "each phase aligned at its start"
    axis = compared.series_plot.getAxis("bottom")
    assert axis.labelUnits == "s" and "x0.001" not in axis.labelString()
    assert compared.series_note.text() == "Each line starts at its run's first sample of the phase."
    groups = {
        compared.context.topLevelItem(i).text(0): compared.context.topLevelItem(i)
        for i in range(compared.context.topLevelItemCount())
    }
    changed = [groups[g].child(i).text(0) for g in groups for i in range(groups[g].childCount())]
    assert "Chunk size" in changed and not any("kernel" in key.lower() for key in changed)
    assert compared.tabs.isTabEnabled(compared.sweep_index)
    assert compared.sweep_table.rowCount() == 3
    assert [compared.sweep_table.item(r, 0).text() for r in range(3)] == ["64", "128", "256"]
    compared.tabs.setCurrentIndex(compared.sweep_index)
    compared.save("plot", tmp_path / "sweep.svg")
    compared.save("plot", tmp_path / "sweep.png")
    assert (tmp_path / "sweep.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "sweep.png").read_bytes()[:4] == b"\x89PNG"


def contrast(one: QColor, other: QColor) -> float:
    """WCAG's contrast ratio of two colours: 4.5 or more reads as body text."""

    def luminance(colour: QColor) -> float:
        channels = [colour.redF(), colour.greenF(), colour.blueF()]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_over_time_reads_throughput_from_0_with_a_legend_in_the_text_colour(
    compared: CompareWindow, qtbot: Any
) -> None:
    """A phase of 0 MB/s was a flat line in the middle of an axis from -0.4 to +0.4 MB/s, and
    the legend's run names were pyqtgraph's pale grey on the light theme's white."""
    compared.tabs.setCurrentIndex(compared.series_index)
    compared.show()
    compared.phase_box.setCurrentText("seq_write")  # the sweep wrote nothing: 0 MB/s
    assert len(compared.series_plot.getPlotItem().listDataItems()) == 3
    qtbot.wait(50)  # pyqtgraph sets its automatic range as it paints
    low, high = compared.series_plot.getViewBox().viewRange()[1]
    assert low == 0.0 and high > 0.0
    compared.phase_box.setCurrentText("seq_read")  # 400..520 MB/s
    qtbot.wait(50)
    low, high = compared.series_plot.getViewBox().viewRange()[1]
    assert low == 0.0 and high >= 520.0
    background = compared.series_plot.backgroundBrush().color()
    legend = compared.series_plot.getPlotItem().legend
    for _sample, label in legend.items:
        colour = pg.mkColor(label.opts["color"] or pg.getConfigOption("foreground"))
        assert contrast(colour, background) >= 4.5, (label.text, colour.name(), background.name())


def test_throughput_follows_the_app_s_mib_toggle(
    compared: CompareWindow, qtbot: Any, tmp_path: Path
) -> None:
    """The History page's MiB/s toggle reaches an open comparison: throughput's values, its
    spread, its curves and the sweep in MiB/s (2^20 B/s); changes stay percentages and other
    units stay; a comparison opened with the toggle on opens in MiB/s."""
    compared.tabs.setCurrentIndex(compared.series_index)
    compared.phase_box.setCurrentText("seq_read")
    history = compared.parent().page_widgets["history"]
    history.mib_toggle.setChecked(True)
    mib = 1e6 / 2**20
    assert cell(compared, "Throughput (MiB/s)", 2).text() == f"{400 * mib:.1f}" == "381.5"
    beyond = cell(compared, "Throughput (MiB/s)", 4)
    assert re.fullmatch(r"495\.9  \(\+30\.0 % ± \d+\.\d % \(95 %\)\)", beyond.text())
    assert "3 passes, 486.4 .. 505.4 MiB/s" in beyond.toolTip()
    assert cell(compared, "Completion latency p99 (µs)", 2).text() == "900.0 median"
    _xs, ys = compared.series_plot.getPlotItem().listDataItems()[0].getData()
    assert ys[0] == pytest.approx(400 * mib)
    assert compared.series_plot.getAxis("left").labelUnits == "MiB/s"
    assert compared.sweep_table.horizontalHeaderItem(1).text() == (
        "seq_read\nThroughput (MiB/s)\nmean"
    )
    assert compared.sweep_table.item(0, 1).text() == "381.5"
    assert compared.sweep_box.currentText() == "seq_read: Throughput (MiB/s)"
    again = compared.parent().compare_runs(compared.run_ids)
    qtbot.waitUntil(lambda: again.comparison is not None, timeout=10_000)
    assert cell(again, "Throughput (MiB/s)", 2).text() == "381.5"
    again.close()
    history.mib_toggle.setChecked(False)
    assert cell(compared, "Throughput (MB/s)", 2).text() == "400.0"
    assert compared.series_plot.getAxis("left").labelUnits == "MB/s"


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


def store_single_passes(url: str) -> list[int]:
    """Two one-pass runs of SPEC: seq_write sampled once (a phase shorter than two sampling
    periods), seq_read not at all (it ended before its first sample); and an import."""
    db = open_database(url)
    try:
        store = HistoryStore(db)
        host = store.ensure_host(HOST)
        ids = []
        for name, mb_s in (("before", 1329.0), ("after", 2069.0)):
            run_id = store.create_run(
                host,
                name=name,
                target=SPEC["target"],
                engine="builtin",
                engine_version="1",
                spec=spec_from_json(SPEC),
                context=RunContext.from_json({"kernel": "6.18.0"}),
            )
            sample = {"engine_write_mb_s": mb_s, "engine_read_mb_s": 0.0}
            store.add_samples(run_id, [SampleRow(0, 0.18, "seq_write", 1, sample)])
            store.add_results(
                run_id,
                [
                    ResultValue("seq_write", "throughput", "MB/s", mb_s, mb_s, mb_s, 1, (mb_s,)),
                    ResultValue("seq_read", "throughput", "MB/s", mb_s, mb_s, mb_s, 1, (mb_s,)),
                ],
            )
            store.finish_run(run_id, RunStatus.COMPLETE)
            ids.append(run_id)
        return ids
    finally:
        db.close()


def open_comparison(window: Any, qtbot: Any, ids: list[int]) -> CompareWindow:
    compare = window.compare_runs(ids)
    qtbot.waitUntil(lambda: compare.comparison is not None, timeout=10_000)
    return compare


def test_single_passes_can_t_tell_and_the_window_offers_to_run_more(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    """+55.7 % from one pass each is no verdict; the button sets up the Benchmark page with
    the run's stored spec and enough passes for one."""
    ids = store_single_passes(db_url)
    window = make_window(view="history")
    compare = open_comparison(window, qtbot, ids)
    try:
        within = cell(compare, "Throughput (MB/s)", 3)
        assert within.text() == "2,069  (+55.7 % ?)" and not within.font().bold()
        assert within.toolTip().startswith("can't tell: 1 pass each")
        assert compare.more_passes.isVisibleTo(compare)
        assert "Can't tell from 1 pass: run the benchmark again with 3 passes" in (
            compare.more_passes_note.text()
        )
        labels = [b.text() for b in compare.more_passes_buttons]
        assert labels == [f"Run #{ids[0]} with 3 passes...", f"Run #{ids[1]} with 3 passes..."]

        qtbot.mouseClick(compare.more_passes_buttons[1], Qt.MouseButton.LeftButton)
        assert window.current_view == "benchmark"
        page = window.page_widgets["benchmark"]
        assert isinstance(page, BenchPage)
        form = page.form
        assert form.current_target() is not None and form.current_target().path == "/srv/raid"
        assert form.repetitions.value() == 3
        assert form.file_size.text() == size_text(3 * 2**30) == "3G"
        assert form.block.currentText() == "512K" and not form.direct.isChecked()
        assert [p.value for p in form.phases()] == ["seq_write", "seq_read"]
        assert (form.queue_depth.value(), form.streams.value()) == (4, 2)
        assert (form.rate.value(), form.runtime_cap.value()) == (5, 120)
        assert form.preset.currentText() == "Custom"
        assert "press Start" in window.statusBar().currentMessage()
        args = form.start_args()  # the form as set up would run
        assert (args.spec.repetitions, args.spec.block_bytes) == (3, 2**19)
    finally:
        compare.close()


def test_over_time_names_runs_without_a_line_and_why(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    """A phase with one sample is drawn as a dot; a measured run's phase without a sample is
    not called an import; the axis has its unit, so a short phase reads in ms, not x0.001."""
    ids = store_single_passes(db_url)
    window = make_window(view="history")
    compare = open_comparison(window, qtbot, ids)
    try:
        phases = [compare.phase_box.itemText(i) for i in range(compare.phase_box.count())]
        assert phases == ["seq_write", "seq_read"], "bonnie++ order, results' phases included"
        compare.tabs.setCurrentIndex(compare.series_index)
        compare.phase_box.setCurrentText("seq_write")
        curves = compare.series_plot.getPlotItem().listDataItems()
        assert len(curves) == 2 and all(c.opts["symbol"] == "o" for c in curves)
        assert compare.series_note.text() == f"#{ids[0]}, #{ids[1]}: one sample, shown as a dot."
        axis = compare.series_plot.getAxis("bottom")
        assert "x0.001" not in axis.labelString() and axis.labelUnits == "s"
        assert compare.series_plot.getViewBox().viewRange()[0][0] >= -0.05, "from 0 s on"
        assert not compare.series_plot.getAxis("left").autoSIPrefix, "MB/s, never kMB/s"
        compare.phase_box.setCurrentText("seq_read")
        assert compare.series_plot.getPlotItem().listDataItems() == []
        assert compare.series_note.text() == (
            f"#{ids[0]}, #{ids[1]}: no sample (the phase ended before the first one)."
        )
    finally:
        compare.close()


def store_read_ahead_runs(url: str, read_ahead_kib: tuple[int, ...]) -> list[int]:
    """Runs on a directory of a loop device whose read_ahead_kb alone was changed; the disk
    under its backing file (vda) kept its own, as bench_context records both."""
    ids = []
    for kib in read_ahead_kib:
        disks = [
            {"name": "loop0", "role": "measured", "tuning": {"read_ahead_kb": kib}},
            {"name": "vda", "role": "backing", "tuning": {"read_ahead_kb": 128}},
        ]
        context = {"kernel": "6.18.0", "filesystem": "ext4", "disks": disks}
        result = ResultValue("seq_read", "throughput", "MB/s", 100.0 + kib / 64)
        ids.append(record_run(url, f"read-ahead {kib}", context, results=(result,)))
    return ids


def test_only_read_ahead_differing_is_plotted_against_it(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    """The field report: "Against the parameter" was disabled when only read_ahead_kb
    differed between the compared runs."""
    ids = store_read_ahead_runs(db_url, (128, 1024, 4096))
    window = make_window(view="history")
    compare = open_comparison(window, qtbot, ids)
    two = open_comparison(window, qtbot, ids[:2])
    try:
        assert compare.tabs.isTabEnabled(compare.sweep_index)
        assert compare.tabs.tabText(compare.sweep_index) == "Against loop0 read-ahead"
        column = [compare.sweep_table.item(r, 0).text() for r in range(3)]
        assert column == ["128", "1024", "4096"]
        assert not two.tabs.isTabEnabled(two.sweep_index)
        assert two.tabs.tabText(two.sweep_index) == "Against the parameter"
        assert "a trend needs 3 runs or more" in two.tabs.tabToolTip(two.sweep_index)
    finally:
        compare.close()
        two.close()


def test_the_window_widens_to_show_every_column_within_the_screen(qtbot: Any) -> None:
    """The last run's verdicts were off to the right of a 1000 px window, behind a scroll."""
    window = QWidget()
    table = QTableWidget(1, 3)
    QVBoxLayout(window).addWidget(table)
    qtbot.addWidget(window)
    window.resize(400, 300)
    for column, width in enumerate((150, 250, 350)):
        table.setColumnWidth(column, width)
    screen = window.screen().availableGeometry().width()
    fit_width(window, table)
    assert window.width() == min(
        screen * 95 // 100,
        750 + 60 + 2 * table.frameWidth() + table.verticalScrollBar().sizeHint().width(),
    )
    assert window.width() > 400
    table.setColumnWidth(2, 10)
    fit_width(window, table)
    assert window.width() > 400, "never narrowed"


FIELDNOTES_NAME = "fio on /tmp/review-fieldnotes/mnt1/b (1 MiB blocks, QD 1, 128 MiB, direct)"
FIELDNOTES_FILESYSTEMS = {  # as recorded: ext4, ext4 -o data=writeback, xfs on one loop device
    "ext4, data=ordered": ("ext4", "rw,data=ordered"),
    "ext4, data=writeback": ("ext4", "rw,data=writeback"),
    "xfs": ("xfs", "rw,inode64,logbufs=8,logbsize=32k,noquota"),
}


def test_three_runs_of_one_name_are_told_apart_and_all_in_sight(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    """The field notes at 1280x900: every column of What differs was as wide as the run's
    name, the third run sat behind a sideways scrollbar, and the Results headers read the
    same three times. Each run is now its #id and what tells it apart, the name in the
    tooltip, and all three columns are in sight."""
    ids = []
    for filesystem, options in FIELDNOTES_FILESYSTEMS.values():
        context = {
            "filesystem": filesystem,
            "mount_options": "rw,relatime",
            "superblock_options": options,
        }
        figures = (ResultValue("seq_read", "throughput", "MB/s", 300.0),)
        ids.append(record_run(db_url, FIELDNOTES_NAME, context, results=figures))
    compare = compared_from_history(make_window, qtbot, ids)
    compare.resize(1280, 900)
    compare.tabs.setCurrentWidget(compare.context)
    qtbot.waitUntil(lambda: compare.context.viewport().width() > 1000)

    told = [f"#{run_id} {what}" for run_id, what in zip(ids, FIELDNOTES_FILESYSTEMS, strict=True)]
    header = compare.context.headerItem()
    assert [header.text(column) for column in (1, 2, 3)] == told
    assert header.toolTip(1) == f"#{ids[0]} {FIELDNOTES_NAME} (ext4, data=ordered)"
    sections = compare.context.header()
    assert (
        sections.sectionPosition(3) + sections.sectionSize(3) <= compare.context.viewport().width()
    )
    assert compare.context.horizontalScrollBar().maximum() == 0
    results = [compare.results.horizontalHeaderItem(c).text() for c in (2, 3, 4)]
    assert results == [f"{label}\nmean of passes" for label in told]
    assert compare.results.horizontalHeaderItem(2).toolTip() == header.toolTip(1)
    compare.close()

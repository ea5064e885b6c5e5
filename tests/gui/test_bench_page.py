"""The Benchmark view for real: the real helper process and engine on a temporary directory,
samples into the plots, phases into the table, the run into the history with its context."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from stripewise.gui.bench_page import BenchPage
from stripewise.gui.main_window import MainWindow
from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore
from stripewise.model.run import ResultValue, RunStatus
from stripewise.model.run_detail import RunDetail
from stripewise.protocol.events import Sample
from tests.fixtures.background import wait_for_deliveries
from tests.gui.conftest import WindowFactory
from tests.seed import record_run

PHASES = ("seq_write", "rewrite", "seq_read", "random_read")


def bench_page(window: MainWindow) -> BenchPage:
    page = window.page_widgets["benchmark"]
    assert isinstance(page, BenchPage)
    return page


def set_up(page: BenchPage, tmp_path: Path, size: str, phases: tuple[str, ...]) -> Path:
    """A target directory of its own (the history database lives in tmp_path too)."""
    directory = tmp_path / "target"
    directory.mkdir()
    page.form.add_directory(str(directory))
    page.form.engine.setCurrentIndex(page.form.engine.findData("builtin"))
    for phase, box in page.form.phase_boxes.items():
        box.setChecked(phase.value in phases)
    page.form.file_size.setText(size)
    page.form.block.setCurrentText("1M")
    page.form.rate.setValue(10)
    return directory


def start_long_run(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> tuple[MainWindow, BenchPage, Path]:
    """An 8 GiB buffered sequential write through the real helper, streaming samples."""
    window = make_window(view="benchmark")
    page = bench_page(window)
    target = set_up(page, tmp_path, "8G", ("seq_write",))
    page.form.direct.setChecked(False)
    with qtbot.waitSignal(page.session.sampleArrived, timeout=30_000):
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    return window, page, target


def stored(db_url: str, run_id: int) -> tuple[RunDetail, int]:
    db = open_database(db_url)
    try:
        store = HistoryStore(db)
        return store.get_run(run_id), len(store.samples(run_id))
    finally:
        db.close()


def test_a_real_run_streams_fills_the_table_and_is_saved_with_context(
    make_window: WindowFactory, db_url: str, tmp_path: Path, qtbot: Any
) -> None:
    window = make_window(view="benchmark")
    page = bench_page(window)
    target = set_up(page, tmp_path, "96M", PHASES)
    page.form.repetitions.setValue(2)
    seen_samples: list[Sample] = []
    page.session.sampleArrived.connect(seen_samples.append)
    with qtbot.waitSignal(page.session.saved, timeout=120_000) as saved:
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    run_id, status = saved.args
    assert status == "complete"

    assert page.plots.sample_count == len(seen_samples) > 0
    times = [sample.t_s for sample in seen_samples]
    assert times == sorted(times) and times[-1] > 0  # one clock across phases
    x, y = page.plots.series("engine_write")
    assert len(x) == len(seen_samples) and max(y) > 0
    assert page.results.phases_shown() == list(PHASES)
    for phase in PHASES:
        assert float(page.results.cell_text(phase, 1).replace(",", "")) > 0
    # min-max of the passes: how many is said once, in the header
    assert "of 2 passes" in page.results.horizontalHeaderItem(2).text()
    assert "\u2013" in page.results.cell_text("seq_write", 2)
    assert page.open_button.isEnabled() and page.compare_button.isEnabled()
    assert "complete" in page.phase_label.text()
    assert list(target.iterdir()) == []  # the helper removed its test file

    detail, samples = stored(db_url, run_id)
    assert detail.summary.status is RunStatus.COMPLETE
    assert samples == len(seen_samples)
    context = detail.context
    assert context.target == str(target)
    assert context.filesystem and context.mountpoint
    assert context.host_key is not None and context.host_key.startswith(("machine:", "host:"))
    assert context.disks and all(disk.tuning is not None for disk in context.disks)
    assert context.dirty is not None and context.dirty.dirty_ratio_pct is not None
    assert context.engine == "builtin" and "spec" not in context.to_json()
    # the spec as the helper normalised it: every key, sizes in bytes
    spec = detail.spec
    assert spec is not None
    assert [p.value for p in spec.phases] == list(PHASES) and spec.size_bytes == 96 * 2**20
    assert spec.repetitions == 2 and spec.sample_rate_hz > 0
    assert context.recorder is not None and context.recorder.pid == os.getpid()
    throughput = {v.phase: v for v in detail.results if v.metric == "throughput"}
    assert set(throughput) == set(PHASES)
    assert all(v.repetitions == 2 and v.value and v.value > 0 for v in throughput.values())
    # each pass kept: the evidence a comparison's verdict is tested on
    assert all(len(v.passes) == 2 and min(v.passes) == v.min_value for v in throughput.values())
    latency = [v for v in detail.results if v.metric == "latency_p99"]
    assert latency and all(len(v.passes) == 2 for v in latency)  # a verdict on it can be tested

    with qtbot.waitSignal(window.history.runsLoaded, timeout=10_000):
        qtbot.mouseClick(page.open_button, Qt.MouseButton.LeftButton)
        window.history.load_runs()
    assert window.current_view == "history"
    history_page = window.page_widgets["history"]
    qtbot.waitUntil(lambda: history_page.shown_run is not None, timeout=10_000)  # type: ignore[attr-defined]
    assert history_page.shown_run.summary.id == run_id  # type: ignore[attr-defined]


def test_cancel_stops_the_run_files_it_cancelled_and_removes_the_file(
    make_window: WindowFactory, db_url: str, tmp_path: Path, qtbot: Any
) -> None:
    _window, page, target = start_long_run(make_window, tmp_path, qtbot)
    assert page.cancel_button.isEnabled() and not page.form.file_size.isEnabled()
    # 8 GiB buffered: the page cache warning is inline exactly when the file is under 2 x RAM
    import psutil

    cache_sized = 2 * psutil.virtual_memory().total > 8 * 2**30
    assert ("page cache will inflate" in page.warnings.text()) is cache_sized
    clicked = time.monotonic()
    with qtbot.waitSignal(page.session.saved, timeout=30_000) as saved:
        qtbot.mouseClick(page.cancel_button, Qt.MouseButton.LeftButton)
    assert time.monotonic() - clicked < 5
    run_id, status = saved.args
    assert status == "cancelled"
    qtbot.waitUntil(lambda: list(target.iterdir()) == [], timeout=5_000)
    detail, samples = stored(db_url, run_id)
    assert detail.summary.status is RunStatus.CANCELLED and samples > 0
    assert page.start_button.isEnabled() and page.form.file_size.isEnabled()
    # the table says what the history says: the phase was stopped, it did not fail
    assert page.results.cell_text("seq_write", 1) == "cancelled"
    assert "Run cancelled" in page.phase_label.text()


def test_a_killed_helper_ends_the_run_as_aborted_and_keeps_its_samples(
    make_window: WindowFactory, db_url: str, tmp_path: Path, qtbot: Any
) -> None:
    window, page, target = start_long_run(make_window, tmp_path, qtbot)
    qtbot.waitUntil(lambda: page.plots.sample_count >= 3, timeout=10_000)
    pid = window.helper.process_id()
    assert pid is not None
    try:
        with qtbot.waitSignal(page.session.saved, timeout=15_000) as saved:
            os.kill(pid, signal.SIGKILL)
        run_id, status = saved.args
        assert status == "aborted"
        assert "Run aborted" in page.phase_label.text()
        assert "lost the helper mid-run" in page.phase_label.text()
        detail, samples = stored(db_url, run_id)
        assert detail.summary.status is RunStatus.ABORTED
        assert samples >= 3  # what streamed before the crash is kept
    finally:
        for leftover in target.iterdir():  # SIGKILL cannot clean up: the test does
            leftover.unlink()


def test_a_run_left_running_by_a_crash_is_marked_aborted_at_start(
    make_window: WindowFactory, db_url: str
) -> None:
    gone = {"pid": 2**22 + 7, "start_ticks": 1, "boot_id": "not this boot"}
    crashed = record_run(db_url, "crashed", {"recorder": gone}, status=None)
    window = make_window(view="history")
    assert "marked aborted" in window.statusBar().currentMessage()
    detail, _ = stored(db_url, crashed)
    assert detail.summary.status is RunStatus.ABORTED


def test_compare_with_previous_shows_both_runs_and_what_changed(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    ids = [
        record_run(
            db_url,
            f"ra {read_ahead}",
            {"disks": [{"name": "sda", "tuning": {"read_ahead_kb": read_ahead}}]},
            target="/srv/a",
            results=(  # three passes each: enough for a verdict
                ResultValue(
                    "seq_read",
                    "throughput",
                    "MB/s",
                    mb_s,
                    mb_s - 2,
                    mb_s + 2,
                    3,
                    (mb_s - 2, mb_s, mb_s + 2),
                ),
            ),
        )
        for read_ahead, mb_s in ((128, 400.0), (4096, 520.0))
    ]
    window = make_window(view="benchmark")
    page = bench_page(window)
    page.saved_run_id, page.target_path = ids[1], "/srv/a"
    page.compare_button.setEnabled(True)
    qtbot.mouseClick(page.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(window.compare_windows), timeout=10_000)
    compare = window.compare_windows[-1]
    try:
        qtbot.waitUntil(lambda: compare.comparison is not None, timeout=10_000)
        row = compare.comparison.rows[0]
        assert (row.values, row.verdicts) == ((400.0, 520.0), ("", "better"))
        assert [(d.key, d.values) for d in compare.comparison.context] == [
            ("disks[sda].tuning.read_ahead_kb", (128, 4096))
        ]
        assert compare.results.item(0, 3).text().startswith("520.0  (+30.0 % ± ")
    finally:
        compare.close()


@pytest.mark.parametrize("preset", ["Quick check", "Sequential 1M Q8", "Random 4K Q32"])
def test_presets_fill_the_form(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any, preset: str
) -> None:
    page = bench_page(make_window(view="benchmark"))
    page.form.add_directory(str(tmp_path))
    page.form.preset.setCurrentText(preset)
    qtbot.waitUntil(
        lambda: page.form.file_size.text() != "1G" or preset == "Quick check", timeout=5000
    )
    wait_for_deliveries(qtbot)  # the preset's values, sized to the free space, have arrived
    args = page.form.start_args().to_json()  # what the helper is sent
    if preset == "Random 4K Q32":
        assert args["queue_depth"] == 32 and "random_read" in args["phases"]
    elif preset == "Sequential 1M Q8":
        assert args["queue_depth"] == 8 and args["phases"] == ["seq_write", "seq_read"]
    else:
        assert args["runtime_cap_s"] == 20.0 and args["direct"] is True
    page.form.queue_depth.setValue(3)  # editing by hand makes it a custom run
    assert page.form.preset.currentText() == "Custom"


def test_closing_the_window_mid_run_files_it_cancelled_and_cleans_up(
    make_window: WindowFactory, db_url: str, tmp_path: Path, qtbot: Any
) -> None:
    window, page, target = start_long_run(make_window, tmp_path, qtbot)
    qtbot.waitUntil(lambda: page.plots.sample_count >= 2, timeout=10_000)
    recorder = page.session.recorder
    assert recorder is not None and recorder.run_id is not None
    window.close()
    assert list(target.iterdir()) == []  # the helper saw its stdin close and removed the file
    detail, samples = stored(db_url, recorder.run_id)
    assert detail.summary.status is RunStatus.CANCELLED and samples >= 2


def test_plots_are_saved_as_png_and_svg(
    make_window: WindowFactory, qtbot: Any, tmp_path: Path
) -> None:
    page = bench_page(make_window(view="benchmark"))
    assert page.plots._view.scene().contextMenu == [], "pyqtgraph's failing SVG export is gone"
    said: list[str] = []
    page.statusMessage.connect(said.append)
    page.save_plot(tmp_path / "plots.svg")
    page.save_plot(tmp_path / "plots.png")
    assert "<svg" in (tmp_path / "plots.svg").read_text()
    assert (tmp_path / "plots.png").read_bytes()[:4] == b"\x89PNG"
    page.save_plot(tmp_path / "missing-dir" / "plots.png")
    assert said[-1].startswith("could not write")


def test_a_guard_tripped_on_a_real_run_is_marked_warned_and_stored(
    make_window: WindowFactory, db_url: str, tmp_path: Path, qtbot: Any
) -> None:
    """A buffered 96 MiB file reads through the page cache on any machine with 48 MiB of RAM:
    the page warns at the start, the helper flags the read, the table marks it, the history
    keeps the flag and shows the same mark."""
    from stripewise.gui.bench_results import GUARD_MARK

    window = make_window(view="benchmark")
    page = bench_page(window)
    set_up(page, tmp_path, "96M", ("seq_write", "seq_read"))
    page.form.direct.setChecked(False)
    with qtbot.waitSignal(page.session.started, timeout=30_000):
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert "page cache will inflate" in page.warnings.text()  # before any event of the run
    with qtbot.waitSignal(page.session.saved, timeout=120_000) as saved:
        pass
    run_id, status = saved.args
    assert status == "complete"
    assert "small_buffered_file" in page.results.flags("seq_read")
    assert "small_buffered_file" not in page.results.flags("seq_write")
    assert page.results.cell_text("seq_read", 0).endswith(GUARD_MARK)
    assert "buffered file under 2 x RAM" in page.results.cell_tooltip("seq_read", 1)
    assert page.warnings.text().count("page cache will inflate") == 1  # once, page or helper
    detail, _samples = stored(db_url, run_id)
    read = [v for v in detail.results if v.phase == "seq_read"]
    assert read and all("small_buffered_file" in v.flags for v in read)
    history = window.page_widgets["history"]
    history.detail_results.show_stored(detail.results)  # type: ignore[attr-defined]
    assert history.detail_results.cell_text("seq_read", 0).endswith(GUARD_MARK)  # type: ignore[attr-defined]


@pytest.mark.skipif(os.geteuid() != 0, reason="PM QoS requests need root")
def test_a_cpu_latency_limit_ticked_in_the_form_is_held_and_filed(
    make_window: WindowFactory, db_url: str, tmp_path: Path, qtbot: Any
) -> None:
    from stripewise.helper.cpu_latency import effective_limit_us

    before = effective_limit_us()
    window = make_window(view="benchmark")
    page = bench_page(window)
    set_up(page, tmp_path, "256M", ("seq_write",))
    assert not page.form.cpu_latency.isEnabled(), "no limit until the box is ticked"
    page.form.hold_cpu_latency.setChecked(True)
    page.form.cpu_latency.setValue(4)
    held: list[int] = []
    page.session.sampleArrived.connect(lambda _sample: held.append(effective_limit_us()))
    with qtbot.waitSignal(page.session.saved, timeout=120_000) as saved:
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    run_id, status = saved.args
    # read as samples arrive here: the last ones may come after the run has let go
    assert status == "complete" and 4 in held
    assert effective_limit_us() == before
    detail, _samples = stored(db_url, run_id)
    spec = detail.spec
    assert spec is not None and spec.cpu_latency_us == 4

    page.form.load_spec(replace(spec, cpu_latency_us=None), 3)  # a run without one
    assert not page.form.hold_cpu_latency.isChecked() and not page.form.cpu_latency.isEnabled()
    assert page.form.start_args().spec.cpu_latency_us is None
    page.form.load_spec(spec, 3)
    assert page.form.hold_cpu_latency.isChecked() and page.form.cpu_latency.value() == 4
    page.form.set_running(True)
    page.form.load_spec(replace(spec, cpu_latency_us=8), 3)  # "run again" mid-run
    assert page.form.hold_cpu_latency.isChecked() and not page.form.cpu_latency.isEnabled()
    page.form.hold_cpu_latency.setChecked(False)
    page.form.set_running(False)
    assert not page.form.cpu_latency.isEnabled(), "ending a run does not wake the spin box"
    left_out = page.form.load_spec(replace(spec, cpu_latency_us=99_999), 3)
    assert left_out == ["a CPU wake-up limit of 99,999 \u00b5s is out of range"]
    assert not page.form.hold_cpu_latency.isChecked()

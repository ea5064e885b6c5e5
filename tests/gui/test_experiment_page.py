"""The Experiment page for real: the real helper and engine, a workload parameter swept on a
directory and read_ahead_kb on a loop device; points fill in, the card gives a verdict, every
pass is a tagged run in the history, and whatever happens the device's value is back."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from stripewise.gui.experiment_page import ExperimentPage
from stripewise.gui.main_window import MainWindow
from stripewise.history.database import open_database
from stripewise.history.experiments import get_experiment
from stripewise.history.store import HistoryStore
from stripewise.model.bench import Phase
from stripewise.model.experiment_result import ExperimentResult, Verdict
from tests.fixtures.loops import Loop, loop_device, needs_loop
from tests.gui.conftest import WindowFactory

TIMEOUT_MS = 240_000


def experiment_page(window: MainWindow) -> ExperimentPage:
    page = window.page_widgets["experiment"]
    assert isinstance(page, ExperimentPage)
    return page


def design(page: ExperimentPage, name: str, values: str, *, direct: bool = True) -> None:
    """A quick experiment: seq_read of 8 MiB, built-in engine, 3 passes, +/- 50 %."""
    form = page.form
    form.engine.setCurrentIndex(form.engine.findData("builtin"))
    for phase, box in form.phase_boxes.items():
        box.setChecked(phase is Phase.SEQ_READ)
    form.file_size.setText("8M")
    form.block.setCurrentText("64K")
    form.direct.setChecked(direct)
    form.rate.setValue(10)
    page.design.first.set(name, values)
    page.design.half_width.setValue(50.0)
    page.design.max_passes.setValue(3)


def on_directory(make_window: WindowFactory, tmp_path: Path) -> tuple[MainWindow, ExperimentPage]:
    window = make_window(view="experiment")
    page = experiment_page(window)
    target = tmp_path / "target"
    target.mkdir()
    page.form.add_directory(str(target))
    return window, page


def run_to_end(page: ExperimentPage, qtbot: Any) -> ExperimentResult:
    with qtbot.waitSignal(page.runner.finished, timeout=TIMEOUT_MS) as ended:
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    result = ended.args[0]
    assert isinstance(result, ExperimentResult)
    return result


def stored(db_url: str, experiment_id: int) -> tuple[Any, list[Any]]:
    db = open_database(db_url)
    try:
        return get_experiment(db, experiment_id), HistoryStore(db).list_runs()
    finally:
        db.close()


def test_a_queue_depth_sweep_fills_points_gives_a_verdict_and_tags_its_runs(
    make_window: WindowFactory, db_url: str, tmp_path: Path, qtbot: Any
) -> None:
    _window, page = on_directory(make_window, tmp_path)
    design(page, "queue_depth", "1,4")
    seen: list[Any] = []
    page.runner.point.connect(seen.append)
    result = run_to_end(page, qtbot)

    assert result.restored and result.experiment is not None
    # the form's queue depth (1) is the starting settings: two points, 3 passes each, and
    # the starting settings measured once more at the end
    passes = {p.label: len(p.passes) for p in result.points}
    assert passes == {"queue_depth=1": 4, "queue_depth=4": 3}
    assert len(seen) == 7  # each pass drawn as it came
    assert page.points.passes_shown() == passes
    assert page.chart.point_count() == 2 and page.chart.redraws >= 7
    assert page.card.verdict in set(Verdict)
    assert page.card.title.text() and page.card.reason.text()
    assert not page.card.apply_button.isVisible()  # a workload value: nothing to apply
    assert page.start_button.isEnabled() and not page.cancel_button.isEnabled()

    experiment, runs = stored(db_url, result.experiment)
    assert experiment.summary.status == "complete"
    tag = f"experiment:{result.experiment}"
    tagged = [r for r in runs if tag in r.tags]
    assert len(tagged) == 7 and all("experiment" in r.tags for r in tagged)
    assert {r.id for r in tagged} == {run for p in result.points for run in p.runs}
    assert all(r.name.startswith("Experiment queue_depth: queue_depth=") for r in tagged)
    assert list((tmp_path / "target").iterdir()) == []  # the helper removed its test files


@contextlib.contextmanager
def loop_at(read_ahead_kb: int) -> Iterator[tuple[Loop, Path]]:
    """A RAM-backed loop device with a known read_ahead_kb, put back afterwards."""
    with loop_device(64 * 2**20) as loop:
        knob = Path(f"/sys/block/{loop.name}/queue/read_ahead_kb")
        before = knob.read_text().strip()
        knob.write_text(str(read_ahead_kb))
        try:
            yield loop, knob
        finally:
            knob.write_text(before)


def on_loop(make_window: WindowFactory, qtbot: Any, loop: Loop) -> ExperimentPage:
    window = make_window(view="experiment")
    page = experiment_page(window)
    window.hardware.load_live()
    qtbot.waitUntil(
        lambda: (
            not window.hardware.busy and any(t.path == loop.device for t in page.form.targets())
        ),
        timeout=20_000,
    )
    index = next(i for i, t in enumerate(page.form.targets()) if t.path == loop.device)
    page.form.target.setCurrentIndex(index)
    return page


@needs_loop
def test_a_read_ahead_sweep_on_a_loop_device_puts_the_value_back(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    with loop_at(256) as (loop, knob):
        page = on_loop(make_window, qtbot, loop)
        design(page, "read_ahead_kb", "128,1024", direct=False)
        applied: list[str] = []
        page.session.started.connect(lambda _s: applied.append(knob.read_text().strip()))
        result = run_to_end(page, qtbot)
        assert knob.read_text().strip() == "256"  # back at the end
        assert {"128", "1024", "256"} <= set(applied)  # and each in force during its runs
        assert result.restored
        labels = {p.label for p in result.points}
        assert labels == {"read_ahead_kb=128", "read_ahead_kb=1024", "read_ahead_kb=256"}
        assert all(len(p.passes) >= 3 for p in result.points)
        assert page.card.verdict is result.recommendation.verdict
        offered = result.recommendation.verdict is Verdict.BETTER
        assert page.card.apply_button.isVisibleTo(page) == offered
        # 8 MiB buffered, far under twice the RAM: every point carries the caution, said
        assert all("small_buffered_file" in p.guards for p in result.points)
        assert "caution, guards tripped: buffered file under 2 x RAM" in (
            result.recommendation.reason
        )
        first = page.points.item(0, 0)
        assert first.text().endswith(" \u26a0") and "buffered file under 2 x RAM" in (
            first.toolTip()
        )


@needs_loop
def test_cancel_mid_way_leaves_nothing_applied(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    with loop_at(256) as (loop, knob):
        page = on_loop(make_window, qtbot, loop)
        design(page, "read_ahead_kb", "128,1024", direct=False)

        def cancel_once_applied(_started: object) -> None:
            if knob.read_text().strip() != "256":  # a point's value is in force: cancel now
                page.cancel_button.click()

        page.session.started.connect(cancel_once_applied)
        result = run_to_end(page, qtbot)
        assert page.runner.cancelled and result.restored
        assert knob.read_text().strip() == "256"
        assert sum(len(p.passes) for p in result.points) < 7  # it stopped early
        assert result.experiment is not None
        experiment, _runs = stored(db_url, result.experiment)
        assert experiment.summary.status == "cancelled"
        assert "cancelled" in page.status.text()
        assert page.start_button.isEnabled()


def test_a_grid_of_two_workload_parameters_draws_heat_maps(
    make_window: WindowFactory, db_url: str, tmp_path: Path, qtbot: Any
) -> None:
    _window, page = on_directory(make_window, tmp_path)
    design(page, "queue_depth", "1,4")
    page.design.second.set("block_size", "4k,64k")
    result = run_to_end(page, qtbot)
    # the form's queue depth 1 and block size 64K are a corner of the grid: 4 points
    assert sorted(p.label for p in result.points) == [
        "queue_depth=1, block_size=4k",
        "queue_depth=1, block_size=64k",
        "queue_depth=4, block_size=4k",
        "queue_depth=4, block_size=64k",
    ]
    assert page.chart.currentWidget() is page.chart.grid
    metric, p99 = page.chart.heat_data()
    assert metric is not None and metric.shape == (2, 2) and (metric > 0).all()
    assert p99 is not None and (p99 > 0).all()  # every cell measured
    assert page.card.verdict is result.recommendation.verdict


def test_a_latency_target_searches_the_queue_depth(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> None:
    """A target no depth misses: the search probes LO, then HI, and answers HI."""
    _window, page = on_directory(make_window, tmp_path)
    design(page, "queue_depth", "")
    page.design.latency.setChecked(True)
    page.design.latency_us.setValue(10_000_000)
    page.design.search.setText("1..4")
    assert page.design.metric_box.currentData() == "seq_read:iops"
    result = run_to_end(page, qtbot)
    answer = result.extra["latency_target"]
    assert answer["probes"] == [1, 4] and answer["value"] == 4
    rec = result.recommendation  # "better" only if depth 4's passes beat depth 1's (the form's)
    better = rec.verdict is Verdict.BETTER
    assert rec.values == (("queue_depth", 4 if better else 1),)
    assert len(next(p for p in result.points if p.baseline).passes) >= 3
    assert page.card.title.text().endswith("queue_depth=4" if better else "(queue_depth=1)")
    assert not page.card.apply_button.isVisibleTo(page)  # a workload value


@needs_loop
def test_apply_this_writes_the_recommended_read_ahead_then_offers_the_boot_files(
    make_window: WindowFactory, qtbot: Any
) -> None:
    """A "better" answer for read_ahead_kb (made here: which value wins on a loop device is
    up to the machine) is previewed, then applied through the helper and journaled."""
    from stripewise.model.experiment_result import Recommendation
    from stripewise.protocol.tuning import RevertArgs
    from stripewise.services.experiment_setup import ExperimentRequest, prepare

    with loop_at(256) as (loop, knob):
        page = on_loop(make_window, qtbot, loop)
        design(page, "read_ahead_kb", "128,1024", direct=False)
        setup = prepare(ExperimentRequest(page.form.start_args(), page.design.vary()))
        assert setup.baseline == (("read_ahead_kb", 256),) and setup.design.devices == (loop.name,)
        plan_result = ExperimentResult(
            setup.design.objective,
            "MB/s",
            (),
            None,
            Recommendation((("read_ahead_kb", 1024),), Verdict.BETTER, "made for the test", 12.0),
            experiment=7,
        )
        page.setup, page.result = setup, plan_result
        page.card.show_result(plan_result, True)
        assert page.card.apply_button.isVisibleTo(page)
        page.card.persist.setChecked(True)
        page.card.apply_button.click()
        box = page.apply.box_up
        assert box is not None and f"{loop.name}  read_ahead_kb: 256 \u2192 1024" in box.text()
        with qtbot.waitSignal(page.apply.applied, timeout=20_000) as applied:
            box.button(box.StandardButton.Apply).click()
        assert knob.read_text().strip() == "1024"
        assert applied.args[0].startswith("Applied, journal ")
        assert "all read back as written" in page.status.text()
        # then the boot-time files, shown before anything is written: declined here
        qtbot.waitUntil(lambda: page.apply.box is not None, timeout=20_000)
        persist = page.apply.box
        assert persist is not None and persist.windowTitle() == "Make persistent"
        persist.button(persist.StandardButton.Cancel).click()
        assert page.apply.box is None
        reverted: list[object] = []
        page.apply.service.call(RevertArgs(), reverted.append, reverted.append)
        qtbot.waitUntil(lambda: bool(reverted), timeout=20_000)
        assert knob.read_text().strip() == "256"


@needs_loop
def test_closing_the_window_mid_point_puts_the_value_back(
    make_window: WindowFactory, qtbot: Any
) -> None:
    with loop_at(256) as (loop, knob):
        page = on_loop(make_window, qtbot, loop)
        window = page.window()
        design(page, "read_ahead_kb", "128,1024", direct=False)
        applied: list[str] = []

        def close_once_applied(_started: object) -> None:
            value = knob.read_text().strip()
            if value != "256" and not applied:
                applied.append(value)
                window.close()

        page.session.started.connect(close_once_applied)
        page.start_button.click()
        qtbot.waitUntil(lambda: bool(applied), timeout=TIMEOUT_MS)
        assert applied[0] in ("128", "1024")
        qtbot.waitUntil(lambda: knob.read_text().strip() == "256", timeout=20_000)


@needs_loop
def test_a_tunable_without_the_privileged_helper_is_refused_before_anything_runs(
    make_window: WindowFactory, qtbot: Any
) -> None:
    from stripewise.environment import PrivilegeMode, Privileges

    with loop_at(256) as (loop, knob):
        page = on_loop(make_window, qtbot, loop)
        page.window().helper.set_privileges(Privileges(PrivilegeMode.NONE, "no pkexec here"))
        design(page, "read_ahead_kb", "128,1024", direct=False)
        started: list[object] = []
        page.session.started.connect(started.append)
        with qtbot.waitSignal(page.runner.failed, timeout=20_000) as failed:
            page.start_button.click()
        assert failed.args[0] == (
            "varying read_ahead_kb needs the privileged helper: no pkexec here"
        )
        assert not started and knob.read_text().strip() == "256"
        assert "needs the privileged helper" in page.card.title.text()
        assert page.start_button.isEnabled()


def test_a_value_that_cannot_run_is_said_in_one_line_with_nothing_run(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> None:
    _window, page = on_directory(make_window, tmp_path)
    design(page, "queue_depth", "1,x")
    started: list[object] = []
    page.session.started.connect(started.append)
    with qtbot.waitSignal(page.runner.failed, timeout=20_000) as failed:
        page.start_button.click()
    assert failed.args[0] == "queue_depth: 'x' is not a number"
    assert page.card.title.text() == "Stopped: queue_depth: 'x' is not a number"
    assert not started and page.start_button.isEnabled() and not page.runner.running


@needs_loop
def test_a_helper_killed_mid_point_is_said_and_its_value_put_back_at_the_next_start(
    make_window: WindowFactory, qtbot: Any
) -> None:
    import os
    import signal

    from stripewise.protocol.verbs import CapabilitiesArgs

    with loop_at(256) as (loop, knob):
        page = on_loop(make_window, qtbot, loop)
        design(page, "read_ahead_kb", "128,1024", direct=False)
        killed: list[str] = []

        def kill_once_applied(_started: object) -> None:
            helper = page.window().helper.process_id()
            if knob.read_text().strip() != "256" and not killed and helper is not None:
                killed.append(knob.read_text().strip())
                os.kill(helper, signal.SIGKILL)

        page.session.started.connect(kill_once_applied)
        with qtbot.waitSignal(page.runner.failed, timeout=TIMEOUT_MS) as failed:
            page.start_button.click()
        assert failed.args[0].startswith("could not put back journal ")
        assert "the helper puts it back the next time it starts" in failed.args[0]
        assert knob.read_text().strip() == killed[0]  # left as the killed helper wrote it
        page.window().close()

        again = experiment_page(make_window(view="experiment"))
        asked: list[object] = []
        again.apply.service.call(CapabilitiesArgs(), asked.append, asked.append)
        qtbot.waitUntil(lambda: bool(asked), timeout=20_000)
        assert knob.read_text().strip() == "256"  # the next helper put it back as it started


def test_the_chart_draws_a_scheduler_sweep_by_name_and_a_point_without_an_interval(
    qtbot: Any,
) -> None:
    from stripewise.gui.experiment_chart import ExperimentChart
    from stripewise.model.experiment_result import Point

    chart = ExperimentChart()
    qtbot.addWidget(chart)
    chart.set_design([("scheduler", ["mq-deadline", "none", "kyber"])], "seq_read MB/s")
    left = chart.line.getPlotItem().getAxis("left")
    assert not left.style["showValues"], "no figures beside an empty axis"
    chart.update_point(Point((("scheduler", "mq-deadline"),), (500.0, 510.0, 505.0), baseline=True))
    chart.update_point(Point((("scheduler", "kyber"),), (480.0,)))  # one pass: no bar yet
    ticks = chart.line.getPlotItem().getAxis("bottom")._tickLevels[0]
    assert [label for _x, label in ticks] == ["mq-deadline", "none", "kyber"]
    assert chart.point_count() == 2
    assert left.style["showValues"] and left.labelText == "seq_read MB/s"
    xs, ys = chart._curve.getData()
    assert list(xs) == [2.0] and list(ys) == [480.0]


def test_another_start_refused_while_a_pass_runs_leaves_the_experiment_going(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> None:
    """The Benchmark page's Start pressed mid-pass is refused there; the pass is not."""
    from stripewise.services.bench_session import BenchRequest

    _window, page = on_directory(make_window, tmp_path)
    design(page, "queue_depth", "1,4")
    refused: list[str] = []
    page.session.refused.connect(refused.append)

    def start_another(_started: object) -> None:
        if not refused:
            page.session.start(BenchRequest(page.form.start_args(), "by hand"))

    page.session.started.connect(start_another)
    result = run_to_end(page, qtbot)
    assert refused == ["a benchmark is already running"]
    assert {p.label: len(p.passes) for p in result.points} == {
        "queue_depth=1": 4,
        "queue_depth=4": 3,
    }
    assert not result.extra.get("failed")


def test_before_a_first_experiment_the_chart_shows_the_design_as_typed(
    make_window: WindowFactory, tmp_path: Path
) -> None:
    """Not pyqtgraph's bare 0..1 square: the values to be tried under the parameter, the
    figure judged beside its axis and no figures on it yet; a value that does not read
    leaves the last good preview; a search shows its bounds."""
    _window, page = on_directory(make_window, tmp_path)
    axes = page.chart.line.getPlotItem()

    def shown() -> tuple[list[str], str, str, bool]:
        ticks = axes.getAxis("bottom")._tickLevels[0]
        left = axes.getAxis("left")
        return (
            [label for _x, label in ticks],
            axes.getAxis("bottom").labelText,
            left.labelText,
            left.style["showValues"],
        )

    assert shown() == (["128", "512", "4096"], "read_ahead_kb (log scale)", "seq_read MB/s", False)
    page.design.first.values.setText("64,128")
    page.design.metric_box.setCurrentIndex(page.design.metric_box.findData("seq_read:iops"))
    assert shown()[:3] == (["64", "128"], "read_ahead_kb (log scale)", "seq_read IOPS")
    page.design.first.values.setText("64,x,")
    assert shown()[0] == ["64", "128"]
    page.design.first.name.setCurrentText("queue_depth")
    page.design.latency.setChecked(True)
    page.design.search.setText("2..32")
    assert shown()[:3] == (["2", "32"], "queue_depth (log scale)", "seq_read IOPS")
    assert "mean, 95 % CI" in [entry.text for _s, entry in axes.legend.items]
    assert "start" not in [entry.text for _s, entry in axes.legend.items]


@needs_loop
def test_a_benchmark_the_helper_refuses_stops_at_once_and_keeps_nothing(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    """A file size past the device's end: the starting settings' benchmark is refused before
    any I/O, so no point could run. Said as the CLI says it, nothing applied or kept."""
    with loop_at(256) as (loop, knob):
        page = on_loop(make_window, qtbot, loop)
        design(page, "read_ahead_kb", "128,1024", direct=False)
        page.form.file_size.setText("1G")
        with qtbot.waitSignal(page.runner.failed, timeout=60_000) as failed:
            page.start_button.click()
        assert knob.read_text().strip() == "256"
    message = failed.args[0]
    assert message.startswith("the benchmark did not start: ") and "less than the" in message
    assert message.endswith("; nothing was applied")
    assert page.card.title.text() == f"Stopped: {message}"
    assert page.start_button.isEnabled() and not page.runner.running
    db = open_database(db_url)
    try:
        from stripewise.history.experiments import list_experiments

        assert list_experiments(db) == [] and list_experiments(db, trash=True) == []
    finally:
        db.close()


def test_the_benchmark_pages_cancel_mid_pass_cancels_the_experiment(
    make_window: WindowFactory, db_url: str, tmp_path: Path, qtbot: Any
) -> None:
    """Its Cancel is the one in view while a pass streams there: it means the experiment, not
    one failed point with the experiment going on."""
    from stripewise.gui.bench_page import BenchPage
    from stripewise.gui.experiment_pass_note import EXPERIMENT_CANCEL

    window, page = on_directory(make_window, tmp_path)
    window.show_view("benchmark")
    bench = window.page_widgets["benchmark"]
    assert isinstance(bench, BenchPage)
    window.show_view("experiment")
    design(page, "queue_depth", "1,4")

    def cancel_on_second_pass(_started: object) -> None:
        if page.runner.plan is not None and page.runner.plan.visits == 1:
            assert bench.cancel_button.isEnabled()
            assert bench.cancel_button.toolTip() == EXPERIMENT_CANCEL
            bench.cancel_button.click()

    page.session.started.connect(cancel_on_second_pass)
    result = run_to_end(page, qtbot)
    assert page.runner.cancelled and result.restored
    assert not result.extra.get("failed"), "no point failed: the experiment was cancelled"
    assert sum(len(p.passes) for p in result.points) == 1
    assert result.experiment is not None
    experiment, _runs = stored(db_url, result.experiment)
    assert experiment.summary.status == "cancelled"
    assert "cancelled" in page.status.text()
    assert page.start_button.isEnabled() and bench.start_button.isEnabled()


def test_direct_io_follows_the_swept_knob_until_the_admin_sets_it(
    make_window: WindowFactory,
) -> None:
    """The CLI's default (--direct) for a design that is not read-ahead: a sweep of
    nr_requests buffered would measure the page cache; read-ahead needs buffered reads."""
    page = experiment_page(make_window(view="experiment"))
    page.design.first.set("read_ahead_kb", "128,1024")
    assert not page.form.direct.isChecked()
    page.design.first.set("nr_requests", "64,256")
    assert page.form.direct.isChecked(), "as `experiment run` would run it"
    page.design.first.set("read_ahead_kb", "128,1024")
    assert not page.form.direct.isChecked()
    page.form.direct.click()  # the admin's own choice
    page.design.first.set("nr_requests", "64,256")
    assert page.form.direct.isChecked()
    page.form.direct.click()
    page.design.first.set("read_ahead_kb", "128,1024")
    assert not page.form.direct.isChecked(), "theirs stays"
    page.design.first.set("block_size", "4k,64k")
    assert not page.form.direct.isChecked()


def test_the_charts_legend_fits_the_chart_at_800x600(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> None:
    """At 800x600 the chart beside the form was about 170 px wide (about 290 since the
    navigation shows icons alone there): its legend read `mean, 95 % interv`."""
    window, page = on_directory(make_window, tmp_path)
    window.resize(800, 600)
    plot = page.chart.line.getPlotItem()
    qtbot.waitUntil(lambda: 0 < plot.getViewBox().width() < 320, timeout=5_000)
    legend = plot.legend
    page.chart.set_design([("read_ahead_kb", (128, 512, 4096))], "seq_read MB/s", baseline=True)
    assert [entry.text for _s, entry in legend.items] == ["mean, 95 % CI", "start"]
    qtbot.waitUntil(lambda: legend.boundingRect().width() > 0, timeout=2_000)
    # above the data (inside it, the top points' line ran through its text), within the width
    box, whole = plot.getViewBox().sceneBoundingRect(), plot.sceneBoundingRect()
    for sample, label in legend.items:
        for placed in (sample.sceneBoundingRect(), label.sceneBoundingRect()):
            assert placed.bottom() <= box.top() + 1, (label.text, placed, box)
            assert whole.left() <= placed.left() and placed.right() <= whole.right() + 1


def test_a_points_table_narrower_than_its_runs_scrolls_to_them(qtbot: Any) -> None:
    """The runs column keeps its contents' width; on the Design and Run page the table did
    not scroll sideways, so at 800x600 the runs (and p99) sat past its right edge, out of
    reach, the more so as the run list grew."""
    from stripewise.gui.experiment_points import PointsTable
    from stripewise.model.experiment_result import Point

    table = PointsTable()
    qtbot.addWidget(table)
    table.set_names(["queue_depth"])
    runs = tuple(range(1001, 1041))  # a point's 40 passes, each a run in the history
    table.set_points([Point((("queue_depth", 16),), (100.0,) * 40, runs)])
    table.resize(300, 200)
    table.show()
    qtbot.waitExposed(table)
    bar = table.horizontalScrollBar()
    assert bar.isVisible() and bar.maximum() > 0
    header = table.horizontalHeader()
    runs_column = table.columnCount() - 1
    bar.setValue(bar.maximum())
    right = header.sectionViewportPosition(runs_column) + header.sectionSize(runs_column)
    assert right <= table.viewport().width() + 1  # scrolled to its end: the runs in sight

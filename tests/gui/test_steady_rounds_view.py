"""The History detail shows a steady-state run's rounds: a bar per round, the window's
coloured, its mean across it, the verdict in words, one phase's repetition at a time."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from stripewise.gui.bench_results import ResultsTable
from stripewise.gui.history_detail import RunDetailPane
from stripewise.gui.steady_rounds_view import SteadyRoundsView
from stripewise.history.database import open_database, path_to_url
from stripewise.history.store import HistoryStore
from stripewise.model.bench import Phase, PhaseOutcome, phase_summaries
from stripewise.model.run import RunStatus
from stripewise.model.run_detail import RunDetail
from stripewise.model.steady_state import SteadyRounds
from stripewise.protocol.events import RunResult
from stripewise.system.hostinfo import HostInfo
from tests.fixtures.loops import MiB, loop_device, needs_loop

RAMP = (900.0, 400.0, 100.0, 102.0, 98.0, 101.0, 99.0)
NEVER = (100.0, 120.0, 140.0, 160.0, 180.0, 200.0)


def stored(tmp_path: Path, *series: tuple[float, ...]) -> tuple[RunDetail, RunDetail]:
    """A run whose seq_write repeated once per series of rounds, and one without rounds."""
    db = open_database(path_to_url(tmp_path / "history.db"))
    try:
        store = HistoryStore(db)
        host = store.ensure_host(HostInfo("bench-01", "mid-1"))
        outcomes = [
            PhaseOutcome(
                Phase.SEQ_WRITE, repetition, 10.0, write_bytes=10**9,
                steady=SteadyRounds(rounds, tuple(r / 1.048576 for r in rounds)),
            )
            for repetition, rounds in enumerate(series, start=1)
        ]  # fmt: skip
        values = [v for result in phase_summaries(outcomes) for v in result.values()]
        ids = []
        for results in (values, values[:2]):
            run_id = store.create_run(
                host, name="r", target="/t", engine="builtin", engine_version="1"
            )
            store.add_results(run_id, results)
            ids.append(run_id)
        with_rounds, without = store.get_runs(ids)
    finally:
        db.close()
    return with_rounds, without


def test_the_detail_shows_each_repetitions_rounds_with_its_window_and_verdict(
    qtbot, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    with_rounds, without = stored(tmp_path, RAMP, NEVER)
    pane = RunDetailPane()
    qtbot.addWidget(pane)
    pane.resize(900, 900)
    pane.show()
    pane.show_detail(with_rounds)
    view = pane.steady_rounds
    assert not view.isHidden() and not view.chooser.isHidden()
    assert view.keys == [("seq_write", 1), ("seq_write", 2)]
    assert view.chooser.itemText(1) == "seq write, pass 2"
    assert view.verdict.text() == (
        "<b>Steady after 7 rounds</b>; the figure is the mean of rounds 3-7, 100.0 MB/s "
        "(excursion 4.0 %, slope 1.2 %) (dashed: the window's lowest and highest; steady "
        "needs them within 20 % of the mean)."
    )
    # the range the rule judges, not a band around the mean: (102 - 98) / 100 = 4 %
    assert [list(line.getOriginalDataset()[1]) for line in view.band_lines] == [
        [98.0, 98.0], [102.0, 102.0],
    ]  # fmt: skip
    assert list(view.before_bars.opts["x"]) == [1, 2] and list(view.before_bars.opts["height"]) == [
        900,
        400,
    ]
    assert list(view.window_bars.opts["x"]) == [3, 4, 5, 6, 7]
    assert list(view.window_bars.opts["height"]) == list(RAMP[2:])
    x, y = view.mean_line.getOriginalDataset()
    assert list(y) == pytest.approx([100.0, 100.0]) and x[0] < 3 < 7 < x[-1]
    tip = view.plot.toolTip().splitlines()
    assert tip[0] == "round 1: 900.0 MB/s" and tip[2] == "round 3: 100.0 MB/s (window)"
    # the rounds are never a figure of their own beside the phase's
    assert pane.other_figures.isHidden()
    assert pane.results.phases_shown() == ["seq_write"]

    view.chooser.activated.emit(1)  # the user picks the second repetition
    assert view.shown() is with_rounds.rounds[1]
    assert view.verdict.text().startswith("<b>Not steady in 6 rounds, excursion 50 %</b>")
    assert list(view.before_bars.opts["height"]) == [100.0]

    assert pane.latency_map.isHidden()  # stored without samples: the rounds alone

    pane.show_detail(without)
    assert view.isHidden() and view.keys == [] and view.shown() is None
    assert pane.charts.isHidden()


def test_one_repetition_needs_no_chooser(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view = SteadyRoundsView()
    qtbot.addWidget(view)
    view.set_rounds(stored(tmp_path, RAMP[2:])[0].rounds)
    view.show()
    assert view.chooser.isHidden() and view.keys == [("seq_write", 1)]
    assert view.verdict.text().startswith("<b>Steady after 5 rounds</b>")
    assert list(view.before_bars.opts["x"]) == []  # every round is in the window


@needs_loop
def test_a_real_steady_state_run_shows_its_rounds_in_the_history(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db_url = f"sqlite:///{tmp_path / 'history.db'}"
    with loop_device(64 * MiB) as loop:
        subprocess.run(
            [sys.executable, "-m", "stripewise", "bench", "--engine", "builtin", "--save",
             "--db", db_url, "--target", loop.device, "--confirm-serial", loop.image,
             "--size", "8M", "--phases", "seq_write", "--steady-state", "--max-rounds", "5"],
            capture_output=True, text=True, timeout=300, check=True,
        )  # fmt: skip
    db = open_database(db_url)
    try:
        store = HistoryStore(db)
        (run,) = store.list_runs()
        detail = store.get_run(run.id)
    finally:
        db.close()
    pane = RunDetailPane()
    qtbot.addWidget(pane)
    pane.show()
    pane.show_detail(detail)
    view = pane.steady_rounds
    (rounds,) = detail.rounds
    assert not view.isHidden() and view.keys == [("seq_write", 1)]
    assert list(view.window_bars.opts["height"]) == list(rounds.kept.rounds)  # 5 rounds, one window
    verdict = "Steady after 5 rounds" if rounds.kept.steady else "Not steady in 5 rounds"
    assert view.verdict.text().startswith(f"<b>{verdict}")


def test_the_live_results_never_show_a_round_as_a_figure(qtbot) -> None:  # type: ignore[no-untyped-def]
    outcomes = [
        PhaseOutcome(
            Phase.SEQ_WRITE, 1, 10.0, write_bytes=10**9,
            steady=SteadyRounds(NEVER, tuple(r / 1.048576 for r in NEVER)),
        )
    ]  # fmt: skip
    with_rounds = RunResult("r", RunStatus.COMPLETE, 1.0, "builtin", "1", phase_summaries(outcomes))
    assert any(v.metric == "round_throughput" for v in with_rounds.values())  # as stored
    without = replace(with_rounds, results=(replace(with_rounds.results[0], steady_rounds=()),))
    tables = []
    for result in (with_rounds, without):
        table = ResultsTable()
        qtbot.addWidget(table)
        table.set_run_result(result)
        tables.append(table)
    shown, plain = tables
    assert shown.phases_shown() == plain.phases_shown() == ["seq_write"]
    assert shown.rowCount() == plain.rowCount() and shown.spread_warnings() == []
    assert [shown.cell_text("seq_write", c) for c in range(shown.columnCount())] == [
        plain.cell_text("seq_write", c) for c in range(plain.columnCount())
    ]

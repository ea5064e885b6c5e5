"""A steady-state run's rounds in the history: read back apart from its figures, never tested
as passes by a comparison nor shown as a phase's figure; runs without rounds, old and written
by hand, load as before."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from tests.history.conftest import RunMaker

from stripewise.history.database import Database, open_database, path_to_url
from stripewise.history.export import (
    export_comparison_csv,
    export_comparison_json,
    export_run_csv,
    export_run_json,
)
from stripewise.history.headlines import make_headlines
from stripewise.history.report_html import report_html, run_report_html
from stripewise.history.store import HistoryStore
from stripewise.model.bench import Phase, PhaseOutcome, phase_summaries
from stripewise.model.compare import compare_runs
from stripewise.model.run import ResultValue
from stripewise.model.steady_state import SteadyRounds
from stripewise.model.vocabulary import ROUND_METRICS

RAMP = (900.0, 400.0, 100.0, 102.0, 98.0, 101.0, 99.0)


def steady_values(level: float, repetitions: int = 3) -> tuple[ResultValue, ...]:
    """A steady-state seq_write repeated: each repetition a burst, then 5 steady rounds."""
    outcomes = []
    for repetition in range(1, repetitions + 1):
        rounds = tuple(r * level / 100 + repetition for r in RAMP)
        steady = SteadyRounds(rounds, tuple(r * 1e6 / 2**20 for r in rounds))
        outcomes.append(
            PhaseOutcome(Phase.SEQ_WRITE, repetition, 10.0, write_bytes=10**9, steady=steady)
        )
    return tuple(v for result in phase_summaries(outcomes) for v in result.values())


def test_the_rounds_read_back_apart_from_the_figures(
    db: Database, store: HistoryStore, make_run: RunMaker
) -> None:
    run_id = make_run(results=steady_values(100))
    detail = store.get_run(run_id)
    assert not {r.metric for r in detail.results} & ROUND_METRICS
    assert {r.phase for r in detail.results} == {"seq_write"}
    assert [(r.phase, r.unit, r.kept.repetition) for r in detail.rounds] == [
        ("seq_write", "MB/s", n) for n in (1, 2, 3)
    ]
    first = detail.rounds[0].kept
    assert first.rounds == tuple(r + 1 for r in RAMP) and first.steady
    assert first.window.mean == pytest.approx(101.0)
    assert first.window.excursion_pct == pytest.approx(4.0, abs=0.1)
    assert first.verdict() == "steady after 7 rounds"
    # the headline is the phase's figure, the windows' mean, never a round
    (headline,) = make_headlines(db, [run_id]).values()
    assert headline.figures == "write 102 MB/s"


def test_a_comparison_tests_the_repetitions_never_the_rounds(
    store: HistoryStore, make_run: RunMaker
) -> None:
    first, second = make_run(results=steady_values(100)), make_run(results=steady_values(110))
    comparison = compare_runs(store.get_runs([first, second]))
    assert not any(row.metric in ROUND_METRICS for row in comparison.rows)
    assert not any("repetition" in row.phase for row in comparison.rows)
    (throughput,) = [r for r in comparison.rows if r.metric == "throughput"]
    assert throughput.pass_counts == (3, 3)  # three repetitions, not 7 rounds each
    assert throughput.passes[0] == pytest.approx((101.0, 102.0, 103.0))
    assert throughput.evidence[1] is not None and throughput.verdicts[1] == "better"
    # a RunDetail made otherwise, its rounds left among its results, is compared alike
    kept_in = [
        replace(detail, results=(*detail.results, *steady_values(100)))
        for detail in store.get_runs([first, second])
    ]
    assert [r.metric for r in compare_runs(kept_in).rows] == [r.metric for r in comparison.rows]


def test_a_run_written_by_hand_without_rounds_loads(
    store: HistoryStore, make_run: RunMaker, db_path: Path
) -> None:
    run_id = make_run(results=())
    with sqlite3.connect(db_path) as conn:  # the documented columns, and nothing of rounds
        conn.execute(
            "INSERT INTO results (run_id, phase, metric, unit, value, min_value, max_value,"
            " repetitions, passes) VALUES (?, 'seq_write', 'throughput', 'MB/s', 512.5, 510,"
            " 515, 3, '[510, 512.5, 515]')",
            (run_id,),
        )
    conn.close()
    detail = store.get_run(run_id)
    assert detail.rounds == ()
    assert [(r.phase, r.metric, r.value, r.passes) for r in detail.results] == [
        ("seq_write", "throughput", 512.5, (510.0, 512.5, 515.0))
    ]


def test_a_run_written_by_hand_with_its_rounds_alone_loads_them(
    store: HistoryStore, make_run: RunMaker, db_path: Path
) -> None:
    run_id = make_run(results=())
    with sqlite3.connect(db_path) as conn:
        conn.execute(
            "INSERT INTO results (run_id, phase, metric, unit, value, repetitions, passes)"
            " VALUES (?, 'random_write (repetition 2)', 'round_iops', 'IOPS', NULL, 1,"
            " '[9000, 10000, 10100, 9900, 10000]')",
            (run_id,),
        )
    conn.close()
    (rounds,) = store.get_run(run_id).rounds
    assert (rounds.phase, rounds.unit, rounds.kept.repetition) == ("random_write", "IOPS", 2)
    assert rounds.kept.steady and rounds.kept.window.mean == pytest.approx(9800.0)


def test_an_old_history_loads_unchanged_with_no_rounds(
    db_path: Path, legacy_db: Callable[[str], int]
) -> None:
    run_id = legacy_db("stored at revision 0001")
    db = open_database(path_to_url(db_path))
    try:
        detail = HistoryStore(db).get_run(run_id)
    finally:
        db.close()
    assert detail.rounds == ()
    assert detail.results and not {r.metric for r in detail.results} & ROUND_METRICS


def test_exports_carry_the_rounds_apart_and_never_as_a_figure(
    store: HistoryStore, make_run: RunMaker
) -> None:
    first, second = make_run(results=steady_values(100)), make_run(results=steady_values(110))
    detail = store.get_run(first)
    document = json.loads(export_run_json(detail, []))
    assert {r["metric"] for r in document["results"]}.isdisjoint(ROUND_METRICS)
    assert [(r["phase"], r["repetition"]) for r in document["rounds"]] == [
        ("seq_write", n) for n in (1, 2, 3)
    ]
    assert document["rounds"][0]["rounds"] == [r + 1 for r in RAMP]
    assert document["rounds"][0]["window_start"] == 3 and document["rounds"][0]["steady"]
    plain = json.loads(export_run_json(store.get_run(make_run(results=())), []))
    assert "rounds" not in plain  # every other run's document as before
    comparison = compare_runs(store.get_runs([first, second]))
    for text in (
        export_run_csv(detail),
        run_report_html(detail, []),
        export_comparison_json(comparison),
        export_comparison_csv(comparison),
        report_html(comparison),
    ):
        assert "round_" not in text and "(repetition" not in text
    report = run_report_html(detail, [])  # the rounds in a section of their own
    section = report[report.index("<h2>Steady state</h2>") : report.index("Throughput over time")]
    assert section.count("<tr><td>seq_write</td>") == 3
    assert "steady after 7 rounds" in section and "excursion 4.0 %" in section
    assert "401.0, <b>101.0</b>, <b>103.0</b>" in section  # repetition 1: the window from 3
    assert "Steady state" not in run_report_html(store.get_run(make_run(results=())), [])

"""A real steady-state run on a RAM-backed loop device, saved and read back: `history show`
prints each repetition's rounds with its window and verdict, `--json` carries them, and the
phase's figure is each repetition's window mean, never a round."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore
from tests.fixtures.loops import MiB, loop_device, needs_loop

ROUNDS = 5  # one window: the run stops at 5 rounds, steady or not


def stripewise(*argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "stripewise", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@needs_loop
def test_a_real_steady_state_run_reads_back_with_its_rounds(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'history.db'}"
    with loop_device(64 * MiB) as loop:
        stripewise(
            *("bench", "--engine", "builtin", "--save", "--db", db_url),
            *("--target", loop.device, "--confirm-serial", loop.image, "--size", "8M"),
            *("--phases", "seq_write", "--repetitions", "2"),
            *("--steady-state", "--max-rounds", str(ROUNDS)),
        )
    db = open_database(db_url)
    try:
        store = HistoryStore(db)
        (run,) = store.list_runs()
        detail = store.get_run(run.id)
    finally:
        db.close()
    assert [(r.phase, r.unit, r.kept.repetition) for r in detail.rounds] == [
        ("seq_write", "MB/s", 1),
        ("seq_write", "MB/s", 2),
    ]
    (throughput,) = [r for r in detail.results if r.metric == "throughput"]
    assert throughput.repetitions == 2 and len(throughput.passes) == 2  # not 10 rounds
    for rounds, figure in zip(detail.rounds, throughput.passes, strict=True):
        kept = rounds.kept
        assert len(kept.rounds) == ROUNDS and all(r > 0 for r in kept.rounds)
        assert kept.window.mean == pytest.approx(figure, abs=0.01)  # the phase's figure
        assert kept.window.excursion_pct is not None and kept.window.slope_pct is not None
        assert kept.steady == (kept.window.excursion_pct <= 20 and kept.window.slope_pct <= 10)
    never = any(not r.kept.steady for r in detail.rounds)
    assert ("not_steady" in throughput.flags) == never

    text = stripewise("history", "show", str(run.id), "--db", db_url)
    for rounds in detail.rounds:
        kept = rounds.kept
        verdict = f"steady after {ROUNDS} rounds" if kept.steady else f"not steady in {ROUNDS}"
        assert f"Steady state, seq_write repetition {kept.repetition}: {verdict}" in text
    assert text.count("  window: rounds 1-5, mean ") == 2
    # seq_write's figure is its window's mean, not a median: the column says Value, and why
    assert " Median " not in text and " Value " in text
    assert "Value: the median of the repetitions; for seq_write: the mean of the steady " in text
    assert "CPU weighted by each round's time), latency the last round's." in " ".join(text.split())
    round_rows = [line.split() for line in text.splitlines() if line.endswith(" window")]
    assert [row[0] for row in round_rows] == ["1", "2", "3", "4", "5"] * 2
    shown = [float(row[1].replace(",", "")) for row in round_rows]
    # shown to a tenth: half a tenth off at most (4006.25 shows as 4006.2), float error aside
    stored = [f for r in detail.rounds for f in r.kept.rounds]
    assert shown == pytest.approx(stored, abs=0.05 + 1e-6)
    assert "round_throughput" not in text and "(repetition" not in text  # no figure of its own

    document = json.loads(stripewise("history", "show", str(run.id), "--json", "--db", db_url))
    assert [(r["phase"], r["repetition"], r["unit"]) for r in document["rounds"]] == [
        ("seq_write", 1, "MB/s"),
        ("seq_write", 2, "MB/s"),
    ]
    first = document["rounds"][0]
    assert first["rounds"] == list(detail.rounds[0].kept.rounds)
    assert set(first["window"]) == {"mean", "excursion_pct", "slope_pct"}
    assert first["window_start"] == 1 and first["verdict"] == detail.rounds[0].kept.verdict()
    assert {r["phase"] for r in document["results"]} == {"seq_write"}


def test_a_run_without_rounds_shows_and_exports_as_before(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'history.db'}"
    stripewise(
        *("bench", "--engine", "builtin", "--save", "--db", db_url, "--target", str(tmp_path)),
        *("--size", "4M", "--phases", "seq_write"),
    )
    document = json.loads(stripewise("history", "show", "1", "--json", "--db", db_url))
    assert "rounds" not in document
    assert "Steady state" not in stripewise("history", "show", "1", "--db", db_url)

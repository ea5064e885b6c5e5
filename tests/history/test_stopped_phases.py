"""A phase the admin cancelled (or that failed) reads `cancelled` / `failed` wherever a stored
run is shown, as the live bench table says it: `history show`, its `--json`, the exports and
comparisons; never a blank row. A run stored before the phases' errors were kept still loads,
and a cancelled one says `cancelled` too.

Real runs: `stripewise bench --save` cancelled by SIGTERM while its second phase runs."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.fixtures.cancelled_run import cancelled_run, stripewise

from stripewise.history.database import open_database, path_to_url
from stripewise.history.store import HistoryStore
from stripewise.model.bench import Phase, PhaseOutcome, phase_summaries
from stripewise.model.run import RunStatus
from stripewise.model.run_detail import RunDetail
from stripewise.system.hostinfo import HostInfo


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[dict[str, Any]]]:
    """Run 1 cancelled in random_write, run 2 the same phases complete."""
    where = tmp_path_factory.mktemp("stopped")
    db = f"sqlite:///{where / 'history.db'}"
    events = cancelled_run(where / "target", db, "--size", "256M")
    done = stripewise(
        db, "bench", "--engine", "builtin", "--target", str(where / "target"), "--size", "8M",
        "--phases", "seq_write,random_write", "--save",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return db, events


def test_history_show_says_the_phase_was_cancelled(runs: tuple[str, list[Any]]) -> None:
    db, events = runs
    [stopped] = [e for e in events if e["event"] == "phase_result" and e["error"]]
    assert stopped["phase"] == "random_write" and stopped["error"] == "cancelled"
    shown = stripewise(db, "history", "show", "1")
    assert shown.returncode == 0, shown.stderr
    rows = [line.split() for line in shown.stdout.splitlines() if line.startswith("random_write")]
    # every figure of the phase, MB/s and IOPS too, says why it is missing
    assert [row[1] for row in rows] == [
        "throughput", "iops", "latency_p50", "latency_p99", "cpu", "efficiency",
    ]  # fmt: skip
    assert all(row[2] == "cancelled" for row in rows), rows
    assert "Stopped:\n  random_write: cancelled" in shown.stdout
    seq = [line for line in shown.stdout.splitlines() if line.startswith("seq_write")]
    assert seq and not any("cancelled" in line for line in seq)  # it finished: its figures


def test_history_show_json_adds_the_word_and_keeps_its_keys(runs: tuple[str, list[Any]]) -> None:
    db, _ = runs
    shown = stripewise(db, "history", "show", "1", "--json")
    results = json.loads(shown.stdout)["results"]
    stopped = [r for r in results if r["phase"] == "random_write"]
    assert {r["metric"] for r in stopped} >= {"throughput", "iops"}
    for r in stopped:
        assert r["value"] is None and r["stopped"] == "cancelled" and r["errors"] == ["cancelled"]
    for r in (r for r in results if r["phase"] == "seq_write"):
        assert r["value"] is not None and r["stopped"] is None and r["errors"] == []
    assert {"phase", "metric", "unit", "value", "min_value", "max_value"} <= set(results[0])


def test_exports_say_the_phase_was_cancelled(runs: tuple[str, list[Any]]) -> None:
    db, _ = runs
    as_csv = stripewise(db, "history", "export", "1", "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(as_csv)))
    assert {r["stopped"] for r in rows if r["phase"] == "random_write"} == {"cancelled"}
    assert {r["value"] for r in rows if r["phase"] == "random_write"} == {""}  # no 0
    assert {r["stopped"] for r in rows if r["phase"] == "seq_write"} == {""}
    as_json = json.loads(stripewise(db, "history", "export", "1", "--format", "json").stdout)
    assert {r["stopped"] for r in as_json["results"] if r["phase"] == "random_write"} == {
        "cancelled"
    }
    html = stripewise(db, "history", "export", "1", "--format", "html").stdout
    assert '<td class="num">cancelled</td>' in html
    assert "Stopped: random_write: cancelled." in html


def test_a_comparison_says_which_run_was_cancelled(runs: tuple[str, list[Any]]) -> None:
    db, _ = runs
    shown = stripewise(db, "history", "compare", "2", "1")
    assert shown.returncode == 0, shown.stderr
    [row] = [
        line for line in shown.stdout.splitlines() if line.startswith("random_write  throughput")
    ]
    assert row.split()[-1] == "cancelled", row  # run 1's mean: why there is none
    as_json = json.loads(stripewise(db, "history", "compare", "2", "1", "--json").stdout)
    [found] = [
        r for r in as_json["rows"] if (r["phase"], r["metric"]) == ("random_write", "throughput")
    ]
    assert found["stopped"] == [None, "cancelled"]
    as_csv = stripewise(db, "history", "export", "2", "1", "--format", "csv").stdout
    [found_csv] = [
        r
        for r in csv.DictReader(io.StringIO(as_csv))
        if (r["phase"], r["metric"]) == ("random_write", "throughput")
    ]
    assert found_csv["#1 stopped"] == "cancelled" and found_csv["#2 stopped"] == ""


def test_a_cancelled_steady_state_phase_has_no_window(tmp_path: Path) -> None:
    """Its last rounds' mean (fewer than a window's) is no steady window: `bench --json`
    gives none, and the history keeps no rounds for it, only `cancelled`."""
    db = f"sqlite:///{tmp_path / 'history.db'}"
    events = cancelled_run(
        tmp_path / "target", db, "--size", "16M", "--steady-state", "--max-rounds", "30", rounds=2
    )
    [stopped] = [e for e in events if e["event"] == "phase_result" and e["error"]]
    assert stopped["phase"] == "random_write" and len(stopped["rounds"]) >= 2
    assert "window" not in stopped and stopped["mb_s"] is None  # no steady window
    shown = stripewise(db, "history", "show", "1", "--json")
    run = json.loads(shown.stdout)
    assert all(r["phase"] != "random_write" for r in run.get("rounds", []))
    assert {r["stopped"] for r in run["results"] if r["phase"] == "random_write"} == {"cancelled"}


def _stored_before(tmp_path: Path, status: RunStatus) -> RunDetail:
    """A run filed as this version's predecessors filed a phase cancelled after one good
    phase: its single figures NULL, no MB/s or IOPS rows, no errors kept."""
    outcomes = [
        PhaseOutcome(Phase.SEQ_WRITE, 1, 1.0, write_bytes=10**8, cpu_busy_pct=20.0),
        PhaseOutcome(Phase.RANDOM_WRITE, 1, 0.5, write_bytes=10**6, error="cancelled"),
    ]
    values = [
        replace(v, errors=())
        for result in phase_summaries(outcomes)
        for v in result.values()
        if v.value is not None or v.metric not in ("throughput", "iops")
    ]
    db = open_database(path_to_url(tmp_path / "history.db"))
    try:
        store = HistoryStore(db)
        host = store.ensure_host(HostInfo("bench-01", "mid-1"))
        run_id = store.create_run(host, name="r", target="/t", engine="builtin", engine_version="1")
        store.add_results(run_id, values)
        store.finish_run(run_id, status)
        return store.get_run(run_id)
    finally:
        db.close()


@pytest.mark.parametrize("status", [RunStatus.CANCELLED, RunStatus.FAILED])
def test_a_run_stored_before_says_its_stopped_phase(tmp_path: Path, status: RunStatus) -> None:
    detail = _stored_before(tmp_path, status)
    stopped = {r.metric: r.errors for r in detail.results if r.phase == "random_write"}
    assert set(stopped) == {"latency_p50", "latency_p99", "cpu", "efficiency"}
    assert set(stopped.values()) == {(status.value,)}
    assert all(not r.errors for r in detail.results if r.phase == "seq_write")


def test_a_complete_run_stored_before_reads_as_it_did(tmp_path: Path) -> None:
    detail = _stored_before(tmp_path, RunStatus.COMPLETE)
    assert all(not r.errors for r in detail.results)

"""Experiments kept in the history (history.experiments), on real SQLite files and on the
test PostgreSQL server: created, finished, listed, read back, trashed and restored with their
runs; a row written by hand from the documented keys reads back."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.fixtures.experiments import (
    HOST,
    grid_design,
    grid_means,
    read_ahead_design,
    read_ahead_means,
    simulated_result,
    store_point_runs,
)

from stripewise.history.database import Database, DatabaseError, open_database, path_to_url
from stripewise.history.experiments import (
    ExperimentNotFoundError,
    create_experiment,
    delete_experiment,
    finish_experiment,
    get_experiment,
    list_experiments,
    purge_experiments,
    restore_experiment,
)
from stripewise.history.store import HistoryStore
from stripewise.model.experiment_result import Verdict
from stripewise.model.run import RunStatus
from stripewise.protocol.experiment import result_to_json

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
START = (("read_ahead_kb", 128),)


def _finished_read_ahead(db: Database, when: datetime = T0) -> tuple[int, dict]:
    design = read_ahead_design()
    experiment_id = create_experiment(
        db, "loop7 read-ahead", design, host_info=HOST, created_at=when
    )
    runs = store_point_runs(db, experiment_id, design)
    result = simulated_result(design, read_ahead_means(), START, runs)
    finish_experiment(db, experiment_id, result, "complete", finished_at=when + timedelta(hours=1))
    return experiment_id, runs


def test_an_experiment_is_kept_listed_and_read_back(history_db: Database) -> None:
    design = read_ahead_design()
    experiment_id = create_experiment(history_db, "  loop7   read-ahead ", design, host_info=HOST)
    (running,) = list_experiments(history_db)
    assert running.id == experiment_id
    assert running.name == "loop7 read-ahead"
    assert running.status is RunStatus.RUNNING
    assert running.parameters == ("read_ahead_kb",)
    assert (running.verdict, running.recommended, running.points) == (None, None, 0)
    assert running.host == "thumper"
    assert get_experiment(history_db, experiment_id).result is None

    runs = store_point_runs(history_db, experiment_id, design)
    result = simulated_result(design, read_ahead_means(), START, runs)
    finish_experiment(history_db, experiment_id, result, RunStatus.COMPLETE)

    stored = get_experiment(history_db, experiment_id)
    assert stored.design == design
    assert stored.result is not None
    assert stored.result.experiment == experiment_id
    assert stored.result.points == result.points
    assert stored.result.recommendation == result.recommendation
    assert stored.run_ids == tuple(sorted(i for ids in runs.values() for i in ids))
    summary = stored.summary
    assert summary.status is RunStatus.COMPLETE
    assert summary.finished_at is not None
    assert summary.verdict is Verdict.BETTER
    # 512 is as good as 4096 and less aggressive: the recommendation
    assert summary.recommended_text == "read_ahead_kb=512"
    assert (summary.points, summary.runs) == (3, 6)


def test_listing_is_newest_first_and_grids_keep_both_names(history_db: Database) -> None:
    older, _runs = _finished_read_ahead(history_db, T0)
    design = grid_design()
    newer = create_experiment(
        history_db, "raid qd x bs", design, host_info=HOST, created_at=T0 + timedelta(days=1)
    )
    base = (("queue_depth", 1), ("block_size", 4096))
    finish_experiment(history_db, newer, simulated_result(design, grid_means(), base), "cancelled")
    listed = list_experiments(history_db)
    assert [e.id for e in listed] == [newer, older]
    assert listed[0].parameters == ("queue_depth", "block_size")
    assert listed[0].status is RunStatus.CANCELLED
    assert listed[0].points == 6
    assert listed[0].runs == 0


def test_delete_and_restore_move_the_runs_with_it(history_db: Database) -> None:
    experiment_id, runs = _finished_read_ahead(history_db)
    other = HistoryStore(history_db).create_run(
        HistoryStore(history_db).ensure_host(HOST),
        name="not of the experiment",
        target="/dev/loop7",
        engine="builtin",
        engine_version="1",
        tags=("experiment:10", "experiment"),  # another experiment's: a prefix is no match
    )
    ids = sorted(i for found in runs.values() for i in found)
    store = HistoryStore(history_db)

    assert delete_experiment(history_db, experiment_id) == ids
    assert list_experiments(history_db) == []
    (trashed,) = list_experiments(history_db, trash=True)
    assert (trashed.id, trashed.runs) == (experiment_id, 6)
    assert trashed.deleted_at is not None
    assert [r.id for r in store.list_runs()] == [other]
    assert sorted(r.id for r in store.list_runs(trash=True)) == ids

    assert restore_experiment(history_db, experiment_id) == ids
    assert list_experiments(history_db, trash=True) == []
    (back,) = list_experiments(history_db)
    assert (back.runs, back.deleted_at) == (6, None)
    assert sorted(r.id for r in store.list_runs()) == sorted([*ids, other])


def test_unknown_ids_and_bad_values_are_refused(history_db: Database) -> None:
    for call in (get_experiment, delete_experiment, restore_experiment):
        with pytest.raises(ExperimentNotFoundError, match="experiment 99 is not in"):
            call(history_db, 99)
    design = read_ahead_design()
    with pytest.raises(ExperimentNotFoundError):
        finish_experiment(
            history_db, 99, simulated_result(design, read_ahead_means(), START), "complete"
        )
    with pytest.raises(ValueError, match="name needs"):
        create_experiment(history_db, "   ", design, host_info=HOST)
    experiment_id = create_experiment(history_db, "x", design, host_info=HOST)
    with pytest.raises(ValueError, match="not running"):
        finish_experiment(
            history_db,
            experiment_id,
            simulated_result(design, read_ahead_means(), START),
            "running",
        )


# -- a row written by hand -------------------------------------------------------------------

HAND_DESIGN = {
    "target": "/dev/loop7",
    "spec": {"target": "/dev/loop7", "size": 1073741824, "phases": ["seq_read"]},
    "vary": [{"name": "read_ahead_kb", "values": [128, 1024]}],
    "metric": {"phase": "seq_read", "metric": "mb_s"},
}
HAND_RESULT = {
    "type": "experiment_result",
    "experiment": 1,
    "metric": {"phase": "seq_read", "metric": "mb_s", "unit": "MB/s"},
    "points": [
        {
            "values": {"read_ahead_kb": 128},
            "runs": [],
            "passes": 3,
            "mean": 100.0,
            "ci95": [98.0, 102.0],
            "pass_values": [99.0, 100.0, 101.0],
            "baseline": True,
        },
        {
            "values": {"read_ahead_kb": 1024},
            "runs": [],
            "passes": 3,
            "mean": 150.0,
            "ci95": [148.0, 152.0],
            "pass_values": [149.0, 150.0, 151.0],
        },
    ],
    "baseline": None,
    "drift_pct": 1.5,
    "recommendation": {
        "values": {"read_ahead_kb": 1024},
        "change_pct": 50.0,
        "ci95_pct": [47.0, 53.0],
        "verdict": "better",
        "reason": "written by hand",
    },
    "restored": True,
    "a_key_of_a_newer_version": {"kept": True},
}


def _write_by_hand(path: Path, design: object, result: object) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO hosts (hostname, machine_id, kernel, cpu_model, cpu_count, ram_bytes,"
            " first_seen, last_seen) VALUES ('by-hand', 'mid-hand', '6.1', 'cpu', 2, 1,"
            " '2026-11-01 10:00:00.000000', '2026-11-01 10:00:00.000000')"
        )
        conn.execute(
            "INSERT INTO experiments (host_id, name, target, created_at, finished_at, status,"
            " parameters, design, result, deleted_at) VALUES (1, 'by hand', '/dev/loop7',"
            " '2026-11-01 10:00:00.000000', '2026-11-01 11:00:00.000000', 'complete',"
            " 'read_ahead_kb', ?, ?, NULL)",
            (json.dumps(design), json.dumps(result)),
        )
    conn.close()


def test_a_stored_experiment_written_by_hand_loads(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    open_database(path_to_url(path)).close()
    _write_by_hand(path, HAND_DESIGN, HAND_RESULT)
    with open_database(path_to_url(path)) as db:
        (summary,) = list_experiments(db)
        stored = get_experiment(db, summary.id)
    assert summary.created_at == datetime(2026, 11, 1, 10, 0, tzinfo=UTC)
    assert (summary.verdict, summary.recommended_text) == (Verdict.BETTER, "read_ahead_kb=1024")
    assert stored.design.parameters[0].values == (128, 1024)
    assert (stored.design.half_width_pct, stored.design.max_passes) == (5.0, 9)
    assert stored.result is not None
    assert [p.mean for p in stored.result.points] == [100.0, 150.0]
    assert stored.result.baseline is not None
    assert stored.result.drift_pct == 1.5
    assert stored.result.extra["a_key_of_a_newer_version"] == {"kept": True}
    # and it writes back with the same keys it was read from
    again = result_to_json(stored.result)
    assert again["recommendation"] == HAND_RESULT["recommendation"]


def test_a_stored_document_it_cannot_read_names_the_key(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    open_database(path_to_url(path)).close()
    broken = {**HAND_RESULT, "recommendation": {**HAND_RESULT["recommendation"], "verdict": "?"}}
    _write_by_hand(path, HAND_DESIGN, broken)
    with open_database(path_to_url(path)) as db:
        (summary,) = list_experiments(db)  # still listed, without its verdict
        assert summary.verdict is None
        with pytest.raises(DatabaseError, match=r"experiment 1 .* recommendation\.verdict"):
            get_experiment(db, 1)


def test_the_trash_is_emptied_of_experiments_as_of_runs(history_db: Database) -> None:
    kept, _runs = _finished_read_ahead(history_db)
    gone, _runs = _finished_read_ahead(history_db)
    delete_experiment(history_db, gone)
    assert purge_experiments(history_db, timedelta(days=1)) == 0  # not long enough
    assert purge_experiments(history_db, timedelta(0)) == 1
    assert [e.id for e in list_experiments(history_db)] == [kept]
    assert list_experiments(history_db, trash=True) == []
    with pytest.raises(ExperimentNotFoundError):
        get_experiment(history_db, gone)

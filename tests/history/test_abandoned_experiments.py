"""An experiment a crash left `running` is filed `aborted` at the next start, on SQLite and on
the test PostgreSQL server, only when the process that drove it is really gone: its newest
run's recorder, or, before its first run, a boot since it began."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tests.fixtures.experiments import (
    HOST,
    read_ahead_design,
    read_ahead_means,
    simulated_result,
    store_point_runs,
)
from tests.history.test_abandoned_runs import gone_recorder, stored

from stripewise.cli.experiment import show_text
from stripewise.history.abandoned_experiments import mark_abandoned_experiments_aborted
from stripewise.history.database import Database
from stripewise.history.experiments import (
    create_experiment,
    experiment_tag,
    finish_experiment,
    get_experiment,
)
from stripewise.history.recorder_id import booted_at, this_recorder
from stripewise.history.store import HistoryStore
from stripewise.model.run import RunStatus
from stripewise.model.run_context import RunContext
from stripewise.system.hostinfo import HostInfo


def experiment_with_runs(
    db: Database, name: str, recorders: list[Any], host: HostInfo = HOST
) -> int:
    """A running experiment whose runs, oldest first, were recorded by `recorders`."""
    design = read_ahead_design()
    experiment_id = create_experiment(db, name, design, host_info=host)
    store = HistoryStore(db)
    host_id = store.ensure_host(host)
    for recorder in recorders:
        run_id = store.create_run(
            host_id,
            name=f"{name}: a point",
            target=design.target,
            engine="builtin",
            engine_version="1",
            spec=design.spec,
            tags=("experiment", experiment_tag(experiment_id)),
            context=RunContext.from_json({"recorder": stored(recorder)}),
        )
        store.finish_run(run_id, RunStatus.COMPLETE)
    return experiment_id


def status_of(db: Database, experiment_id: int) -> RunStatus:
    return get_experiment(db, experiment_id).summary.status


def test_only_experiments_whose_driver_is_gone_are_aborted(history_db: Database) -> None:
    dead = gone_recorder()
    live = experiment_with_runs(history_db, "still driven", [dead, this_recorder()])
    crashed = experiment_with_runs(history_db, "driver crashed", [this_recorder(), dead])
    waiting = experiment_with_runs(history_db, "no run yet, this boot", [])
    booted = booted_at()
    assert booted is not None
    before_boot = create_experiment(
        history_db, "no run, before the boot", read_ahead_design(), host_info=HOST,
        created_at=booted - timedelta(minutes=1),
    )  # fmt: skip
    other_host = HostInfo("node9", "f" * 32, "6.1", "Xeon", 8, 2**34)
    elsewhere = experiment_with_runs(history_db, "another host's", [dead], host=other_host)

    aborted = mark_abandoned_experiments_aborted(history_db, HOST.machine_id)

    assert sorted(aborted) == sorted([crashed, before_boot])
    assert {
        e: status_of(history_db, e) for e in (live, crashed, waiting, before_boot, elsewhere)
    } == {
        live: RunStatus.RUNNING,
        crashed: RunStatus.ABORTED,
        waiting: RunStatus.RUNNING,
        before_boot: RunStatus.ABORTED,
        elsewhere: RunStatus.RUNNING,
    }
    assert mark_abandoned_experiments_aborted(history_db, HOST.machine_id) == []


def test_a_finished_experiment_is_left_as_it_ended(history_db: Database) -> None:
    design = read_ahead_design()
    experiment_id = create_experiment(history_db, "done", design, host_info=HOST)
    runs = store_point_runs(history_db, experiment_id, design)  # recorded by nobody known
    result = simulated_result(design, read_ahead_means(), (("read_ahead_kb", 128),), runs)
    finish_experiment(history_db, experiment_id, result, "complete")
    assert mark_abandoned_experiments_aborted(history_db, HOST.machine_id) == []
    assert status_of(history_db, experiment_id) == RunStatus.COMPLETE


def test_an_aborted_experiment_says_it_ended_without_a_result(history_db: Database) -> None:
    crashed = experiment_with_runs(history_db, "driver crashed", [gone_recorder()])
    assert "No result: it has not ended." in show_text(get_experiment(history_db, crashed))
    mark_abandoned_experiments_aborted(history_db, HOST.machine_id)
    text = show_text(get_experiment(history_db, crashed))
    assert "No result: it ended aborted before it had one." in text

"""Experiments a crash left `running`, filed `aborted` at start-up as runs are.

An experiment has no recorder of its own: the process that drives it records its runs, so its
newest run's recorder (`context.recorder`, history.recorder_id) tells whether that process
lives. One without a run yet is left alone unless it began before this machine booted. Kept
apart from history.experiments so that every command's start-up need not import it.
"""

from __future__ import annotations

from sqlalchemy import Connection, func, select, update

from stripewise.history.connection import Database, driver_errors
from stripewise.history.experiment_tags import experiment_tag
from stripewise.history.models import experiments, hosts, run_tags, runs
from stripewise.history.recorder_id import booted_at, recorder_alive
from stripewise.model.run import RunStatus
from stripewise.model.run_context import RunContext


def mark_abandoned_experiments_aborted(db: Database, machine_id: str) -> list[int]:
    """This machine's experiments whose driving process is gone become `aborted`; -> their
    ids. Run it after `HistoryStore.mark_abandoned_runs_aborted`."""
    running = experiments.c.status == RunStatus.RUNNING.value
    stmt = (
        select(experiments.c.id, experiments.c.created_at)
        .join(hosts, experiments.c.host_id == hosts.c.id)
        .where(running, hosts.c.machine_id == machine_id)
    )
    booted = booted_at()
    with driver_errors(db), db.engine.begin() as conn:
        abandoned = []
        for row in conn.execute(stmt).all():
            newest = _newest_run_context(conn, int(row.id))
            if newest is None:
                gone = booted is not None and row.created_at < booted
            else:
                gone = not recorder_alive(RunContext.from_json(newest).recorder)
            if gone:
                abandoned.append(int(row.id))
        if abandoned:
            conn.execute(
                update(experiments)
                .where(experiments.c.id.in_(abandoned), running)
                .values(status=RunStatus.ABORTED.value)
            )
    return abandoned


def _newest_run_context(conn: Connection, experiment_id: int) -> object | None:
    """The stored context of the experiment's newest run, listed or in the trash; None
    without one. Its tag is found through `run_tags`' index, as the tag filter reads it."""
    tagged = select(run_tags.c.run_id).where(
        func.lower(run_tags.c.tag) == experiment_tag(experiment_id)
    )
    newest = conn.execute(
        select(runs.c.context)
        .where(runs.c.id.in_(tagged))
        .order_by(runs.c.started_at.desc(), runs.c.id.desc())
        .limit(1)
    ).first()
    return None if newest is None else newest.context

"""The newest benchmark of a planned array, to show predicted against measured.

Convention (written by the benchmark runner): a run of an array records
`context.array.name` and `context.host_key`, and its results carry `seq_read` / `seq_write`
phases with a `throughput` metric in MB/s (the history's vocabulary, `model.vocabulary`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from stripewise.history.database import Database
from stripewise.history.models import results, runs
from stripewise.model.run import RunStatus
from stripewise.model.vocabulary import THROUGHPUT


@dataclass(frozen=True)
class MeasuredArray:
    run_id: int
    started_at: datetime
    read_mb_s: float | None
    write_mb_s: float | None


def measured_for_array(db: Database, host_key: str, array_name: str) -> MeasuredArray | None:
    context = runs.c.context
    newest = (
        select(runs.c.id, runs.c.started_at)
        .where(context["array"]["name"].as_string() == array_name)
        .where(context["host_key"].as_string() == host_key)
        .where(runs.c.status == RunStatus.COMPLETE.value)
        .order_by(runs.c.started_at.desc(), runs.c.id.desc())
        .limit(1)
    )
    with db.engine.connect() as conn:
        run = conn.execute(newest).first()
        if run is None:
            return None
        rows = conn.execute(
            select(results.c.phase, results.c.value)
            .where(results.c.run_id == run.id)
            .where(results.c.metric == THROUGHPUT.metric)
            .where(results.c.unit == THROUGHPUT.unit)
        ).all()
    figures = {row.phase: row.value for row in rows}
    from stripewise.history.rows import as_utc

    return MeasuredArray(
        run_id=run.id,
        started_at=as_utc(run.started_at) if run.started_at else run.started_at,
        read_mb_s=figures.get("seq_read"),
        write_mb_s=figures.get("seq_write"),
    )

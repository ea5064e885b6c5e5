"""Runs the history knows by their key (`runs.uuid`): a run's row with the machine it was
measured on, as a recorder writes it and the local spool keeps it (`history.spool`).

The history side: `history.run_row.write_run` creates the row once, however often a recorder
or a spool sync asks; `file_end` files its end over `running` or a start-up's `aborted`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import update

from stripewise.history.connection import Database, driver_errors
from stripewise.history.json_values import json_safe
from stripewise.history.models import runs, utc_now
from stripewise.history.run_row import RunRow, read_spec, stored_spec
from stripewise.model.run import RunStatus
from stripewise.model.run_context import RunContext
from stripewise.system.hostinfo import HostInfo


@dataclass(frozen=True)
class KeyedRun:
    """A run's row and its host: what a recorder files and the spool keeps until it can."""

    host: HostInfo
    row: RunRow

    @property
    def key(self) -> str:
        return self.row.key

    def to_json(self) -> str:
        """The spool's header: the shape earlier versions wrote and read."""
        row = self.row
        fields = {
            "key": row.key,
            "host": vars(self.host),
            "name": row.name,
            "target": row.target,
            "engine": row.engine,
            "engine_version": row.engine_version,
            "spec": stored_spec(row.spec, row.options),
            "context": row.context.to_json(),
            "started_at": row.started_at.isoformat(),
            "tags": list(row.tags),
            "source": row.source,
        }
        return json.dumps(json_safe(fields))

    @classmethod
    def from_json(cls, text: str) -> KeyedRun:
        fields = json.loads(text)
        spec, options = read_spec(fields["spec"])
        row = RunRow(
            key=fields["key"],
            name=fields["name"],
            target=fields["target"],
            engine=fields["engine"],
            engine_version=fields["engine_version"],
            spec=spec,
            options=options,
            context=RunContext.from_json(fields["context"]),
            started_at=datetime.fromisoformat(fields["started_at"]),
            tags=tuple(fields["tags"]),
            source=fields["source"],
        )
        return cls(HostInfo(**fields["host"]), row)


def file_end(db: Database, run_id: int, status: RunStatus, ended: datetime | None) -> None:
    """The recorder's final word, over `running` or a start-up's `aborted` guess, and the
    run's blocks merged (the live ones and the spooled rest), as finish_run does: one
    transaction, so a run is never filed as ended with its blocks left unmerged."""
    from stripewise.history import sample_table  # loads numpy, as the samples just sent did

    open_states = (RunStatus.RUNNING.value, RunStatus.ABORTED.value)
    stmt = (
        update(runs)
        .where(runs.c.id == run_id, runs.c.status.in_(open_states))
        .values(status=status.value, finished_at=ended or utc_now())
    )
    with driver_errors(db), db.engine.begin() as conn:
        sample_table.lock_run(conn, run_id)
        conn.execute(stmt)
        sample_table.merge(conn, run_id)

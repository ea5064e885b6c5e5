"""Runs the history knows by their key (`runs.uuid`): created once, however often a recorder
or a spool sync asks, and filled in from what the local spool kept.

The history side of `history.spool`: every step checks what the database already has, so a
sync repeated after a crash half-way stores nothing twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import exc as sa_exc
from sqlalchemy import insert, select, update

from stripewise.history.database import Database
from stripewise.history.errors import DatabaseError, one_line
from stripewise.history.models import runs, utc_now
from stripewise.history.recorder_id import recorder_alive
from stripewise.history.store import HistoryStore, SampleRow, json_safe
from stripewise.model.run import ResultValue, RunStatus
from stripewise.system.hostinfo import HostInfo


@dataclass(frozen=True)
class KeyedRun:
    """A run's row as the history stores it, with the key that identifies it everywhere."""

    key: str
    host: HostInfo
    name: str
    target: str
    engine: str
    engine_version: str
    spec: dict[str, Any]
    context: dict[str, Any]
    started_at: datetime
    tags: tuple[str, ...] = ()
    source: str = "measured"

    def to_json(self) -> str:
        fields = asdict(self) | {"started_at": self.started_at.isoformat()}
        return json.dumps(json_safe(fields))

    @classmethod
    def from_json(cls, text: str) -> KeyedRun:
        fields = json.loads(text)
        return cls(
            **fields
            | {
                "host": HostInfo(**fields["host"]),
                "started_at": datetime.fromisoformat(fields["started_at"]),
                "tags": tuple(fields["tags"]),
            }
        )


@dataclass(frozen=True)
class SpooledRun:
    """One run as the spool holds it: its header, and what it knows of its end."""

    run: KeyedRun
    samples: list[SampleRow]
    status: str | None  # None: not ended (still recorded, or its recorder died)
    finished_at: str | None
    results: str | None  # JSON: the final results, or the finished phases' so far


def find_run(db: Database, key: str) -> int | None:
    with _translated(db), db.engine.connect() as conn:
        found = conn.execute(select(runs.c.id).where(runs.c.uuid == key)).scalar_one_or_none()
    return None if found is None else int(found)


def create_keyed_run(db: Database, run: KeyedRun) -> int:
    """The run's row under its own key; the existing row if a lost reply hid an earlier
    success. `status running`, as HistoryStore.create_run files it."""
    if (found := find_run(db, run.key)) is not None:
        return found
    host_id = HistoryStore(db).ensure_host(run.host)
    row = {
        "uuid": run.key,
        "host_id": host_id,
        "name": run.name,
        "status": RunStatus.RUNNING.value,
        "engine": run.engine,
        "engine_version": run.engine_version,
        "target": run.target,
        "started_at": run.started_at,
        "finished_at": None,
        "spec": json_safe(run.spec),
        "context": json_safe(run.context),
        "tags": list(run.tags),
        "notes": "",
        "source": run.source,
        "baseline": False,
    }
    try:
        with _translated(db), db.engine.begin() as conn:
            inserted = conn.execute(insert(runs), row).inserted_primary_key
            assert inserted is not None
            return int(inserted[0])
    except sa_exc.IntegrityError:  # another process synced the same run meanwhile
        found = find_run(db, run.key)
        if found is None:
            raise
        return found


def sync_run(db: Database, store: HistoryStore, spooled: SpooledRun) -> tuple[int, int, bool]:
    """(history id, samples sent, whether the run is whole in the database now)."""
    run = spooled.run
    run_id = create_keyed_run(db, run)
    sent = store.add_samples(run_id, spooled.samples)  # a seq the database has is skipped
    if spooled.results:  # the recorder's latest word on them: the end's, or its finished phases'
        store.replace_results(run_id, [_result(v) for v in json.loads(spooled.results)])
    if spooled.status is None:
        if recorder_alive(run.context.get("recorder")):
            return run_id, sent, False  # still being recorded: its end comes later
        file_end(db, run_id, RunStatus.ABORTED, None)  # its recorder died with the run
        return run_id, sent, True
    ended = datetime.fromisoformat(spooled.finished_at) if spooled.finished_at else None
    file_end(db, run_id, RunStatus(spooled.status), ended)
    return run_id, sent, True


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
    with _translated(db), db.engine.begin() as conn:
        sample_table.lock_run(conn, run_id)
        conn.execute(stmt)
        sample_table.merge(conn, run_id)


def _result(fields: dict[str, Any]) -> ResultValue:
    return ResultValue(
        **fields | {"passes": tuple(fields["passes"]), "flags": tuple(fields["flags"])}
    )


@contextmanager
def _translated(db: Database) -> Iterator[None]:
    try:
        yield
    except sa_exc.IntegrityError:
        raise
    except sa_exc.DBAPIError as exc:
        raise DatabaseError(f"{db.location}: {one_line(str(exc.orig))}") from exc

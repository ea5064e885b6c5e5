"""Runs the history database could not take, kept on this computer until it can.

A team history lives on a PostgreSQL server, and a connection lost mid-run must not lose the
run. What the server refuses goes into a local SQLite file, one per database URL, under the
user's state folder; the next successful write, or the next start, syncs it to the server.
Every run carries its key (the history's `runs.uuid`) and every sample its sequence number,
so a sync repeated after a crash half-way stores nothing twice.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import exc as sa_exc
from sqlalchemy import insert, select, update

from stripewise.history.database import Database, display_url
from stripewise.history.errors import DatabaseError, one_line
from stripewise.history.hostinfo import HostInfo
from stripewise.history.location import spool_file
from stripewise.history.models import runs, utc_now
from stripewise.history.recorder_id import recorder_alive
from stripewise.history.store import HistoryStore, SampleRow, json_safe
from stripewise.model.run import ResultValue, RunStatus

WAIT_S = 30.0  # another process syncing the same spool holds it this long at most

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY, header TEXT NOT NULL, added REAL NOT NULL,
    status TEXT, finished_at TEXT, results TEXT);
CREATE TABLE IF NOT EXISTS samples (
    key TEXT NOT NULL, seq INTEGER NOT NULL, t_s REAL NOT NULL, phase TEXT NOT NULL,
    repetition INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (key, seq));
"""


def new_run_key() -> str:
    return str(uuid.uuid4())


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
class SyncOutcome:
    """What a sync moved to the server, and what is still waiting."""

    synced: dict[str, int] = field(default_factory=dict)  # run key -> history id
    samples_synced: int = 0
    runs_waiting: int = 0
    samples_waiting: int = 0
    error: str = ""  # why the rest is still waiting


def spool_path(url: str, folder: Path | None = None) -> Path:
    return spool_file(url, folder)


# --- the history side ------------------------------------------------------------------


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


@contextmanager
def _translated(db: Database) -> Iterator[None]:
    try:
        yield
    except sa_exc.IntegrityError:
        raise
    except sa_exc.DBAPIError as exc:
        raise DatabaseError(f"{db.location}: {one_line(str(exc.orig))}") from exc


# --- the local side --------------------------------------------------------------------


class Spool:
    """The local file for one database URL. Safe between processes (SQLite locking); each
    method opens and closes its own connection, so a Spool may be used from any thread."""

    def __init__(self, url: str, folder: Path | None = None) -> None:
        self.url = url
        self.path = spool_path(url, folder)

    def pending(self) -> tuple[int, int]:
        """(runs, samples) waiting; (0, 0) without reading anything when there is no file."""
        if not self.path.exists():
            return 0, 0
        with self._open() as conn:
            (run_count,) = conn.execute("SELECT count(*) FROM runs").fetchone()
            (sample_count,) = conn.execute("SELECT count(*) FROM samples").fetchone()
        return int(run_count), int(sample_count)

    def keep_run(self, run: KeyedRun) -> None:
        with self._open() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO runs (key, header, added) VALUES (?, ?, ?)",
                (run.key, run.to_json(), time.time()),
            )

    def keep_samples(self, key: str, rows: Sequence[SampleRow]) -> None:
        with self._open() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO samples VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (key, r.seq, r.t_s, r.phase, r.repetition, json.dumps(json_safe(r.data)))
                    for r in rows
                ],
            )

    def keep_end(
        self,
        key: str,
        results: Sequence[ResultValue],
        status: RunStatus,
        finished_at: datetime | None = None,
    ) -> None:
        ended = (finished_at or utc_now()).isoformat()
        values = json.dumps([json_safe(asdict(v)) for v in results])
        with self._open() as conn:
            conn.execute(
                "UPDATE runs SET status = ?, finished_at = ?, results = ? WHERE key = ?",
                (RunStatus(status).value, ended, values, key),
            )

    def forget(self, key: str) -> None:
        """A run the server now holds whole: drop the local copy."""
        with self._open() as conn:
            conn.execute("DELETE FROM samples WHERE key = ?", (key,))
            conn.execute("DELETE FROM runs WHERE key = ?", (key,))

    def sync(self, db: Database) -> SyncOutcome:
        """Everything waiting, to the server, oldest run first. Stops at the first refusal
        (the server is still away): what was synced is removed, the rest keeps waiting."""
        if not self.path.exists():
            return SyncOutcome()
        store = HistoryStore(db)
        synced: dict[str, int] = {}
        moved = 0
        error = ""
        with self._open(immediate=True) as conn:  # one syncing process at a time
            spooled = conn.execute(
                "SELECT key, header, status, finished_at, results FROM runs ORDER BY added"
            ).fetchall()
            for key, header, status, finished_at, results in spooled:
                try:
                    run_id, sent, done = _sync_run(
                        db, store, conn, KeyedRun.from_json(header), status, finished_at, results
                    )
                except DatabaseError as exc:
                    error = str(exc)
                    break
                synced[key] = run_id
                moved += sent
                conn.execute("DELETE FROM samples WHERE key = ?", (key,))
                if done:
                    conn.execute("DELETE FROM runs WHERE key = ?", (key,))
                conn.commit()
                conn.execute("BEGIN IMMEDIATE")
            (run_count,) = conn.execute("SELECT count(*) FROM runs").fetchone()
            (sample_count,) = conn.execute("SELECT count(*) FROM samples").fetchone()
        return SyncOutcome(synced, moved, int(run_count), int(sample_count), error)

    @contextmanager
    def _open(self, *, immediate: bool = False) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with closing(sqlite3.connect(self.path, timeout=WAIT_S, isolation_level=None)) as conn:
            conn.executescript(_SCHEMA)
            conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.rollback()
                raise
            conn.commit()


def _sync_run(
    db: Database,
    store: HistoryStore,
    conn: sqlite3.Connection,
    run: KeyedRun,
    status: str | None,
    finished_at: str | None,
    results: str | None,
) -> tuple[int, int, bool]:
    """(history id, samples sent, whether the run is whole on the server now). Each step
    checks what the server already has, so a repeat after a crash adds nothing twice."""
    run_id = create_keyed_run(db, run)
    rows = [
        SampleRow(seq, t_s, phase, repetition, json.loads(data))
        for seq, t_s, phase, repetition, data in conn.execute(
            "SELECT seq, t_s, phase, repetition, data FROM samples WHERE key = ? ORDER BY seq",
            (run.key,),
        )
    ]
    sent = store.add_samples(run_id, rows)  # a seq the server has is skipped
    if status is None:
        if recorder_alive(run.context.get("recorder")):
            return run_id, sent, False  # still being recorded: its end comes later
        _file_end(db, run_id, RunStatus.ABORTED, None)  # its recorder died with the run
        return run_id, sent, True
    if results and not store.get_run(run_id).results:
        store.add_results(run_id, [_result(v) for v in json.loads(results)])
    ended = datetime.fromisoformat(finished_at) if finished_at else None
    _file_end(db, run_id, RunStatus(status), ended)
    return run_id, sent, True


def _file_end(db: Database, run_id: int, status: RunStatus, ended: datetime | None) -> None:
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


def waiting_line(runs_waiting: int, samples_waiting: int, location: str) -> str:
    """The one line the GUI and the CLI show while something waits to be synced."""
    from stripewise.model.wording import count_noun

    return (
        f"{count_noun(samples_waiting, 'sample')} of {count_noun(runs_waiting, 'run')} "
        f"are kept on this computer, waiting to sync to {location}"
    )


def synced_line(outcome: SyncOutcome, location: str) -> str | None:
    """One line on what a sync did: what still waits, else what it moved, else nothing."""
    from stripewise.model.wording import count_noun

    if outcome.runs_waiting:
        return waiting_line(outcome.runs_waiting, outcome.samples_waiting, location)
    if outcome.synced:
        return (
            f"synced {count_noun(len(outcome.synced), 'run')} kept on this computer "
            f"({count_noun(outcome.samples_synced, 'sample')}) to {location}"
        )
    return None


def save_or_spool(
    url: str,
    run: KeyedRun,
    rows: Sequence[SampleRow],
    results: Sequence[ResultValue],
    status: RunStatus,
    finished_at: datetime,
) -> tuple[int | None, str | None]:
    """A whole run at once (the CLI's `bench --save`): (history id, None) when the database
    took it, else (None, the waiting line) with everything kept in the spool. A database that
    cannot be reached or refuses a write loses nothing; one that is damaged or too new still
    raises, as it would for any command."""
    from stripewise.history.database import DatabaseUnreachableError, open_database

    try:
        db = open_database(url)
    except DatabaseUnreachableError as exc:
        return None, _spool_whole(Spool(url), run, rows, results, status, finished_at, exc)
    try:
        store = HistoryStore(db)
        run_id = create_keyed_run(db, run)
        store.add_samples(run_id, rows)
        store.add_results(run_id, results)
        store.finish_run(run_id, status, finished_at=finished_at)
        return run_id, None
    except DatabaseError as exc:
        return None, _spool_whole(Spool(url), run, rows, results, status, finished_at, exc)
    finally:
        db.close()


def _spool_whole(
    spool: Spool,
    run: KeyedRun,
    rows: Sequence[SampleRow],
    results: Sequence[ResultValue],
    status: RunStatus,
    finished_at: datetime,
    exc: Exception,
) -> str:
    spool.keep_run(run)
    spool.keep_samples(run.key, rows)
    spool.keep_end(run.key, results, status, finished_at)
    runs_waiting, samples_waiting = spool.pending()
    where = display_url(spool.url)
    return f"{waiting_line(runs_waiting, samples_waiting, where)} ({one_line(str(exc))})"

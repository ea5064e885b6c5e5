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
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from stripewise.history.connection import Database
from stripewise.history.disk_room import ensure_ballast, is_full, release_ballast
from stripewise.history.errors import DatabaseError, one_line
from stripewise.history.group_runs import SpooledGroup
from stripewise.history.json_values import json_safe
from stripewise.history.keyed_runs import KeyedRun, file_end
from stripewise.history.location import spool_file
from stripewise.history.models import utc_now
from stripewise.history.recorder_id import recorder_alive
from stripewise.history.run_row import write_run
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.run import ResultValue, RunStatus

__all__ = ["Spool", "SpoolError", "SyncOutcome", "synced_line", "waiting_line"]

WAIT_S = 30.0  # another process syncing the same spool holds it this long at most

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY, header TEXT NOT NULL, added REAL NOT NULL,
    status TEXT, finished_at TEXT, results TEXT);
CREATE TABLE IF NOT EXISTS samples (
    key TEXT NOT NULL, seq INTEGER NOT NULL, t_s REAL NOT NULL, phase TEXT NOT NULL,
    repetition INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (key, seq));
CREATE TABLE IF NOT EXISTS group_runs (
    key TEXT PRIMARY KEY, body TEXT NOT NULL, samples INTEGER NOT NULL, added REAL NOT NULL);
"""


class SpoolError(Exception):
    """The spool itself could not keep a record (its disk is full, its folder unwritable)."""


@dataclass(frozen=True)
class SpooledRun:
    """One run as the spool holds it: its header, and what it knows of its end."""

    run: KeyedRun
    samples: list[SampleRow]
    status: str | None  # None: not ended (still recorded, or its recorder died)
    finished_at: str | None
    results: str | None  # JSON: the final results, or the finished phases' so far


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


# --- the local side --------------------------------------------------------------------


class Spool:
    """The local file for one database URL. Safe between processes (SQLite locking); each
    method opens and closes its own connection, so a Spool may be used from any thread.

    A full disk: the spool keeps a ballast file beside it (`disk_room`), made by `make_room`
    while there is room, and given up when a run's header or end finds none, so those two
    small records get in; samples that find no room are refused (SpoolError) and counted by
    the recorder. Every write is committed with SQLite's fsync before it returns."""

    def __init__(self, url: str, folder: Path | None = None) -> None:
        self.url = url
        self.path = spool_path(url, folder)
        self.ballast = self.path.with_name(self.path.name + ".room")

    def pending(self) -> tuple[int, int]:
        """(runs, samples) waiting; (0, 0) without reading anything when there is no file."""
        if not self.path.exists():
            return 0, 0
        with self._open() as conn:
            return _counts(conn)

    def make_room(self) -> bool:
        """The ballast, made now if missing: False when the disk has no room for it."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError:
            return False
        return ensure_ballast(self.ballast)

    def keep_run(self, run: KeyedRun) -> None:
        def keep(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR IGNORE INTO runs (key, header, added) VALUES (?, ?, ?)",
                (run.key, run.to_json(), time.time()),
            )

        self._write(keep, essential=True)

    def keep_samples(self, key: str, rows: Sequence[SampleRow]) -> None:
        def keep(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT OR IGNORE INTO samples VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (key, r.seq, r.t_s, r.phase, r.repetition, json.dumps(json_safe(r.data)))
                    for r in rows
                ],
            )

        self._write(keep, essential=False)

    def keep_results(self, key: str, results: Sequence[ResultValue]) -> None:
        """The finished phases' results of a run not ended yet: a sync files them with the
        run, `aborted` if its recorder died before the end."""
        values = json.dumps([json_safe(asdict(v)) for v in results])

        def keep(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE runs SET results = ? WHERE key = ? AND status IS NULL", (values, key)
            )

        self._write(keep, essential=True)

    def keep_end(
        self,
        key: str,
        results: Sequence[ResultValue],
        status: RunStatus,
        finished_at: datetime | None = None,
    ) -> None:
        ended = (finished_at or utc_now()).isoformat()
        values = json.dumps([json_safe(asdict(v)) for v in results])

        def keep(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE runs SET status = ?, finished_at = ?, results = ? WHERE key = ?",
                (RunStatus(status).value, ended, values, key),
            )

        self._write(keep, essential=True)

    def keep_group(self, group: SpooledGroup) -> None:
        """A group run whole, ended (its driver files it once, at its end)."""

        def keep(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR IGNORE INTO group_runs VALUES (?, ?, ?, ?)",
                (group.key, group.to_json(), len(group.samples), time.time()),
            )

        self._write(keep, essential=True)

    def forget(self, key: str) -> None:
        """A run the server now holds whole: drop the local copy."""

        def drop(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM samples WHERE key = ?", (key,))
            conn.execute("DELETE FROM runs WHERE key = ?", (key,))

        self._write(drop, essential=False)

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
                run = SpooledRun(
                    KeyedRun.from_json(header), _samples(conn, key), status, finished_at, results
                )
                try:
                    run_id, sent, done = sync_run(db, store, run)
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
            groups = [] if error else conn.execute(GROUPS_WAITING).fetchall()
            for key, body in groups:
                group = SpooledGroup.from_json(key, body)
                try:
                    synced[key] = group.store(db)
                except DatabaseError as exc:
                    error = str(exc)
                    break
                moved += len(group.samples)
                conn.execute("DELETE FROM group_runs WHERE key = ?", (key,))
                conn.commit()
                conn.execute("BEGIN IMMEDIATE")
            run_count, sample_count = _counts(conn)
        return SyncOutcome(synced, moved, run_count, sample_count, error)

    def _write(self, work: Callable[[sqlite3.Connection], None], *, essential: bool) -> None:
        """One committed transaction; an essential record that finds the disk full gets the
        ballast's room and one more try. Anything else that stops it is a SpoolError."""
        try:
            _spool_call(self.path, lambda: self._transact(work))
        except SpoolError as exc:
            if not (essential and isinstance(exc.__cause__, Exception) and is_full(exc.__cause__)):
                raise
            if not release_ballast(self.ballast):
                raise
            _spool_call(self.path, lambda: self._transact(work))

    def _transact(self, work: Callable[[sqlite3.Connection], None]) -> None:
        with self._open() as conn:
            work(conn)

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


_T = TypeVar("_T")


def _spool_call(path: Path, call: Callable[[], _T]) -> _T:
    try:
        return call()
    except (OSError, sqlite3.Error) as exc:
        reason = "its disk is full" if is_full(exc) else one_line(str(exc))
        raise SpoolError(f"cannot keep it on this computer ({path}): {reason}") from exc


def sync_run(db: Database, store: HistoryStore, spooled: SpooledRun) -> tuple[int, int, bool]:
    """(history id, samples sent, whether the run is whole in the database now)."""
    run = spooled.run
    run_id = write_run(db, run.host, run.row)
    sent = store.add_samples(run_id, spooled.samples)  # a seq the database has is skipped
    if spooled.results:  # the recorder's latest word on them: the end's, or its finished phases'
        store.replace_results(run_id, [_result(v) for v in json.loads(spooled.results)])
    if spooled.status is None:
        if recorder_alive(run.row.context.recorder):
            return run_id, sent, False  # still being recorded: its end comes later
        file_end(db, run_id, RunStatus.ABORTED, None)  # its recorder died with the run
        return run_id, sent, True
    ended = datetime.fromisoformat(spooled.finished_at) if spooled.finished_at else None
    file_end(db, run_id, RunStatus(spooled.status), ended)
    return run_id, sent, True


GROUPS_WAITING = "SELECT key, body FROM group_runs ORDER BY added"


def _counts(conn: sqlite3.Connection) -> tuple[int, int]:
    """(runs, samples) waiting: a group run counts once, with all its hosts' samples."""
    (runs,) = conn.execute("SELECT count(*) FROM runs").fetchone()
    (samples,) = conn.execute("SELECT count(*) FROM samples").fetchone()
    groups, group_samples = conn.execute(
        "SELECT count(*), coalesce(sum(samples), 0) FROM group_runs"
    ).fetchone()
    return int(runs) + int(groups), int(samples) + int(group_samples)


def _result(fields: dict[str, Any]) -> ResultValue:
    return ResultValue(
        **fields
        | {
            "passes": tuple(fields["passes"]),
            "flags": tuple(fields["flags"]),
            "errors": tuple(fields.get("errors", ())),  # a spool of an older version: none
        }
    )


def _samples(conn: sqlite3.Connection, key: str) -> list[SampleRow]:
    return [
        SampleRow(seq, t_s, phase, repetition, json.loads(data))
        for seq, t_s, phase, repetition, data in conn.execute(
            "SELECT seq, t_s, phase, repetition, data FROM samples WHERE key = ? ORDER BY seq",
            (key,),
        )
    ]


def waiting_line(runs_waiting: int, samples_waiting: int, location: str) -> str:
    """The one line the GUI and the CLI show while something waits to be synced."""
    from stripewise.model.wording import count_noun

    verb = "is" if samples_waiting == 1 else "are"  # the samples are the subject
    return (
        f"{count_noun(samples_waiting, 'sample')} of {count_noun(runs_waiting, 'run')} "
        f"{verb} kept on this computer, waiting to sync to {location}"
    )


def pending_line(url: str, location: str) -> str | None:
    """waiting_line for what waits for `url` (None when nothing does): said where the
    database cannot be opened, so nobody takes runs kept here for lost."""
    try:
        runs, samples = Spool(url).pending()
    except (OSError, sqlite3.Error) as exc:
        return f"runs kept on this computer for {location} cannot be read: {exc}"
    return waiting_line(runs, samples, location) if runs else None


def synced_line(outcome: SyncOutcome, location: str) -> str | None:
    """One line on what a sync did: what still waits (and why), else what it moved, else
    nothing."""
    from stripewise.model.wording import count_noun

    if outcome.runs_waiting:
        line = waiting_line(outcome.runs_waiting, outcome.samples_waiting, location)
        return f"{line} ({_short(outcome.error)})" if outcome.error else line
    if outcome.synced:
        return (
            f"synced {count_noun(len(outcome.synced), 'run')} kept on this computer "
            f"({count_noun(outcome.samples_synced, 'sample')}) to {location}"
        )
    return None


def _short(reason: str, limit: int = 160) -> str:
    return reason if len(reason) <= limit else reason[: limit - 1] + "…"

"""`history list` on a current SQLite history with the standard library alone.

Importing SQLAlchemy costs several hundred milliseconds on a small server, more than the whole
listing is allowed to take. When the file is a plain SQLite file at the current schema, it is
read here, read-only, with the same columns and row mapping as `HistoryStore.list_runs`; in
every other case (another backend, an older or newer schema, any error) the caller takes the
full path, which migrates and explains problems. So it does when the history must change
before it is listed: runs wait in the local spool (spool_peek), or a run of this machine is
still `running` though its recorder is gone (a killed `bench --save`, to be filed aborted).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from types import SimpleNamespace
from typing import Any

from stripewise.history import sqlitefile
from stripewise.history.errors import DatabaseError
from stripewise.history.location import plain_sqlite_path
from stripewise.history.recorder_id import recorder_alive
from stripewise.history.revisions import HEAD_REVISION
from stripewise.history.rows import PARTIAL_SQL, SUMMARY_FIELDS, as_utc, summary_from_row
from stripewise.history.spool_peek import spool_waiting
from stripewise.model.run import RunSummary
from stripewise.model.run_context import RunContext
from stripewise.system.hostinfo import current_machine_id

_COLUMNS = {
    "id": "runs.id",
    "name": "runs.name",
    "status": "runs.status",
    "hostname": "hosts.hostname",
    "target": "runs.target",
    "engine": "runs.engine",
    "engine_version": "runs.engine_version",
    "started_at": "runs.started_at",
    "finished_at": "runs.finished_at",
    "tags": "runs.tags",
    "notes": "runs.notes",
    "source": "runs.source",
    "baseline": "runs.baseline",
    "headline": "runs.headline",
    "partial": f"({PARTIAL_SQL})",
}
LIST_RUNS_SQL = (
    f"SELECT {', '.join(_COLUMNS[field] for field in SUMMARY_FIELDS)} "
    "FROM runs JOIN hosts ON runs.host_id = hosts.id "
    "WHERE runs.deleted_at IS NULL AND runs.parent_run_id IS NULL "  # a group run's hosts: no
    "ORDER BY runs.started_at DESC, runs.id DESC LIMIT ?"
)
# this machine's runs marked running: each names its recorder (history.recorder_id)
RUNNING_SQL = (
    "SELECT runs.context FROM runs JOIN hosts ON runs.host_id = hosts.id "
    "WHERE runs.status = 'running' AND hosts.machine_id = ?"
)


def _time(text: str | None) -> datetime | None:
    return None if text is None else as_utc(datetime.fromisoformat(text))


def _row(cursor: sqlite3.Cursor, values: tuple[Any, ...]) -> SimpleNamespace:
    row = SimpleNamespace(**dict(zip(SUMMARY_FIELDS, values, strict=True)))
    row.started_at = _time(row.started_at)
    row.finished_at = _time(row.finished_at)
    row.tags = json.loads(row.tags) if row.tags else ()
    row.headline = json.loads(row.headline) if row.headline else None
    return row


def list_runs(
    url: str, limit: int | None = None, *, as_is: bool = False
) -> list[RunSummary] | None:
    """Runs newest first, or None when this shortcut does not apply. `as_is`: even when the
    history should first be synced or have abandoned runs filed (the full path could not
    open it to do so)."""
    path = plain_sqlite_path(url)
    try:
        if path is None or not path.is_file() or (not as_is and spool_waiting(url)):
            return None
    except OSError:  # a folder this user may not search, a name too long: the full path says
        return None
    try:
        if sqlitefile.probe(path, url).revision != HEAD_REVISION:
            return None
        conn = sqlite3.connect(sqlitefile.read_uri(path), uri=True, timeout=5)
    except (DatabaseError, sqlite3.Error):
        return None
    try:
        if not as_is and _abandoned(conn):
            return None
        conn.row_factory = _row
        rows = conn.execute(LIST_RUNS_SQL, (-1 if limit is None else limit,)).fetchall()
        return [summary_from_row(row) for row in rows]
    except (sqlite3.Error, ValueError):
        return None
    finally:
        conn.close()


def _abandoned(conn: sqlite3.Connection) -> bool:
    return abandoned(conn.execute(RUNNING_SQL, (current_machine_id(),)).fetchall())


def abandoned(contexts: list[tuple[Any]]) -> bool:
    """A run of this machine is `running` with its recorder gone: the full path files it
    aborted (HistoryStore.mark_abandoned_runs_aborted) before listing. Contexts come as JSON
    text from SQLite, as dicts from psycopg."""
    for (context,) in contexts:
        found = json.loads(context) if isinstance(context, str) else context
        if not recorder_alive(RunContext.from_json(found).recorder):
            return True
    return False

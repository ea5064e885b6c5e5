"""Whether the local spool holds runs a reader must sync first, with the standard library alone.

`history list` reads SQLite and PostgreSQL histories without SQLAlchemy (quicklist,
quicklist_pg); it may only do so when nothing waits in the spool, else it would list the
database without the runs kept on this computer. A run being recorded right now keeps its
header in the spool (history.live_run) and is not waiting: its recorder writes it itself.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from stripewise.history.location import spool_file
from stripewise.history.recorder_id import recorder_alive
from stripewise.model.run_context import RunContext


def _has_group_runs(conn: sqlite3.Connection) -> bool:
    """A spool written before group runs were kept has no table for them."""
    if not conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'group_runs'"
    ).fetchone():
        return False
    return conn.execute("SELECT 1 FROM group_runs LIMIT 1").fetchone() is not None


def spool_waiting(url: str, folder: Path | None = None) -> bool:
    """True when a run in the spool has ended, holds samples or results, or lost its recorder,
    or a group run waits;
    also when the spool cannot be read (the full path then says why)."""
    path = spool_file(url, folder)
    if not path.exists():
        return False
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5)) as conn:
            if conn.execute("SELECT 1 FROM samples LIMIT 1").fetchone():
                return True
            if _has_group_runs(conn):  # a group run is kept whole, at its end
                return True
            rows = conn.execute("SELECT header, status, results FROM runs").fetchall()
        for header, status, results in rows:
            if status is not None or results is not None:
                return True
            context = RunContext.from_json(json.loads(header).get("context"))
            if not recorder_alive(context.recorder):
                return True
    except (sqlite3.Error, ValueError, AttributeError):
        return True
    return False

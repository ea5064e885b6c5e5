"""`history list` on a current PostgreSQL history with psycopg alone, without SQLAlchemy.

The PostgreSQL counterpart of `quicklist`: SQLAlchemy's import is a third of the command's
time on a 10,000-run team history. Only a `postgresql+psycopg://` URL whose database is at the
current schema is read here, with the same columns and row mapping as `HistoryStore.list_runs`;
in every other case (psycopg missing, an older or newer schema, runs waiting in the local spool,
a run of this machine left `running` by a recorder that is gone, any error) the caller takes
the full path, which migrates, syncs, files abandoned runs aborted and explains problems.
"""

from __future__ import annotations

import json
from collections import namedtuple
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from stripewise.history.quicklist import LIST_RUNS_SQL, RUNNING_SQL, abandoned
from stripewise.history.revisions import HEAD_REVISION
from stripewise.history.rows import SUMMARY_FIELDS, summary_from_row
from stripewise.history.spool_peek import spool_waiting
from stripewise.model.run import RunSummary
from stripewise.system.hostinfo import current_machine_id

SCHEME = "postgresql+psycopg"
CONNECT_TIMEOUT_S = 10  # as database.CONNECT_TIMEOUT_S
_SQL = LIST_RUNS_SQL.replace("LIMIT ?", "LIMIT %s")  # LIMIT NULL: every run
_RUNNING_SQL = RUNNING_SQL.replace("?", "%s")
_JSON_COLUMNS = tuple(SUMMARY_FIELDS.index(name) for name in ("tags", "headline"))


# attribute access over one result row, as `summary_from_row` reads it (a namedtuple: made
# from the row's tuple in C, where setting 14 attributes one by one took some 15 ms)
_Row = namedtuple("_Row", SUMMARY_FIELDS)  # type: ignore[misc]  # fields from a constant


def connection_args(url: str) -> dict[str, str | int] | None:
    """psycopg's keyword arguments for a SQLAlchemy `postgresql+psycopg://` URL, or None."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme != SCHEME:
        return None
    args: dict[str, str | int] = {
        "connect_timeout": CONNECT_TIMEOUT_S,
        "options": "-c timezone=UTC",  # times arrive in fixed UTC, as database.py asks
    }
    named = {
        "user": parts.username,
        "password": parts.password,
        "host": parts.hostname,
        "port": port,
        "dbname": parts.path.lstrip("/"),
    }
    args |= {key: unquote(str(value)) for key, value in named.items() if value}
    args |= dict(parse_qsl(parts.query))
    return args


def list_runs(url: str, limit: int | None = None) -> list[RunSummary] | None:
    """Runs newest first, or None when this shortcut does not apply."""
    args = connection_args(url)
    if args is None or spool_waiting(url):
        return None
    try:
        import psycopg
        from psycopg.conninfo import make_conninfo
    except ImportError:
        return None
    try:  # as psycopg.connect(**args) would, with the arguments' types kept
        with psycopg.connect(make_conninfo("", **args)) as conn:
            found = conn.execute("SELECT version_num FROM alembic_version").fetchall()
            if found != [(HEAD_REVISION,)]:
                return None
            if abandoned(conn.execute(_RUNNING_SQL, (current_machine_id(),)).fetchall()):
                return None  # the full path files them aborted first
            _json_as_text(conn)
            rows = conn.execute(_SQL, (limit,)).fetchall()
        return [summary_from_row(_Row._make(values)) for values in _with_json_read(rows)]
    except (psycopg.Error, ValueError, TypeError):
        return None


def _json_as_text(conn: Any) -> None:
    """JSON columns arrive as their text, read in one go by `_with_json_read`: psycopg's
    loader parses each cell on its own, 20,000 calls for 10,000 runs (some 45 ms)."""
    from psycopg.types.string import TextLoader

    for name in ("json", "jsonb"):
        conn.adapters.register_loader(name, TextLoader)


def _with_json_read(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The rows with their JSON columns' texts parsed, each column as one JSON array."""
    if not rows:
        return rows
    columns = [list(column) for column in zip(*rows, strict=True)]
    for index in _JSON_COLUMNS:
        texts = columns[index]
        columns[index] = json.loads("[" + ",".join(t or "null" for t in texts) + "]")
    return list(zip(*columns, strict=True))

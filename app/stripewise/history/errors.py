"""Errors of the history package, each with a message a user can act on.

Every message names the file or URL (passwords hidden) and fits on one line, so the CLI can
print it as is and the GUI can show it in a dialog next to the matching button.
"""

from __future__ import annotations

import re
from pathlib import Path

MOVE_ASIDE_HINT = "Move it aside and start fresh with `stripewise db move-aside`."


# Where a driver's message turns to the statement: psycopg's `LINE 1: DELETE ...` and caret,
# PostgreSQL's `QUERY:`, SQLAlchemy's `[SQL: ...]`, `[parameters: ...]` and its link.
_STATEMENT = re.compile(
    r"^(LINE \d+:|QUERY: |\[SQL: |\[parameters: |\(Background on this error)", re.M
)


def one_line(text: str) -> str:
    """Driver messages may span lines; a status bar or log line wants one. It ends before the
    statement the driver quotes: SQL says nothing a user can act on."""
    words = _STATEMENT.split(str(text), maxsplit=1)[0]
    return " ".join(words.split())


class DatabaseError(Exception):
    """Base class: anything that stops the history database from being used."""


class CorruptDatabaseError(DatabaseError):
    """The file exists but SQLite cannot read it; it is left exactly as it was."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = one_line(reason)
        super().__init__(
            f"{path} is not a readable SQLite database ({self.reason}); it was left untouched. "
            f"{MOVE_ASIDE_HINT}"
        )


class NewerSchemaError(DatabaseError):
    """A newer Stripewise migrated the database; this one must not write to it."""

    def __init__(self, location: str, revision: str, head: str) -> None:
        self.location = location
        self.revision = revision
        super().__init__(
            f"{location} has schema revision {revision!r}, newer than this Stripewise knows "
            f"(up to {head!r}); it was left untouched. Upgrade Stripewise or choose another "
            "database with --db or STRIPEWISE_DB."
        )


class DatabaseUnreachableError(DatabaseError):
    """Cannot connect: missing directory, permissions, server down or driver not installed."""

    def __init__(self, location: str, reason: str) -> None:
        self.location = location
        self.reason = one_line(reason)
        super().__init__(f"cannot open database {location}: {self.reason}")


class ForeignDatabaseError(DatabaseError):
    """The file holds tables but no Stripewise schema version: someone else's database."""

    def __init__(self, location: str, tables: list[str]) -> None:
        self.location = location
        self.tables = tables
        shown = ", ".join(tables[:5]) + (", …" if len(tables) > 5 else "")
        super().__init__(
            f"{location} is not a Stripewise history database (it has tables {shown} but no "
            "schema version); it was left untouched. Choose another database with --db or "
            "STRIPEWISE_DB."
        )


class MigrationError(DatabaseError):
    """Upgrading the schema failed; the message says where the pre-migration copy is."""

    def __init__(
        self, location: str, from_revision: str | None, reason: str, backup: Path | None
    ) -> None:
        self.location = location
        self.backup_path = backup
        where = f" A copy from before the attempt is at {backup}." if backup else ""
        super().__init__(
            f"upgrading {location} from schema {from_revision or 'empty'} failed: "
            f"{one_line(reason)}.{where}"
        )


class RunNotFoundError(DatabaseError):
    """Asked for a run id the database does not hold (deleted, or another database)."""

    def __init__(self, run_id: int, location: str) -> None:
        self.run_id = run_id
        super().__init__(f"run {run_id} is not in {location}; it may have been deleted")

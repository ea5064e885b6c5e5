"""The history file seen from outside SQLAlchemy: probe, back up, move aside.

These run before an engine exists, with the `sqlite3` module and read-only connections, so a
corrupt file or one from a newer Stripewise is recognised before anything could write to it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from stripewise.history.errors import (
    CorruptDatabaseError,
    DatabaseError,
    DatabaseUnreachableError,
)

SQLITE_MAGIC = b"SQLite format 3\x00"
SIBLING_SUFFIXES = ("-wal", "-shm", "-journal")
_CORRUPT_CODES = frozenset({"SQLITE_NOTADB", "SQLITE_CORRUPT"})


@dataclass(frozen=True)
class Probe:
    """What a read-only look at the file found: its schema revision and its own tables."""

    exists: bool
    revision: str | None
    tables: frozenset[str]

    @property
    def blank(self) -> bool:
        """No tables of anyone's: nothing to lose, so no backup is needed."""
        return not self.tables and self.revision is None


def utc_stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def read_only_uri(path: Path) -> str:
    return f"{path.absolute().as_uri()}?mode=ro"


def _has_pending_wal(path: Path) -> bool:
    wal = path.with_name(path.name + "-wal")
    try:
        return wal.stat().st_size > 0
    except OSError:
        return False


def read_uri(path: Path) -> str:
    """Read-only, and `immutable` when no WAL is pending.

    A read-only connection to a WAL database still creates -wal and -shm files; `immutable`
    avoids them, which is safe when every committed page is in the main file.
    """
    uri = read_only_uri(path)
    return uri if _has_pending_wal(path) else f"{uri}&immutable=1"


def probe(path: Path, location: str) -> Probe:
    """Read the schema revision without writing; raise if the file is unreadable.

    `location` names the database in "cannot open" messages (its URL); damage names the path.
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return Probe(exists=False, revision=None, tables=frozenset())
    except OSError as exc:
        raise DatabaseUnreachableError(location, exc.strerror or str(exc)) from exc
    if size == 0:  # SQLite treats an empty file as an empty database
        return Probe(exists=True, revision=None, tables=frozenset())
    _check_header(path, size, location)
    try:
        conn = sqlite3.connect(read_uri(path), uri=True, timeout=5)
    except sqlite3.Error as exc:
        raise classify(exc, path, location) from exc
    try:
        try:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
            return Probe(exists=True, revision=row[0] if row else None, tables=frozenset())
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
        names = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        tables = frozenset(n for (n,) in names if not n.startswith("sqlite_"))
        return Probe(exists=True, revision=None, tables=tables)
    except sqlite3.Error as exc:
        raise classify(exc, path, location) from exc
    except UnicodeDecodeError as exc:  # SQLite's own message names a schema entry in bytes
        raise CorruptDatabaseError(path, _undecodable(exc)) from None
    finally:
        conn.close()


def _undecodable(exc: UnicodeDecodeError) -> str:
    """SQLite's message quoted a name that is not UTF-8 (a damaged schema): said in words,
    the bytes it could not decode escaped."""
    said = exc.object.decode("utf-8", "backslashreplace") if isinstance(exc.object, bytes) else ""
    return said or "the schema holds a name that is not UTF-8"


def quick_check(path: Path, location: str) -> None:
    """Full structural check, paid only before a migration rewrites the file."""
    try:
        conn = sqlite3.connect(read_only_uri(path), uri=True, timeout=5)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check(5)").fetchall()]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise classify(exc, path, location) from exc
    except UnicodeDecodeError as exc:
        raise CorruptDatabaseError(path, _undecodable(exc)) from None
    if rows != ["ok"]:
        raise CorruptDatabaseError(path, "; ".join(rows))


def classify(exc: sqlite3.Error, path: Path, location: str) -> DatabaseError:
    """Tell a damaged file (offer to move it aside) from one we merely cannot reach."""
    text = str(exc)
    code = getattr(exc, "sqlite_errorname", "")
    if code in _CORRUPT_CODES or "not a database" in text or "malformed" in text:
        return CorruptDatabaseError(path, text)
    return DatabaseUnreachableError(location, text)


def _check_header(path: Path, size: int, location: str) -> None:
    """Catch foreign and truncated files from the 100-byte header alone (cheap at start-up)."""
    try:
        with path.open("rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        raise DatabaseUnreachableError(location, exc.strerror or str(exc)) from exc
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        raise CorruptDatabaseError(path, "file is not a database")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # The page count is only trustworthy when the change counter matches "version valid for".
    valid = pages > 0 and header[24:28] == header[92:96]
    if valid and not _has_pending_wal(path) and size < pages * page_size:
        raise CorruptDatabaseError(
            path, f"file is truncated: {size} bytes where its header records {pages * page_size}"
        )


def _unused(make: Callable[[str], Path]) -> Path:
    candidate = make("")
    n = 1
    while candidate.exists() or any(
        candidate.with_name(candidate.name + s).exists() for s in SIBLING_SUFFIXES
    ):
        candidate = make(f"-{n}")
        n += 1
    return candidate


def backup(path: Path, from_revision: str | None) -> Path:
    """Copy the live file with SQLite's backup API (consistent even with a WAL pending)."""
    stamp = utc_stamp()
    label = from_revision or "empty"
    target = _unused(lambda n: path.with_name(f"{path.stem}.backup-{label}-{stamp}{n}.db"))
    try:
        src = sqlite3.connect(read_only_uri(path), uri=True, timeout=5)
        try:
            dst = sqlite3.connect(target)
            try:
                src.backup(dst)
                # A self-contained single file: no -wal to lose when it is copied around.
                dst.execute("PRAGMA journal_mode = DELETE")
            finally:
                dst.close()
        finally:
            src.close()
    except (sqlite3.Error, OSError) as exc:
        raise DatabaseError(
            f"could not back up {path} to {target} before upgrading it: {exc}; "
            "nothing was changed. Free some space or fix the folder's permissions."
        ) from exc
    return target


def move_aside(path: Path) -> Path:
    """Rename a damaged file and its -wal/-shm/-journal companions; never delete anything."""
    path = Path(path)
    if not path.exists():
        raise DatabaseError(f"cannot move {path} aside: there is no such file")
    stamp = utc_stamp()
    target = _unused(lambda n: path.with_name(f"{path.name}.corrupt-{stamp}{n}"))
    try:
        os.rename(path, target)
        for suffix in SIBLING_SUFFIXES:
            sibling = path.with_name(path.name + suffix)
            if sibling.exists():
                # Keep SQLite's naming so the moved file still finds its WAL if opened later.
                os.rename(sibling, target.with_name(target.name + suffix))
    except OSError as exc:
        raise DatabaseError(
            f"cannot move {path} aside to {target}: {exc.strerror or exc}; "
            "check the folder's permissions"
        ) from exc
    return target

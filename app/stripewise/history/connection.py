"""An open history database: its engine and how messages name it.

Apart from `database` (which opens and migrates): the modules that read and write runs take an
open `Database` and need nothing of the opening, so they never import it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, Engine, make_url

from stripewise.history.errors import CorruptDatabaseError, DatabaseError, one_line
from stripewise.history.location import masked_url
from stripewise.history.revisions import HEAD_REVISION

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker


class Database:
    """An open history database. `close()` releases its connections."""

    def __init__(
        self,
        url: URL,
        engine: Engine,
        schema_revision: str | None,
        sqlite_path: Path | None,
        backup_path: Path | None,
    ) -> None:
        self.url = url.render_as_string(hide_password=False)
        self.display_url = display_url(url)
        self.engine = engine
        self.schema_revision = schema_revision
        self.sqlite_path = sqlite_path
        self.backup_path = backup_path
        # what the local spool held at opening: synced, or still waiting (None: nothing)
        self.spool_note: str | None = None
        self._sessions: sessionmaker[Session] | None = None

    @property
    def location(self) -> str:
        """How messages name this database: the file path, or the URL without password."""
        return str(self.sqlite_path) if self.sqlite_path else self.display_url

    @property
    def needs_migration(self) -> bool:
        """True only when opened with `migrate=False` on an older schema."""
        return self.schema_revision != HEAD_REVISION

    def session(self) -> Session:
        """An ORM session; use as `with db.session() as s:`. The ORM loads on first use."""
        if self._sessions is None:
            from sqlalchemy.orm import sessionmaker

            self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        return self._sessions()

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Database:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Database({self.display_url!r}, revision={self.schema_revision!r})"


def display_url(url: URL | str) -> str:
    """The URL for messages: each password replaced by `***` (in the user part and in the
    query), even if the URL does not parse."""
    if isinstance(url, URL):
        return masked_url(url.render_as_string(hide_password=True))
    try:
        return masked_url(make_url(url).render_as_string(hide_password=True))
    except (sa_exc.ArgumentError, ValueError):
        return masked_url(url)


@contextmanager
def driver_errors(db: Database) -> Iterator[None]:
    """Driver errors become DatabaseError naming the database (CorruptDatabaseError for a
    damaged SQLite file); integrity errors pass through for the caller to judge."""
    try:
        yield
    except sa_exc.IntegrityError:
        raise
    except sa_exc.DBAPIError as exc:
        message = str(exc.orig)
        path = db.sqlite_path
        if path is not None and ("malformed" in message or "not a database" in message):
            raise CorruptDatabaseError(path, message) from exc
        raise DatabaseError(f"{db.location}: {one_line(message)}") from exc

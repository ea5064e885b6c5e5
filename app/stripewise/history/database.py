"""Opening the history database: where it lives, and bringing its schema up to date safely.

Start-up cost matters (the GUI opens the database before its first window), so a current
schema is recognised with one plain query and Alembic is imported only when a migration is
due. SQLite files are probed read-only first, so a corrupt file or one from a newer
Stripewise is reported before anything writes to it, and they are backed up before migrating.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import create_engine, event, text
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.pool import NullPool, StaticPool

from stripewise.history import sqlitefile
from stripewise.history.connection import Database, display_url
from stripewise.history.disk_room import wal_index_room
from stripewise.history.errors import (
    CorruptDatabaseError,
    DatabaseError,
    DatabaseUnreachableError,
    ForeignDatabaseError,
    MigrationError,
    NewerSchemaError,
    RunNotFoundError,
    one_line,
)
from stripewise.history.location import (
    ENV_VAR,
    default_database_url,
    path_to_url,
    resolve_database_url,
)
from stripewise.history.revisions import HEAD_REVISION, KNOWN_REVISIONS
from stripewise.history.spool_peek import spool_waiting
from stripewise.history.sqlitefile import move_aside

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = [
    "ENV_VAR",
    "HEAD_REVISION",
    "KNOWN_REVISIONS",
    "CorruptDatabaseError",
    "Database",
    "DatabaseError",
    "DatabaseUnreachableError",
    "ForeignDatabaseError",
    "MigrationError",
    "NewerSchemaError",
    "RunNotFoundError",
    "alembic_config",
    "default_database_url",
    "display_url",
    "move_aside",
    "open_database",
    "path_to_url",
    "resolve_database_url",
    "sqlite_path_of",
    "sync_spool",
]

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
BUSY_TIMEOUT_MS = 5000
# Serialises schema upgrades of one PostgreSQL database between instances: a fixed key
# ("Stripewi" in ASCII) in pg_advisory_lock's single bigint space.
MIGRATION_LOCK_KEY = 0x5374726970657769
CONNECT_TIMEOUT_S = 10
MIGRATION_WAIT_S = 600  # a large history's upgrade may take minutes; then say so, never hang


def alembic_config(url: str | None = None, connection: Connection | None = None) -> Config:
    """Alembic configured from code: the scripts ship inside the package, no alembic.ini."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def open_database(url: str, *, migrate: bool = True) -> Database:
    """Open (creating if needed) and, unless `migrate=False`, upgrade the schema to head."""
    if "://" not in url:
        url = path_to_url(url)
    try:
        parsed = make_url(url)
    except (sa_exc.ArgumentError, ValueError) as exc:
        raise DatabaseUnreachableError(display_url(url), f"not a database URL ({exc})") from exc
    db: Database | None = None
    if parsed.get_backend_name() == "sqlite":
        path = _sqlite_file(parsed)
        if path is not None:
            db = _open_sqlite_file(parsed, path, migrate)
    if db is None:
        db = _open_with_engine(parsed, migrate)
    if migrate:
        db.spool_note = sync_spool(db)
    return db


def sync_spool(db: Database) -> str | None:
    """Runs kept on this computer while the database refused them go to it now; a stat and
    a read-only look when there are none. A failure leaves them waiting and is said, never
    raised."""
    if not spool_waiting(db.url):
        return None
    from stripewise.history.spool import Spool, synced_line  # the ORM-free path ends here

    try:
        return synced_line(Spool(db.url).sync(db), db.location)
    except (DatabaseError, OSError, sqlite3.Error) as exc:
        return f"runs kept on this computer could not be synced to {db.location}: {exc}"


def sqlite_path_of(url: str) -> Path | None:
    """The file behind a SQLite URL (or plain path); None for other databases or bad URLs."""
    if "://" not in url:
        url = path_to_url(url)
    try:
        parsed = make_url(url)
    except (sa_exc.ArgumentError, ValueError):
        return None
    return _sqlite_file(parsed) if parsed.get_backend_name() == "sqlite" else None


def _sqlite_file(url: URL) -> Path | None:
    database = url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database).absolute()


def _check_known(revision: str | None, location: str) -> None:
    if revision is not None and revision not in KNOWN_REVISIONS:
        raise NewerSchemaError(location, revision, HEAD_REVISION)


def _open_sqlite_file(url: URL, path: Path, migrate: bool) -> Database:
    location = str(path)  # names the file in messages about its content
    where = display_url(url)  # names the URL in "cannot open" messages
    found = sqlitefile.probe(path, where)
    if not found.exists and not path.parent.is_dir():  # else SQLite's "unable to open"
        raise DatabaseUnreachableError(where, f"its folder {path.parent} does not exist")
    _check_known(found.revision, location)
    if found.revision is None and found.tables:
        raise ForeignDatabaseError(location, sorted(found.tables))
    revision = found.revision
    backup: Path | None = None
    if migrate and revision != HEAD_REVISION:
        if not found.blank:
            sqlitefile.quick_check(path, where)
            backup = sqlitefile.backup(path, revision)
        # Foreign keys off while migrating: SQLite batch operations recreate tables, and
        # dropping a parent table with enforcement on would cascade-delete child rows.
        migrator = _sqlite_engine(url, foreign_keys=False, atomic=True)
        try:
            _connect_check(migrator, where)
            _upgrade(migrator, location, revision, backup)
        finally:
            migrator.dispose()
        revision = HEAD_REVISION
    engine = _sqlite_engine(url, foreign_keys=True)
    _connect_check(engine, where)
    return Database(url, engine, revision, path, backup)


def compact_json(value: Any) -> str:
    """JSON columns without the spaces after , and : that json.dumps adds by default: samples
    repeat their key names, and those spaces were 7 % of a sample's bytes."""
    return json.dumps(value, separators=(",", ":"))


def _sqlite_engine(url: URL, *, foreign_keys: bool, atomic: bool = False) -> Engine:
    """Engine whose every connection has WAL, a busy timeout and foreign keys set.

    `atomic` makes DDL transactional: the sqlite3 module would otherwise commit before each
    CREATE/ALTER, and a migration failing half-way would leave a half-built schema.
    """
    path = _sqlite_file(url)
    try:
        if path is None:  # in memory (or a file: URI): one connection shared
            engine = create_engine(
                url,
                poolclass=StaticPool,
                connect_args={"check_same_thread": False},
                json_serializer=compact_json,
            )
        elif atomic:
            engine = create_engine(url, poolclass=NullPool, json_serializer=compact_json)
        else:
            engine = create_engine(url, json_serializer=compact_json)
    except (sa_exc.ArgumentError, TypeError, ValueError) as exc:  # ?timeout=abc
        raise DatabaseUnreachableError(display_url(url), f"invalid URL ({exc})") from None

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        if atomic:
            dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            # the migrator waits as long as another instance's upgrade may take
            wait_ms = MIGRATION_WAIT_S * 1000 if atomic else BUSY_TIMEOUT_MS
            cursor.execute(f"PRAGMA busy_timeout = {wait_ms}")
            if path is None:
                cursor.execute("PRAGMA journal_mode = WAL")
            else:  # its shared memory with every block allocated: no SIGBUS (disk_room)
                with wal_index_room(path):
                    cursor.execute("PRAGMA journal_mode = WAL").fetchall()
                    cursor.execute("SELECT count(*) FROM sqlite_master").fetchall()  # maps it
            cursor.execute(f"PRAGMA foreign_keys = {'ON' if foreign_keys else 'OFF'}")
        finally:
            cursor.close()

    if atomic:

        @event.listens_for(engine, "begin")
        def _on_begin(connection: Connection) -> None:
            # IMMEDIATE: a second instance migrating at the same time waits, then finds head.
            connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _connect_check(engine: Engine, location: str) -> None:
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
    except sa_exc.DBAPIError as exc:
        engine.dispose()
        raise DatabaseUnreachableError(location, _driver_message(exc, engine.url)) from None


def _driver_message(exc: sa_exc.DBAPIError, url: URL) -> str:
    message = str(exc.orig) if exc.orig is not None else str(exc)
    secrets = [url.password, url.query.get("password"), url.query.get("sslpassword")]
    for secret in secrets:
        for value in secret if isinstance(secret, tuple) else (secret,):
            if value:
                message = message.replace(str(value), "***")
    return one_line(message)


def _upgrade(engine: Engine, location: str, revision: str | None, backup: Path | None) -> None:
    """Run Alembic to head in one transaction; Alembic is imported only here."""
    from alembic import command

    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(connection=conn), "head")
    except DatabaseError:
        raise
    except Exception as exc:
        reason = _driver_message(exc, engine.url) if isinstance(exc, sa_exc.DBAPIError) else exc
        raise MigrationError(location, revision, str(reason), backup) from exc


def _open_with_engine(url: URL, migrate: bool) -> Database:
    """Servers (PostgreSQL) and in-memory SQLite: no file to probe or back up."""
    location = display_url(url)
    if url.get_backend_name() == "sqlite":
        engine = _sqlite_engine(url, foreign_keys=True)
    else:
        engine = _server_engine(url, location)
    try:
        with engine.connect() as conn:
            revision = _read_revision(conn)
    except sa_exc.DBAPIError as exc:
        engine.dispose()
        raise DatabaseUnreachableError(location, _driver_message(exc, url)) from None
    try:
        _check_known(revision, location)
        if migrate and revision != HEAD_REVISION:
            revision = _upgrade_locked(engine, location, revision)
    except DatabaseError:
        engine.dispose()
        raise
    return Database(url, engine, revision, None, None)


def _upgrade_locked(engine: Engine, location: str, seen: str | None) -> str:
    """Upgrade under the migration lock; returns the revision now in force.

    Several instances may open an empty or older shared database at once: without the lock
    each would run the migrations, and the second dies on a half-created table. The lock is a
    PostgreSQL advisory lock held by a connection of its own, so it is released even if this
    process dies; whoever waited finds the schema current and has nothing to do.
    """
    if engine.dialect.name != "postgresql":
        with engine.connect() as conn:
            found = _read_revision(conn)
        _check_known(found, location)
        if found != HEAD_REVISION:
            _upgrade(engine, location, found, None)
        return HEAD_REVISION
    try:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as lock:
            lock.exec_driver_sql(f"SET lock_timeout = '{MIGRATION_WAIT_S}s'")
            lock.exec_driver_sql(f"SELECT pg_advisory_lock({MIGRATION_LOCK_KEY})")
            try:
                with engine.connect() as conn:  # a fresh look, after whoever held the lock
                    found = _read_revision(conn)
                _check_known(found, location)
                if found != HEAD_REVISION:
                    # PostgreSQL DDL is transactional: a failed upgrade changes nothing.
                    _upgrade(engine, location, found, None)
            finally:
                lock.exec_driver_sql(f"SELECT pg_advisory_unlock({MIGRATION_LOCK_KEY})")
    except sa_exc.DBAPIError as exc:
        reason = _driver_message(exc, engine.url)
        if "lock timeout" in reason:
            reason = (
                f"another Stripewise has been upgrading it for over {MIGRATION_WAIT_S} s; "
                "try again once it is done"
            )
        raise MigrationError(location, seen, reason, None) from None
    return HEAD_REVISION


def _server_engine(url: URL, location: str) -> Engine:
    try:
        return create_engine(
            url, pool_pre_ping=True, json_serializer=compact_json, connect_args=_libpq_args(url)
        )
    except sa_exc.NoSuchModuleError:
        raise DatabaseUnreachableError(
            location, f"unknown database type {url.drivername!r}; use sqlite or postgresql"
        ) from None
    except ImportError as exc:
        raise DatabaseUnreachableError(
            location, f"its driver is not installed ({exc}); install it or use a SQLite file"
        ) from None
    except (sa_exc.ArgumentError, TypeError, ValueError) as exc:
        raise DatabaseUnreachableError(location, f"invalid URL ({exc})") from None


def _libpq_args(url: URL) -> dict[str, str | int]:
    """For PostgreSQL through libpq, unless the URL says otherwise: a server that does not
    answer is said within seconds, not after TCP's minutes; and the session speaks UTC, so
    times arrive with the fixed UTC zone rather than the server's named one, which costs a
    zone conversion per time when a listing of 10,000 runs is read (a third of its time)."""
    if url.get_backend_name() != "postgresql" or url.get_driver_name() not in (
        "psycopg",
        "psycopg2",
    ):
        return {}
    args: dict[str, str | int] = {}
    if "connect_timeout" not in url.query:
        args["connect_timeout"] = CONNECT_TIMEOUT_S
    if "options" not in url.query:
        args["options"] = "-c timezone=UTC"
    return args


def _read_revision(conn: Connection) -> str | None:
    if not conn.dialect.has_table(conn, "alembic_version"):
        return None
    row = conn.execute(text("SELECT version_num FROM alembic_version")).first()
    return None if row is None else str(row[0])

"""Databases that cannot be used: each refused with a one-line message, the file untouched."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from stripewise.history.database import (
    CorruptDatabaseError,
    DatabaseError,
    DatabaseUnreachableError,
    ForeignDatabaseError,
    NewerSchemaError,
    move_aside,
    open_database,
    path_to_url,
)
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.system.hostinfo import HostInfo

FileState = Callable[[Path], tuple[bytes, int]]


def _siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


def _filled_database(path: Path) -> None:
    """A real history with enough rows to span many pages, closed cleanly (no -wal left)."""
    with open_database(path_to_url(path)) as db:
        store = HistoryStore(db)
        host = store.ensure_host(HostInfo(hostname="h", machine_id="m"))
        for n in range(5):
            run = store.create_run(
                host,
                name=f"run {n}",
                target="/dev/loop0",
                engine="builtin",
                engine_version="1",
                options={"n": n},
            )
            rows = [SampleRow(i, i / 2, "read", 0, {"MBps": float(i)}) for i in range(300)]
            store.add_samples(run, rows)
    assert not path.with_name(path.name + "-wal").exists()


@pytest.mark.parametrize(
    "content",
    [os.urandom(8192), b"SQLite format 3\x00" + os.urandom(4080), b"hello\n"],
    ids=["random", "magic-then-garbage", "text"],
)
def test_unreadable_file_is_reported_and_left_alone(
    db_path: Path, content: bytes, file_state: FileState
) -> None:
    db_path.write_bytes(content)
    before, files = file_state(db_path), _siblings(db_path)

    with pytest.raises(CorruptDatabaseError) as caught:
        open_database(path_to_url(db_path))

    message = str(caught.value)
    assert str(db_path) in message
    assert "stripewise db move-aside" in message
    assert "\n" not in message
    assert caught.value.path == db_path
    assert file_state(db_path) == before
    assert _siblings(db_path) == files  # no -wal, -shm or backup appeared


@pytest.mark.parametrize("keep", ["first-page", "half", "all-but-one-byte"])
def test_truncated_database_is_reported_and_left_alone(
    db_path: Path, keep: str, file_state: FileState
) -> None:
    _filled_database(db_path)
    size = db_path.stat().st_size
    assert size > 16 * 4096
    new_size = {"first-page": 4096, "half": size // 2, "all-but-one-byte": size - 1}[keep]
    with db_path.open("r+b") as fh:
        fh.truncate(new_size)
    before = file_state(db_path)

    with pytest.raises(CorruptDatabaseError) as caught:
        open_database(path_to_url(db_path))

    assert str(db_path) in str(caught.value)
    assert "truncated" in str(caught.value)
    assert file_state(db_path) == before


def test_newer_schema_is_refused_and_file_untouched(db_path: Path, file_state: FileState) -> None:
    _filled_database(db_path)
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    conn.close()
    before, files = file_state(db_path), _siblings(db_path)

    with pytest.raises(NewerSchemaError) as caught:
        open_database(path_to_url(db_path))

    message = str(caught.value)
    assert "'9999'" in message and str(db_path) in message and "\n" not in message
    assert file_state(db_path) == before
    assert _siblings(db_path) == files


def test_someone_elses_sqlite_file_is_refused(db_path: Path, file_state: FileState) -> None:
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("CREATE TABLE contacts (name TEXT)")
        conn.execute("INSERT INTO contacts VALUES ('Ada')")
    conn.close()
    before = file_state(db_path)

    with pytest.raises(ForeignDatabaseError, match="contacts"):
        open_database(path_to_url(db_path))

    assert file_state(db_path) == before


def test_sqlite_in_missing_directory_gives_one_line_message() -> None:
    url = "sqlite:////nonexistent-stripewise-dir/x.db"
    with pytest.raises(DatabaseUnreachableError) as caught:
        open_database(url)
    # the folder named, not SQLite's "unable to open database file"
    assert str(caught.value) == (
        f"cannot open database {url}: its folder /nonexistent-stripewise-dir does not exist"
    )
    assert not Path("/nonexistent-stripewise-dir").exists()


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://alice:hunter2-secret@127.0.0.1:1/stripewise",
        "postgresql+psycopg://alice:hunter2-secret@127.0.0.1:1/stripewise",
        "nosuchdb://alice:hunter2-secret@127.0.0.1:1/stripewise",
    ],
)
def test_server_url_errors_are_one_line_and_hide_the_password(url: str) -> None:
    # Whether the driver is missing or the server refuses, the message must not leak.
    with pytest.raises(DatabaseUnreachableError) as caught:
        open_database(url)
    message = str(caught.value)
    assert message.startswith("cannot open database ")
    assert "alice:***@127.0.0.1:1/stripewise" in message
    assert "hunter2-secret" not in message
    assert "\n" not in message


def test_move_aside_renames_file_and_companions_and_deletes_nothing(db_path: Path) -> None:
    db_path.write_bytes(b"damaged main file")
    db_path.with_name("history.db-wal").write_bytes(b"wal frames")
    db_path.with_name("history.db-shm").write_bytes(b"shm")

    moved = move_aside(db_path)

    assert moved.parent == db_path.parent
    assert moved.name.startswith("history.db.corrupt-")
    assert moved.read_bytes() == b"damaged main file"
    assert moved.with_name(moved.name + "-wal").read_bytes() == b"wal frames"
    assert moved.with_name(moved.name + "-shm").read_bytes() == b"shm"
    assert not db_path.exists()
    assert not db_path.with_name("history.db-wal").exists()

    # A second damaged file moved within the same second must not replace the first.
    db_path.write_bytes(b"second")
    moved_again = move_aside(db_path)
    assert moved_again != moved
    assert moved.read_bytes() == b"damaged main file"
    assert moved_again.read_bytes() == b"second"

    # Afterwards the usual path opens as a fresh database.
    with open_database(path_to_url(db_path)) as db:
        assert HistoryStore(db).count_runs() == 0


def test_move_aside_of_missing_file_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "gone.db"
    with pytest.raises(DatabaseError) as caught:
        move_aside(missing)
    assert str(missing) in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_a_driver_message_is_one_line_without_the_statement_it_quotes() -> None:
    from stripewise.history.errors import one_line

    hint = "port 9 failed: Connection refused\n\tIs the server running on that host?"
    assert one_line(hint) == "port 9 failed: Connection refused Is the server running on that host?"
    for quoted in (
        'column "x" does not exist\nLINE 1: SELECT x FROM runs\n               ^',
        'column "x" does not exist\n[SQL: SELECT x FROM runs]\n[parameters: (1,)]',
    ):
        assert one_line(quoted) == 'column "x" does not exist'

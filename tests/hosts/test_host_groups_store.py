"""Host groups in the history database: the model's rules and the store, on SQLite and on a
real PostgreSQL server (migration 0009 on both)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from stripewise.history import host_groups as store
from stripewise.history.database import Database, open_database, path_to_url
from stripewise.history.models import host_group_hosts
from stripewise.model.host_address import HostAddress, parse_host
from stripewise.model.host_group import HostGroup, check_group_name, unique_hosts

FIO_A = parse_host("127.0.0.1:8765")
FIO_B = parse_host("[::1]:9000")
SSH_ROOT = parse_host("ssh://root@node-3:2222")
SSH_PLAIN = parse_host("ssh://node-4")


@pytest.fixture
def url(history_url: str) -> str:
    return history_url


@pytest.fixture
def db(history_db: Database) -> Database:
    return history_db


@pytest.mark.parametrize("name", ["site-a", "rack_12", "a", "x" * 64, "v1.2", "  padded  "])
def test_group_names_that_are_kept(name: str) -> None:
    assert check_group_name(name) == name.strip()


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("x" * 65, "longer than 64"),
        ("two words", "letters, digits"),
        ("café", "letters, digits"),
        ("a/b", "letters, digits"),
        ("-rf", "must not start with '-'"),
        ("a\nb", "letters, digits"),
    ],
)
def test_group_names_refused_in_one_line(name: str, says: str) -> None:
    with pytest.raises(ValueError, match=says) as caught:
        check_group_name(name)
    assert "\n" not in str(caught.value)


def test_unique_hosts_keeps_first_order() -> None:
    assert unique_hosts([FIO_B, FIO_A, FIO_B, SSH_ROOT, FIO_A]) == (FIO_B, FIO_A, SSH_ROOT)


def test_save_list_get_keep_hosts_in_order_with_every_part(db: Database) -> None:
    store.save_group(db, HostGroup("site-b", (SSH_ROOT, FIO_B, FIO_A, SSH_PLAIN, FIO_B)))
    store.save_group(db, HostGroup("site-a", (FIO_A,)))
    groups = store.list_groups(db)
    assert [g.name for g in groups] == ["site-a", "site-b"]
    site_b = store.get_group(db, "site-b")
    assert site_b == HostGroup("site-b", (SSH_ROOT, FIO_B, FIO_A, SSH_PLAIN))
    assert site_b.hosts[0] == HostAddress("ssh", "node-3", 2222, "root")
    assert site_b.hosts[3].user is None and site_b.hosts[3].port == 22
    assert store.get_group(db, "nowhere") is None


def test_save_replaces_a_group(db: Database) -> None:
    store.save_group(db, HostGroup("g", (FIO_A, FIO_B)))
    store.save_group(db, HostGroup("g", (SSH_PLAIN,)))
    assert store.list_groups(db) == [HostGroup("g", (SSH_PLAIN,))]


def test_add_hosts_creates_then_appends_without_repeats(db: Database) -> None:
    assert store.add_hosts(db, "g", [FIO_A, SSH_ROOT]) == HostGroup("g", (FIO_A, SSH_ROOT))
    again = store.add_hosts(db, "g", [SSH_ROOT, FIO_B, FIO_B])
    assert again == HostGroup("g", (FIO_A, SSH_ROOT, FIO_B))
    assert store.get_group(db, "g") == again


def test_remove_hosts_keeps_the_rest_in_order_and_the_group(db: Database) -> None:
    store.add_hosts(db, "g", [FIO_A, SSH_ROOT, FIO_B, SSH_PLAIN])
    left = store.remove_hosts(db, "g", [SSH_ROOT, SSH_PLAIN])
    assert left == HostGroup("g", (FIO_A, FIO_B))
    assert store.remove_hosts(db, "g", [FIO_A, FIO_B]) == HostGroup("g", ())
    assert store.get_group(db, "g") == HostGroup("g", ())
    with pytest.raises(KeyError):
        store.remove_hosts(db, "absent", [FIO_A])


def test_remove_group_takes_its_hosts_with_it(db: Database) -> None:
    store.add_hosts(db, "g", [FIO_A, FIO_B])
    store.add_hosts(db, "h", [FIO_A])
    assert store.remove_group(db, "g") is True
    assert store.remove_group(db, "g") is False
    assert [g.name for g in store.list_groups(db)] == ["h"]
    with db.engine.connect() as conn:
        rows = conn.execute(select(func.count()).select_from(host_group_hosts)).scalar_one()
    assert rows == 1  # only h's host: none of g's is left behind


def test_a_bad_name_is_refused_before_anything_is_written(db: Database) -> None:
    with pytest.raises(ValueError, match="letters, digits"):
        store.add_hosts(db, "bad name", [FIO_A])
    assert store.list_groups(db) == []


@contextlib.contextmanager
def writers_at_once(
    url: str, count: int, work: Callable[[int, Database], None]
) -> Iterator[list[Database]]:
    """`count` app instances, each with its own connection, doing `work(index, db)` at the same
    moment; their databases, once every one is done (a failure in one is raised here)."""
    writers = [open_database(url) for _ in range(count)]
    failures: list[BaseException] = []
    start = threading.Barrier(count)

    def run(index: int) -> None:
        try:
            start.wait()
            work(index, writers[index])
        except BaseException as exc:  # reported below, in the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert failures == []
        yield writers
    finally:
        for writer in writers:
            writer.close()


def test_writers_at_once_lose_no_host(url: str) -> None:
    """Eight app instances add hosts to one new group at the same moment: every host lands
    (each edit reads, then rewrites, the list: without the group's lock some would be lost)."""

    def add(index: int, db: Database) -> None:
        for n in range(5):
            store.add_hosts(db, "shared", [parse_host(f"10.9.{index}.{n}")])

    with writers_at_once(url, 8, add) as writers:
        group = store.get_group(writers[0], "shared")
        assert group is not None and len(group.hosts) == 40 == len(set(group.hosts))


def test_migration_0009_adds_and_downgrade_drops_the_group_tables(tmp_path: Path) -> None:
    from alembic import command

    from stripewise.history.database import alembic_config

    path = tmp_path / "history.db"
    config = alembic_config(path_to_url(path))
    command.upgrade(config, "0008")
    assert not _tables(path) & {"host_groups", "host_group_hosts"}
    command.upgrade(config, "0009")
    assert {"host_groups", "host_group_hosts"} <= _tables(path)
    command.downgrade(config, "0008")
    assert not _tables(path) & {"host_groups", "host_group_hosts"}


def _tables(path: Path) -> set[str]:
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    finally:
        conn.close()
    return {name for (name,) in rows}


def test_writers_creating_a_group_at_once_are_told_once_that_they_created_it(url: str) -> None:
    """Four `hosts add` at once to a new group each printed "created group" on PostgreSQL: the
    group's hosts before were read outside the transaction that wrote them."""
    told: list[bool] = []

    def add(index: int, db: Database) -> None:
        _group, before = store.add_hosts_to(db, "race", [parse_host(f"10.8.0.{index}")])
        told.append(before is None)

    with writers_at_once(url, 4, add) as writers:
        assert sorted(told) == [False, False, False, True], "one creator, three that added"
        group = store.get_group(writers[0], "race")
        assert group is not None and len(group.hosts) == 4

"""Host groups in the history database: read, create or replace, add and remove hosts.

A group's hosts are rewritten whole on every change (groups hold a handful of hosts), inside
one transaction, so a reader never sees a group half-edited and positions stay 0..n-1.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar, cast

from sqlalchemy import Connection, delete, insert, select
from sqlalchemy import exc as sa_exc

from stripewise.history.database import Database
from stripewise.history.errors import DatabaseError
from stripewise.history.models import host_group_hosts, host_groups, utc_now
from stripewise.history.row_lock import lock_row
from stripewise.model.host_address import HostAddress, HostKind
from stripewise.model.host_group import HostGroup, check_group_name, unique_hosts

__all__ = [
    "add_hosts",
    "add_hosts_to",
    "get_group",
    "list_groups",
    "remove_group",
    "remove_hosts",
    "save_group",
]

T = TypeVar("T")


def list_groups(db: Database) -> list[HostGroup]:
    """Every group, by name."""
    with _translated(db), db.engine.connect() as conn:
        rows = conn.execute(
            select(host_groups.c.id, host_groups.c.name).order_by(host_groups.c.name)
        ).all()
        members = _hosts_by_group(conn, [int(row.id) for row in rows])
    return [HostGroup(str(row.name), members.get(int(row.id), ())) for row in rows]


def get_group(db: Database, name: str) -> HostGroup | None:
    """The group of that name, or None."""
    name = check_group_name(name)
    with _translated(db), db.engine.connect() as conn:
        group_id = _group_id(conn, name)
        if group_id is None:
            return None
        return HostGroup(name, _hosts_by_group(conn, [group_id]).get(group_id, ()))


def save_group(db: Database, group: HostGroup) -> None:
    """Create the group, or replace its hosts; repeated hosts are kept once, in first order."""
    name = check_group_name(group.name)
    hosts = unique_hosts(group.hosts)
    _write(db, lambda conn: _replace_hosts(conn, _ensure_group(conn, name), hosts))


def remove_group(db: Database, name: str) -> bool:
    """Delete the group and its hosts; False when there was no such group."""
    name = check_group_name(name)

    def run(conn: Connection) -> bool:
        group_id = _locked_group_id(conn, name)
        if group_id is None:
            return False
        # Explicit as well as ON DELETE CASCADE: SQLite enforces it only with foreign_keys on.
        conn.execute(delete(host_group_hosts).where(host_group_hosts.c.group_id == group_id))
        conn.execute(delete(host_groups).where(host_groups.c.id == group_id))
        return True

    return _write(db, run)


def add_hosts(db: Database, name: str, hosts: Sequence[HostAddress]) -> HostGroup:
    """Append hosts to the group (created if new); a host already in it is not added twice."""
    return add_hosts_to(db, name, hosts)[0]


def add_hosts_to(
    db: Database, name: str, hosts: Sequence[HostAddress]
) -> tuple[HostGroup, tuple[HostAddress, ...] | None]:
    """`add_hosts`, and the group's hosts before, None when this call created it: read in the
    transaction that writes, so writers adding to a new group at once tell one "created"."""
    name = check_group_name(name)

    def run(conn: Connection) -> tuple[HostGroup, tuple[HostAddress, ...] | None]:
        found = _locked_group_id(conn, name)
        before = None if found is None else _hosts_by_group(conn, [found]).get(found, ())
        # not found: inserted, never looked up again (a group another writer committed since
        # would be taken as this one's, its hosts read as none); a collision starts over
        group_id = found if found is not None else _insert_group(conn, name)
        merged = unique_hosts((*(before or ()), *hosts))
        _replace_hosts(conn, group_id, merged)
        return HostGroup(name, merged), None if before is None else tuple(before)

    return _write(db, run)


def remove_hosts(db: Database, name: str, hosts: Sequence[HostAddress]) -> HostGroup:
    """Drop those hosts from the group (the group stays, even empty); KeyError if no group."""
    name = check_group_name(name)
    dropped = set(hosts)

    def run(conn: Connection) -> HostGroup:
        group_id = _locked_group_id(conn, name)
        if group_id is None:
            raise KeyError(name)
        current = _hosts_by_group(conn, [group_id]).get(group_id, ())
        kept = tuple(host for host in current if host not in dropped)
        _replace_hosts(conn, group_id, kept)
        return HostGroup(name, kept)

    return _write(db, run)


# -- internals -----------------------------------------------------------------------------


def _group_id(conn: Connection, name: str) -> int | None:
    found = conn.execute(select(host_groups.c.id).where(host_groups.c.name == name))
    value = found.scalar_one_or_none()
    return None if value is None else int(value)


def _locked_group_id(conn: Connection, name: str) -> int | None:
    """The group's id with its write lock held until commit; None when there is no group."""
    return lock_row(conn, host_groups, host_groups.c.name == name)


def _ensure_group(conn: Connection, name: str) -> int:
    group_id = _locked_group_id(conn, name)
    return group_id if group_id is not None else _insert_group(conn, name)


def _insert_group(conn: Connection, name: str) -> int:
    inserted = conn.execute(insert(host_groups), {"name": name, "created_at": utc_now()})
    key = inserted.inserted_primary_key
    assert key is not None  # a single-row INSERT always has one
    return int(key[0])


def _replace_hosts(conn: Connection, group_id: int, hosts: Iterable[HostAddress]) -> None:
    conn.execute(delete(host_group_hosts).where(host_group_hosts.c.group_id == group_id))
    rows = [
        {
            "group_id": group_id,
            "position": position,
            "kind": host.kind,
            "host": host.host,
            "port": host.port,
            "user": host.user,
        }
        for position, host in enumerate(hosts)
    ]
    if rows:
        conn.execute(insert(host_group_hosts), rows)


def _hosts_by_group(conn: Connection, group_ids: list[int]) -> dict[int, tuple[HostAddress, ...]]:
    if not group_ids:
        return {}
    table = host_group_hosts
    rows = conn.execute(
        select(table.c.group_id, table.c.kind, table.c.host, table.c.port, table.c.user)
        .where(table.c.group_id.in_(group_ids))
        .order_by(table.c.group_id, table.c.position)
    ).all()
    found: dict[int, list[HostAddress]] = {}
    for row in rows:
        address = HostAddress(cast(HostKind, row.kind), str(row.host), int(row.port), row.user)
        found.setdefault(int(row.group_id), []).append(address)
    return {group_id: tuple(addresses) for group_id, addresses in found.items()}


_ATTEMPTS = 16  # more than the writers a team starts at one group at once


def _write(db: Database, run: Callable[[Connection], T]) -> T:
    """Run `run(conn)` in one transaction; `run` takes the group's write lock first
    (`_locked_group_id`), so two edits of one group at once never lose one another's hosts
    (each reads, then rewrites, the list).

    A group that does not exist yet has no row to lock: writers creating it at once collide on
    its name or its hosts' positions, and the loser starts over, finding and locking the group.
    Each collision means another writer committed, so a few attempts (one per writer racing)
    always settle it."""
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            with _translated(db), db.engine.begin() as conn:
                return run(conn)
        except sa_exc.IntegrityError as exc:
            if attempt == _ATTEMPTS:
                raise DatabaseError(f"{db.location}: {' '.join(str(exc.orig).split())}") from exc
    raise AssertionError("unreachable")


@contextmanager
def _translated(db: Database) -> Iterator[None]:
    """Driver errors become a one-line DatabaseError naming the database; integrity errors
    pass through for `_write` to retry."""
    try:
        yield
    except sa_exc.IntegrityError:
        raise
    except sa_exc.DBAPIError as exc:
        raise DatabaseError(f"{db.location}: {' '.join(str(exc.orig).split())}") from exc

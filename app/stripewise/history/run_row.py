"""A run's row: what it holds (`RunRow`), and the one function that writes it (`write_run`).

Every run enters the history here: measured by the GUI or `bench --save` (directly or synced
from the spool), a group run and its hosts' runs. Imports insert theirs in the import's own
transaction, a batch at a time, from `row_values`. A row is written once per key
(`runs.uuid`), however often a recorder or a spool sync asks.

The spec is stored as the helper's normalised JSON (`protocol.spec`); a stored spec that does
not read back as the same `BenchSpec` (an imported tool's own options, a hand-made one) is
kept as stored, in `RunRow.options`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypedDict

from sqlalchemy import Connection, insert, select, update
from sqlalchemy import exc as sa_exc

from stripewise.history.connection import Database, driver_errors
from stripewise.history.errors import DatabaseError
from stripewise.history.json_values import json_safe
from stripewise.history.models import RUN_SOURCES, JsonDocument, hosts, runs, utc_now
from stripewise.model.bench import BenchSpec
from stripewise.model.run import RunStatus
from stripewise.model.run_context import JsonObject, RunContext
from stripewise.protocol.spec import spec_from_json, spec_to_json
from stripewise.protocol.wire import ProtocolError
from stripewise.system.hostinfo import HostInfo


def new_run_key() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True)
class RunRow:
    """Everything a run's row holds but its host; `key` identifies it everywhere."""

    name: str
    target: str
    engine: str
    engine_version: str
    started_at: datetime
    spec: BenchSpec | None = None  # None: a run without one (`options` holds what it had)
    context: RunContext = field(default_factory=RunContext)
    options: JsonObject = field(default_factory=dict)
    key: str = field(default_factory=new_run_key)
    tags: tuple[str, ...] = ()
    source: str = "measured"
    status: RunStatus = RunStatus.RUNNING
    notes: str = ""
    parent_run_id: int | None = None  # a group run's host run (history.group_runs)
    host_label: str | None = None


def stored_spec(spec: BenchSpec | None, options: JsonObject) -> JsonObject:
    """runs.spec: the BenchSpec as the helper writes it, else the options as they were."""
    return spec_to_json(spec) if spec is not None else dict(options)


def read_spec(stored: object) -> tuple[BenchSpec | None, JsonObject]:
    """(spec, options) from runs.spec: a BenchSpec when the document reads back as the same
    one; else None, and the document as stored (an import's options, an older shape)."""
    if not isinstance(stored, dict) or not stored:
        return None, {}
    try:
        spec = spec_from_json(dict(stored))
    except ProtocolError:
        return None, dict(stored)
    return (spec, {}) if spec_to_json(spec) == stored else (None, dict(stored))


def write_run(db: Database, host: HostInfo | int, row: RunRow) -> int:
    """The run's id: its row inserted, or the one already under its key (a lost reply hid
    an earlier success; another process synced it meanwhile). `host`: the machine, found or
    added by its machine id, or the id of a host already in the history."""
    if (found := find_run(db, row.key)) is not None:
        return found
    for attempt in (1, 2):
        try:
            with driver_errors(db), db.engine.begin() as conn:
                host_id = host if isinstance(host, int) else ensure_host(conn, host)
                return insert_row(conn, host_id, row)
        except sa_exc.IntegrityError as exc:
            if (found := find_run(db, row.key)) is not None:
                return found
            if isinstance(host, int):
                reason = f"no host with id {host}"
            elif attempt == 1:
                continue  # another process added the same host meanwhile: it is there now
            else:
                reason = str(exc.orig)
            raise DatabaseError(
                f"cannot record run {row.name!r} in {db.location}: {reason}"
            ) from exc
    raise AssertionError("unreachable")  # the second attempt returns or raises


def insert_row(conn: Connection, host_id: int, row: RunRow) -> int:
    """The INSERT itself, in the caller's transaction."""
    key = conn.execute(insert(runs), row_values(host_id, row)).inserted_primary_key
    assert key is not None  # a single-row INSERT always has one
    return int(key[0])


class RunColumns(TypedDict):
    """The runs table's columns of one row as inserted (`row_values`)."""

    uuid: str
    host_id: int
    name: str
    status: str
    engine: str
    engine_version: str
    target: str
    started_at: datetime
    finished_at: datetime | None
    spec: JsonDocument
    context: JsonDocument
    tags: list[str]
    notes: str
    source: str
    baseline: bool
    parent_run_id: int | None
    host_label: str | None


# The columns `row_values` gives.
RUN_COLUMNS = tuple(RunColumns.__annotations__)


def row_values(host_id: int, row: RunRow) -> RunColumns:
    """The runs table's columns of `row`, checked; an import inserts a batch of them at once."""
    if row.source not in RUN_SOURCES:
        raise ValueError(f"run source must be one of {RUN_SOURCES}, not {row.source!r}")
    if row.started_at.tzinfo is None:  # a naive time is ambiguous and would sort wrongly
        raise ValueError(
            f"started_at {row.started_at.isoformat()} has no time zone; pass an aware datetime"
        )
    return {
        "uuid": row.key,
        "host_id": host_id,
        "name": row.name,
        "status": RunStatus(row.status).value,
        "engine": row.engine,
        "engine_version": row.engine_version,
        "target": row.target,
        "started_at": row.started_at,
        "finished_at": None,
        "spec": json_safe(stored_spec(row.spec, row.options)),
        "context": json_safe(row.context.to_json()),
        "tags": list(row.tags),
        "notes": row.notes,
        "source": row.source,
        "baseline": False,
        "parent_run_id": row.parent_run_id,
        "host_label": row.host_label,
    }


def find_run(db: Database, key: str) -> int | None:
    with driver_errors(db), db.engine.connect() as conn:
        found = conn.execute(select(runs.c.id).where(runs.c.uuid == key)).scalar_one_or_none()
    return None if found is None else int(found)


def ensure_host(conn: Connection, info: HostInfo) -> int:
    """Id of the host with this machine id, inserting it or refreshing its details. Two
    processes inserting the same machine at once: the second's IntegrityError, to retry."""
    now = utc_now()
    details = {
        "hostname": info.hostname,
        "kernel": info.kernel,
        "cpu_model": info.cpu_model,
        "cpu_count": info.cpu_count,
        "ram_bytes": info.ram_bytes,
        "last_seen": now,
    }
    found = conn.execute(
        select(hosts.c.id).where(hosts.c.machine_id == info.machine_id)
    ).scalar_one_or_none()
    if found is not None:
        conn.execute(update(hosts).where(hosts.c.id == found).values(details))
        return int(found)
    row = {**details, "machine_id": info.machine_id, "first_seen": now}
    key = conn.execute(insert(hosts), row).inserted_primary_key
    assert key is not None  # a single-row INSERT always has one
    return int(key[0])

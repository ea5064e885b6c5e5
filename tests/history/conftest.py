"""Shared fixtures for the history tests: real SQLite files under tmp_path, nothing mocked."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

import pytest
from alembic import command

from stripewise.history.database import Database, alembic_config, open_database, path_to_url
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.run import ResultValue, RunStatus
from stripewise.model.run_context import RunContext
from stripewise.system.hostinfo import HostInfo

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
HOST = HostInfo(
    hostname="bench-01",
    machine_id="0123456789abcdef0123456789abcdef",
    kernel="6.1.0-test",
    cpu_model="Test CPU @ 3.0GHz",
    cpu_count=16,
    ram_bytes=64 * 2**30,
)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "history.db"


@pytest.fixture
def db(db_path: Path) -> Iterator[Database]:
    database = open_database(path_to_url(db_path))
    yield database
    database.close()


@pytest.fixture
def store(db: Database) -> HistoryStore:
    return HistoryStore(db)


@pytest.fixture
def host_id(store: HistoryStore) -> int:
    return store.ensure_host(HOST)


class RunMaker(Protocol):
    def __call__(
        self,
        name: str = ...,
        started_at: datetime = ...,
        *,
        samples: int = ...,
        status: RunStatus | None = ...,
        results: tuple[ResultValue, ...] = ...,
    ) -> int: ...


@pytest.fixture
def make_run(store: HistoryStore, host_id: int) -> RunMaker:
    """Records a run as the run controller does; `status=None` leaves it running."""

    def make(
        name: str = "seq-write",
        started_at: datetime = T0,
        *,
        samples: int = 0,
        status: RunStatus | None = RunStatus.COMPLETE,
        results: tuple[ResultValue, ...] = (),
    ) -> int:
        return _record_run(store, host_id, name, started_at, samples, status, results)

    return make


def _record_run(
    store: HistoryStore,
    host_id: int,
    name: str,
    started_at: datetime,
    samples: int,
    status: RunStatus | None,
    results: tuple[ResultValue, ...],
) -> int:
    run_id = store.create_run(
        host_id,
        name=name,
        target="/mnt/test/stripewise.tmp",
        engine="fio",
        engine_version="3.33",
        options={"size": "1G", "phases": ["write", "read"]},
        context=RunContext.from_json({"fs": "xfs", "mount_options": ["noatime"]}),
        started_at=started_at,
        tags=("nvme", "raid10"),
    )
    store.add_samples(
        run_id,
        [
            SampleRow(seq=i, t_s=i * 0.5, phase="write", repetition=0, data={"MBps": 100.0 + i})
            for i in range(samples)
        ],
    )
    store.add_results(run_id, results)
    if status is not None:
        store.finish_run(run_id, status, finished_at=started_at + timedelta(seconds=90))
    return run_id


@pytest.fixture
def legacy_db(db_path: Path) -> Callable[[str], int]:
    """Builds `db_path` at revision 0001 with Alembic and stores one run with raw SQL."""

    def build(name: str) -> int:
        command.upgrade(alembic_config(path_to_url(db_path)), "0001")
        return insert_legacy_run(db_path, name)

    return build


def insert_legacy_run(path: Path, name: str) -> int:
    """Rows written with raw SQL, as revision 0001 stored them."""
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO hosts (hostname, machine_id, kernel, cpu_model, cpu_count, ram_bytes,"
            " first_seen, last_seen) VALUES ('old-host', 'mid-old', '5.10', 'cpu', 4,"
            " 8589934592, '2024-01-01 10:00:00.000000', '2024-01-01 10:00:00.000000')"
        )
        cur = conn.execute(
            "INSERT INTO runs (uuid, host_id, name, status, engine, engine_version, target,"
            " started_at, finished_at, spec, context, tags, notes, source)"
            " VALUES ('11111111-2222-3333-4444-555555555555', 1, ?, 'complete', 'builtin',"
            " '1', '/dev/loop0', '2024-01-01 10:00:00.000000', '2024-01-01 10:05:00.000000',"
            " '{}', '{}', '[\"old\"]', '', 'measured')",
            (name,),
        )
        run_id = int(cur.lastrowid or 0)
        conn.execute(
            "INSERT INTO results (run_id, phase, metric, unit, value, min_value, max_value,"
            " repetitions) VALUES (?, 'read', 'throughput', 'MB/s', 512.5, 500, 520, 3)",
            (run_id,),
        )
    conn.close()
    return run_id


@pytest.fixture
def file_state() -> Callable[[Path], tuple[bytes, int]]:
    """Bytes and mtime of a file, to prove a refused database was not touched."""

    def state(path: Path) -> tuple[bytes, int]:
        return path.read_bytes(), path.stat().st_mtime_ns

    return state

"""The store round trip on a real SQLite file: what goes in comes back, missing stays missing."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.exc import IntegrityError

from stripewise.history.database import Database, RunNotFoundError, open_database, path_to_url
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.run import ResultValue, RunStatus
from stripewise.model.run_context import RunContext
from stripewise.system.hostinfo import HostInfo, read_cpu_model

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
RESULTS = (
    ResultValue("write", "throughput", "MB/s", 1834.5, 1790.0, 1902.25, 3),
    ResultValue("seeks", "iops", "1/s", None, None, None, 3),  # bonnie++ printed +++++
)


def test_ensure_host_is_keyed_by_machine_id(store: HistoryStore) -> None:
    first = store.ensure_host(HostInfo("bench-01", "mid-1", kernel="6.1"))
    again = store.ensure_host(HostInfo("bench-01-renamed", "mid-1", kernel="6.6"))
    other = store.ensure_host(HostInfo("bench-01", "mid-2"))
    assert first == again != other
    run = store.create_run(first, name="r", target="/t", engine="fio", engine_version="3")
    detail = store.get_run(run)
    assert detail.summary.host == "bench-01-renamed"
    assert detail.host_info is not None and detail.host_info.kernel == "6.6"


def test_run_round_trip(store: HistoryStore, host_id: int, db_path: Path) -> None:
    cest = timezone(timedelta(hours=2))
    started = datetime(2025, 3, 1, 14, 0, 0, 250000, tzinfo=cest)  # 12:00:00.25 UTC
    run_id = store.create_run(
        host_id,
        name="raid10 seq",
        target="/mnt/array/stripewise.tmp",
        engine="fio",
        engine_version="fio-3.33",
        options={"size": "4G", "block_size": 1048576, "ratio": float("nan")},
        context=RunContext.from_json({"filesystem": "xfs", "file_to_ram": 2.0}),
        started_at=started,
        tags=["nvme"],
        notes="after read_ahead change",
    )
    rows = [
        SampleRow(seq=i, t_s=i * 0.5, phase="write", repetition=i // 50, data={"MBps": i * 1.5})
        for i in range(120)
    ]
    rows.append(SampleRow(120, 60.0, "write", 2, {"MBps": float("nan"), "iowait": 3.0}))
    store.add_samples(run_id, rows)
    store.add_results(run_id, RESULTS)
    store.finish_run(run_id, RunStatus.COMPLETE, finished_at=started + timedelta(minutes=5))

    detail = store.get_run(run_id)
    s = detail.summary
    assert (s.name, s.status, s.host, s.engine_version) == (
        "raid10 seq",
        RunStatus.COMPLETE,
        "bench-01",
        "fio-3.33",
    )
    assert s.started_at == started and s.started_at.tzinfo is UTC
    assert s.started_at.hour == 12 and s.started_at.microsecond == 250000
    assert s.duration_s == 300.0
    assert s.tags == ("nvme",)
    assert detail.options == {"size": "4G", "block_size": 1048576, "ratio": None}
    assert detail.context.extra["file_to_ram"] == 2.0
    assert detail.notes == "after read_ahead change"
    assert detail.sample_count == 121
    assert detail.results == RESULTS
    assert detail.results[1].value is None
    assert len(detail.uuid) == 36

    back = store.samples(run_id)
    assert back[:120] == rows[:120]
    assert back[120].data == {"MBps": None, "iowait": 3.0}  # NaN is stored as missing

    # Missing is NULL in the file itself, not 0 that happens to be read back as None.
    with sqlite3.connect(db_path) as conn:
        stored = conn.execute(
            "SELECT value, min_value FROM results WHERE run_id = ? AND phase = 'seeks'",
            (run_id,),
        ).fetchall()
    conn.close()
    assert stored == [(None, None)]


def test_list_runs_newest_first_with_limit(store: HistoryStore, make_run: Any) -> None:
    middle = make_run("middle", T0)
    newest = make_run("newest", T0 + timedelta(hours=1))
    oldest = make_run("oldest", T0 - timedelta(days=3))
    listed = store.list_runs()
    assert [r.id for r in listed] == [newest, middle, oldest]
    assert [r.name for r in store.list_runs(limit=2)] == ["newest", "middle"]
    assert listed[0].host == "bench-01"
    assert listed[0].tags == ("nvme", "raid10")
    assert listed[0].duration_s == 90.0
    assert store.count_runs() == 3


def test_abandoned_runs_become_aborted_and_keep_samples(store: HistoryStore, make_run: Any) -> None:
    crashed = make_run("crashed", samples=40, status=None)
    done = make_run("done", samples=5)
    assert store.get_run(crashed).summary.status is RunStatus.RUNNING

    assert store.mark_abandoned_runs_aborted() == [crashed]

    detail = store.get_run(crashed)
    assert detail.summary.status is RunStatus.ABORTED
    assert detail.sample_count == 40
    assert len(store.samples(crashed)) == 40
    assert store.get_run(done).summary.status is RunStatus.COMPLETE
    assert store.mark_abandoned_runs_aborted() == []


def test_unknown_run_ids_raise_run_not_found(store: HistoryStore, db_path: Path) -> None:
    for call in (
        lambda: store.get_run(999),
        lambda: store.samples(999),
        lambda: store.finish_run(999, RunStatus.FAILED),
        lambda: store.add_samples(999, [SampleRow(0, 0.0, "read", 0, {"MBps": 1.0})]),
        lambda: store.add_results(999, RESULTS),
        lambda: store.delete_run(999),
    ):
        with pytest.raises(RunNotFoundError) as caught:
            call()
        assert "run 999" in str(caught.value) and str(db_path) in str(caught.value)


def test_delete_run_cascades_to_samples_and_results(
    store: HistoryStore, make_run: Any, db_path: Path
) -> None:
    gone = make_run("gone", samples=10, results=RESULTS)
    kept = make_run("kept", samples=3, results=RESULTS)
    store.delete_run(gone)
    with sqlite3.connect(db_path) as conn:
        counts = [
            conn.execute(f"SELECT COUNT(*) FROM {t} WHERE run_id = ?", (gone,)).fetchone()[0]
            for t in ("sample_blocks", "results")
        ]
    conn.close()
    assert counts == [0, 0]
    assert store.get_run(kept).sample_count == 3


def test_schema_rejects_bad_values(store: HistoryStore, host_id: int, db: Database) -> None:
    with pytest.raises(ValueError, match="no time zone"):
        store.create_run(
            host_id,
            name="n",
            target="t",
            engine="e",
            engine_version="1",
            started_at=datetime(2025, 1, 1),
        )
    with pytest.raises(ValueError, match="final status"):
        store.finish_run(1, RunStatus.RUNNING)
    run = store.create_run(host_id, name="n", target="t", engine="e", engine_version="1")
    with pytest.raises(IntegrityError), db.engine.begin() as conn:  # the CHECK constraint
        conn.exec_driver_sql(f"UPDATE runs SET status = 'paused' WHERE id = {run}")
    assert store.get_run(run).summary.status is RunStatus.RUNNING


def test_a_second_connection_sees_uncheckpointed_runs(
    db: Database, store: HistoryStore, make_run: Any, db_path: Path
) -> None:
    run = make_run("live", samples=2)
    assert db_path.with_name("history.db-wal").stat().st_size > 0  # still in the WAL
    with open_database(path_to_url(db_path)) as other:
        assert other.backup_path is None
        assert [r.id for r in HistoryStore(other).list_runs()] == [run]


def test_list_runs_is_one_query_on_1000_runs(
    store: HistoryStore, host_id: int, db: Database
) -> None:
    for n in range(1000):
        run = store.create_run(
            host_id,
            name=f"run {n}",
            target="/dev/md0",
            engine="fio",
            engine_version="3.33",
            options={"n": n, "phases": ["write", "rewrite", "read", "seeks"]},
            context=RunContext.from_json({"n": n}),
            started_at=T0 + timedelta(minutes=n),
        )
        store.add_results(run, RESULTS * 2)
        store.finish_run(run, RunStatus.COMPLETE, T0 + timedelta(minutes=n, seconds=30))

    first = store.list_runs()  # makes and stores each run's listing line, once
    assert {r.headline.figures for r in first} != {""}
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    event.listen(db.engine, "before_cursor_execute", count)
    try:
        listed = store.list_runs()
    finally:
        event.remove(db.engine, "before_cursor_execute", count)

    assert len(listed) == 1000 and listed == first
    assert listed[0].name == "run 999" and listed[-1].name == "run 0"
    assert len(statements) == 1, statements


def test_current_host_is_described() -> None:
    host = HostInfo.current()
    assert host.machine_id and host.hostname
    assert host.cpu_count >= 1
    assert host.ram_bytes > 2**20


def test_cpu_model_is_read_on_arm_and_x86(tmp_path: Path) -> None:
    x86 = tmp_path / "x86"
    x86.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Xeon Gold 6338\n")
    arm = tmp_path / "arm"
    arm.write_text("processor\t: 0\nBogoMIPS\t: 48.00\n\nHardware\t: BCM2835\nModel\t: Pi 4\n")
    assert read_cpu_model(x86) == "Xeon Gold 6338"
    assert read_cpu_model(arm) == "Pi 4"
    assert read_cpu_model(tmp_path / "missing") is None

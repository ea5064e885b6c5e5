"""Runs filed by every earlier schema read back as typed values once the history is opened:
the spec a `BenchSpec` (an import's options kept as they were), the context a `RunContext`
with every key it held, known or not."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from alembic import command

from stripewise.history.database import (
    HEAD_REVISION,
    KNOWN_REVISIONS,
    alembic_config,
    open_database,
    path_to_url,
)
from stripewise.history.store import HistoryStore
from stripewise.model.bench import BenchSpec, Phase
from stripewise.model.run_context import (
    ArrayContext,
    CpuIdle,
    DirtySettings,
    ImportRecord,
    QueueTuning,
    Recorder,
    RunContext,
)

EARLIER = [revision for revision in KNOWN_REVISIONS if revision != HEAD_REVISION]

# the Benchmark form's arguments, as releases before 0006 filed them (and repeated in the
# context); 0006 gives them the helper's shape
_FORM_SPEC = {
    "target": "/srv/a",
    "size": 1073741824,
    "block_size": 1048576,
    "direct": True,
    "phases": ["seq_write", "seq_read"],
    "queue_depth": 4,
    "streams": 2,
    "repetitions": 3,
    "runtime_cap_s": 120.0,
    "sample_rate_hz": 5,
    "engine": "fio",
    "overwrite": True,
}
# the same spec as bench.start echoes it, the shape filed since 0006
_HELPER_SPEC = {k: v for k, v in _FORM_SPEC.items() if k != "overwrite"} | {
    "random_block_size": 4096,
    "sample_rate_hz": 5.0,
}
EXPECTED_SPEC = BenchSpec(
    target="/srv/a",
    size_bytes=2**30,
    block_bytes=2**20,
    random_block_bytes=4096,
    direct=True,
    phases=(Phase.SEQ_WRITE, Phase.SEQ_READ),
    queue_depth=4,
    streams=2,
    repetitions=3,
    runtime_cap_s=120.0,
    sample_rate_hz=5.0,
    engine="fio",
)
# a context as inventory.bench_context writes it, with a key no version of Stripewise knows
_CONTEXT: dict[str, Any] = {
    "host": "old-host",
    "host_key": "machine:m",
    "kernel": "6.1.0",
    "ram_bytes": 2**34,
    "target": "/srv/a",
    "target_kind": "directory",
    "filesystem": "xfs",
    "mount_options": "rw,noatime,sunit=1024,swidth=4096",
    "mountpoint": "/srv",
    "fill_pct": 12.5,
    "disks": [
        {"name": "sdb", "rotational": True, "tuning": {"read_ahead_kb": 4096, "scheduler": "none"}}
    ],
    "array": {"device": "md0", "level": "raid5", "chunk_kib": 512, "members": ["sdb", "sdc"]},
    "dirty": {"dirty_ratio_pct": 20, "dirty_background_ratio_pct": 10},
    "cpu_idle": {"driver": "intel_idle", "governor": "menu"},
    "recorder": {"pid": 1, "start_ticks": 5, "boot_id": "b"},
    "engine": "fio",
    "engine_version": "3.33",
    "made_by_a_later_version": {"kept": [1, 2]},
}
_IMPORT_OPTIONS = {"global": {"rw": "read"}, "jobs": {"seq": {"bs": "1M"}}, "bs": "1M"}
_IMPORT_CONTEXT = {
    "format": "fio json",
    "import": {"file": "fio.json", "sha256": "ab" * 32, "format": "fio json", "line": 1},
}


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _insert(conn: sqlite3.Connection, table: str, row: dict[str, Any]) -> None:
    """Only the columns the table has at this revision."""
    kept = {k: v for k, v in row.items() if k in _columns(conn, table)}
    names = ", ".join(kept)
    marks = ", ".join("?" for _ in kept)
    conn.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(kept.values()))


def _file_runs(path: Path, revision: str) -> None:
    """A measured and an imported run, as a release at `revision` filed them."""
    before_0006 = revision < "0006"
    spec = _FORM_SPEC if before_0006 else _HELPER_SPEC
    context = _CONTEXT | ({"spec": _FORM_SPEC} if before_0006 else {})
    with sqlite3.connect(path) as conn:
        when = "2026-01-01 00:00:00"
        host = {
            "id": 1,
            "hostname": "old-host",
            "machine_id": "m",
            "kernel": "6.1.0",
            "cpu_model": "cpu",
            "cpu_count": 4,
            "ram_bytes": 2**34,
            "first_seen": when,
            "last_seen": when,
        }
        _insert(conn, "hosts", host)
        for run_id, source, stored_spec, stored_context in (
            (1, "measured", spec, context),
            (2, "imported", _IMPORT_OPTIONS, _IMPORT_CONTEXT),
        ):
            run = {
                "id": run_id,
                "uuid": f"u{run_id}",
                "host_id": 1,
                "name": f"run {run_id}",
                "status": "complete",
                "engine": "fio",
                "engine_version": "3.33",
                "target": "/srv/a",
                "started_at": when,
                "spec": json.dumps(stored_spec),
                "context": json.dumps(stored_context),
                "tags": "[]",
                "notes": "",
                "source": source,
                "baseline": 0,
            }
            _insert(conn, "runs", run)
    conn.close()


@pytest.mark.parametrize("revision", EARLIER)
def test_runs_of_each_earlier_schema_read_back_typed(db_path: Path, revision: str) -> None:
    command.upgrade(alembic_config(path_to_url(db_path)), revision)
    _file_runs(db_path, revision)
    with open_database(path_to_url(db_path)) as db:
        assert db.schema_revision == HEAD_REVISION
        store = HistoryStore(db)
        measured, imported = store.get_run(1), store.get_run(2)

    assert measured.spec == EXPECTED_SPEC and measured.options == {}
    context = measured.context
    assert (context.host, context.kernel, context.ram_bytes) == ("old-host", "6.1.0", 2**34)
    assert (context.filesystem, context.mountpoint, context.fill_pct) == ("xfs", "/srv", 12.5)
    assert context.mount_options == "rw,noatime,sunit=1024,swidth=4096"
    assert context.disks is not None and context.disks[0].name == "sdb"
    assert context.disks[0].tuning == QueueTuning(read_ahead_kb=4096, scheduler="none")
    assert context.array == ArrayContext(
        device="md0", level="raid5", chunk_kib=512, members=("sdb", "sdc")
    )
    assert context.dirty == DirtySettings(dirty_ratio_pct=20, dirty_background_ratio_pct=10)
    assert context.cpu_idle == CpuIdle("intel_idle", "menu")
    assert context.recorder == Recorder(pid=1, start_ticks=5, boot_id="b")
    assert (context.engine, context.engine_version) == ("fio", "3.33")
    # nothing stored is lost: an unknown key is kept, and the document reads back whole
    assert context.extra == {"made_by_a_later_version": {"kept": [1, 2]}}
    assert context.to_json() == _CONTEXT

    assert imported.spec is None and imported.options == _IMPORT_OPTIONS
    assert imported.context.import_record == ImportRecord("fio.json", "ab" * 32, "fio json", 1)
    assert imported.context.to_json() == _IMPORT_CONTEXT


def test_a_context_written_by_hand_from_the_documented_keys_reads_back() -> None:
    """docs/history.md names the keys; a context made from them, types a little off where a
    hand would slip, reads back with what fits typed and the rest kept as written."""
    written = {
        "host": "nas",
        "filesystem": "ext4",
        "mount_options": ["noatime"],  # a list where Stripewise writes text
        "disks": [{"name": "sda", "tuning": {"read_ahead_kb": "4096"}}],  # a number as text
        "array": {"level": "raid6", "chunk_kib": 256},
        "dirty": {"dirty_ratio_pct": 10},
        "cpu_idle": {"driver": "acpi_idle"},
        "engine": "builtin",
        "recorder": None,
    }
    context = RunContext.from_json(written)
    assert (context.host, context.filesystem, context.engine) == ("nas", "ext4", "builtin")
    assert context.array == ArrayContext(level="raid6", chunk_kib=256)
    assert context.dirty == DirtySettings(dirty_ratio_pct=10)
    assert context.cpu_idle == CpuIdle(driver="acpi_idle")
    assert context.mount_options is None and context.extra["mount_options"] == ["noatime"]
    assert context.disks is not None and context.disks[0].tuning is not None
    assert context.disks[0].tuning.read_ahead_kb is None
    assert context.disks[0].tuning.extra == {"read_ahead_kb": "4096"}
    assert context.recorder is None
    assert context.to_json() == written
    assert RunContext.from_json("not an object") == RunContext()


def test_a_spool_header_of_the_earlier_version_reads_back_typed() -> None:
    """A run kept on this computer by the version before the typed run (its header was the
    KeyedRun's fields, spec and context as dicts) syncs as the same typed run."""
    from stripewise.history.keyed_runs import KeyedRun

    header = {
        "key": "0f1e2d3c-0000-4000-8000-000000000001",
        "host": {
            "hostname": "bench-01",
            "machine_id": "m",
            "kernel": "6.1.0",
            "cpu_model": "cpu",
            "cpu_count": 4,
            "ram_bytes": 2**34,
        },
        "name": "kept",
        "target": "/srv/a",
        "engine": "fio",
        "engine_version": "3.33",
        "spec": _HELPER_SPEC,
        "context": _CONTEXT,
        "started_at": "2026-11-01T00:00:00+00:00",
        "tags": ["nightly"],
        "source": "measured",
    }
    run = KeyedRun.from_json(json.dumps(header))
    assert run.key == header["key"] and run.host.hostname == "bench-01"
    assert run.row.spec == EXPECTED_SPEC and run.row.tags == ("nightly",)
    assert run.row.context.filesystem == "xfs" and run.row.context.recorder == Recorder(1, 5, "b")
    assert json.loads(run.to_json()) == header

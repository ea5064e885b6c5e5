"""Imported runs in a real SQLite history: one transaction per file, duplicates refused."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import update

from stripewise.history.database import Database, open_database
from stripewise.history.errors import DatabaseError
from stripewise.history.imports import DuplicateImport, file_sha256, import_file, import_runs
from stripewise.history.models import runs, utc_now
from stripewise.history.store import HistoryStore
from stripewise.importers import ImportFormatError, parse
from stripewise.model.run import ResultValue, RunStatus
from stripewise.system.hostinfo import HostInfo
from tests.importers.fixtures import FIXTURES, text


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    database = open_database(db_url)
    yield database
    database.close()


def dump(database: Database) -> str:
    assert database.sqlite_path is not None
    with sqlite3.connect(database.sqlite_path) as conn:
        return "\n".join(conn.iterdump())


def test_runs_hosts_and_results_are_stored(db: Database) -> None:
    ids = import_file(db, FIXTURES / "bonnie200a_direct_x2_files.csv")
    store = HistoryStore(db)
    first = store.get_run(ids[0])
    assert first.source == "imported"
    assert first.summary.status is RunStatus.COMPLETE
    assert first.summary.host == "lab-nas"
    assert first.summary.name == "bonnie++ lab-nas 1G"  # -x 2: one run of two passes
    assert first.summary.engine == "bonnie++" and first.summary.engine_version == "2.00a"
    assert first.host_info is not None and first.host_info.machine_id == "imported:lab-nas"
    data = (FIXTURES / "bonnie200a_direct_x2_files.csv").read_bytes()
    assert first.context.to_json()["import"] == {
        "file": "bonnie200a_direct_x2_files.csv",
        "sha256": file_sha256(data),
        "format": "bonnie++ csv 1.98",
        "line": 2,
    }
    values = {(r.phase, r.metric): r for r in first.results}
    rewrite = values["rewrite", "throughput"]
    assert (rewrite.value, rewrite.unit) == (pytest.approx(502199 * 1024 / 1e6), "MB/s")
    assert rewrite.passes == pytest.approx((682854 * 1024 / 1e6, 321544 * 1024 / 1e6))
    assert rewrite.source_unit == "KiB/s", "bonnie++'s own unit, kept for display"
    assert values["seq_read", "throughput"].value is None  # +++++ stays missing
    assert values["seq_write_per_char", "throughput"].value is None
    assert values["seq_create", "seq_create_per_s"].passes == (4193, 3238)  # bonnie's names
    assert first.spec is None and first.options["file_size_bytes"] == 1 << 30
    assert len(store.list_runs()) == 1


def test_started_at_from_the_file_or_now(db: Database) -> None:
    (fio_id,) = import_file(db, FIXTURES / "fio_two_jobs.json")
    (bonnie_id,) = import_file(db, FIXTURES / "bonnie200a_n0.csv")
    store = HistoryStore(db)
    assert store.get_run(fio_id).summary.started_at.timestamp() == 1795326368
    assert store.get_run(fio_id).summary.host == "(unknown)"
    assert store.get_run(bonnie_id).summary.started_at is not None


def test_existing_host_is_reused_by_hostname(db: Database) -> None:
    store = HistoryStore(db)
    host_id = store.ensure_host(HostInfo(hostname="lab-nas", machine_id="f00d" * 8))
    import_file(db, FIXTURES / "bonnie200a_direct.csv")
    import_file(db, FIXTURES / "bonnie200a_big.csv")
    with sqlite3.connect(db.sqlite_path) as conn:  # type: ignore[arg-type]
        assert conn.execute("select count(*) from hosts").fetchone() == (1,)
        assert {row[0] for row in conn.execute("select host_id from runs")} == {host_id}


def test_client_runs_share_their_host_and_the_total_has_none(db: Database) -> None:
    ids = import_file(db, FIXTURES / "fio_clients.txt", name="loopback")
    store = HistoryStore(db)
    runs = [store.get_run(i) for i in ids]
    assert [r.summary.host for r in runs] == ["127.0.0.1", "127.0.0.1", "(unknown)"]
    assert runs[0].summary.name == "loopback: fio cswrite, csread on 127.0.0.1:8766"
    record = runs[2].context.import_record
    assert record is not None and record.format == "fio json client"


def test_name_of_a_single_run(db: Database) -> None:
    (run_id,) = import_file(db, FIXTURES / "iozone_throughput.txt", name="thumper raid6 -t 10")
    assert HistoryStore(db).get_run(run_id).summary.name == "thumper raid6 -t 10"


def test_importing_twice_is_refused_and_writes_nothing(db: Database, tmp_path: Path) -> None:
    ids = import_file(db, FIXTURES / "bonnie103.csv")
    before = dump(db)
    copy = tmp_path / "renamed.csv"
    shutil.copy(FIXTURES / "bonnie103.csv", copy)
    with pytest.raises(DuplicateImport) as caught:
        import_file(db, copy)
    assert caught.value.run_ids == ids
    assert str(caught.value) == (
        f"renamed.csv was already imported as runs {', '.join(map(str, ids))}; nothing was imported"
    )
    assert dump(db) == before


def test_malformed_file_writes_nothing(db: Database, tmp_path: Path) -> None:
    import_file(db, FIXTURES / "bonnie103.csv")
    before = dump(db)
    lines = text("bonnie200a_x2_header.csv").splitlines()
    bad = tmp_path / "results.csv"
    bad.write_text("\n".join([lines[0], "", lines[2][:60]]) + "\n")
    with pytest.raises(ImportFormatError, match=r"^results\.csv line 3: expected 50 fields"):
        import_file(db, bad)
    assert dump(db) == before


def test_one_transaction_for_the_whole_file(db: Database) -> None:
    """A failure while storing the second run leaves no trace of the first."""
    parsed = parse(text("bonnie103.csv"), "bonnie103.csv")
    broken = [*parsed[1].results, ResultValue(None, "x", "%", 1.0)]  # type: ignore[arg-type]
    parsed[1] = replace(parsed[1], results=broken)
    before = dump(db)
    with pytest.raises(DatabaseError, match="NOT NULL"):
        import_runs(db, parsed, source_name="bonnie103.csv", sha256="0" * 64, name=None)
    assert dump(db) == before


def test_unreadable_file(db: Database, tmp_path: Path) -> None:
    with pytest.raises(OSError):
        import_file(db, tmp_path / "missing.csv")


@pytest.mark.skipif("deleted_at" not in runs.c, reason="no trash in this schema")
def test_duplicate_in_the_trash_says_how_to_restore(db: Database) -> None:
    ids = import_file(db, FIXTURES / "bonnie103.csv")
    with db.engine.begin() as conn:
        conn.execute(update(runs).where(runs.c.id == ids[1]).values(deleted_at=utc_now()))
    with pytest.raises(DuplicateImport) as caught:
        import_file(db, FIXTURES / "bonnie103.csv")
    assert caught.value.trashed == [ids[1]]
    assert f"(in the trash: `stripewise history restore {ids[1]}` brings it back)" in str(
        caught.value
    )


def test_utf16_file_from_powershell(db: Database, tmp_path: Path) -> None:
    saved = tmp_path / "fio.json"
    saved.write_bytes(text("fio_two_jobs.json").encode("utf-16"))  # with its byte-order mark
    (run_id,) = import_file(db, saved)
    assert HistoryStore(db).get_run(run_id).summary.name == "fio seqread, seqwrite"

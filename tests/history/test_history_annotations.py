"""Renaming, tags, notes, the baseline mark, and the trash (delete, undo, purge) in a real
SQLite history; the listing line made from context and results."""

from __future__ import annotations

from datetime import timedelta

import pytest
from tests.seed import seed_runs

from stripewise.history import quicklist
from stripewise.history.database import open_database
from stripewise.history.errors import RunNotFoundError
from stripewise.history.store import HistoryStore
from stripewise.model.run import Headline, ResultValue
from stripewise.model.run_context import RunContext
from stripewise.model.run_headline import figures_in_units, headline


@pytest.fixture
def store(db_url: str) -> HistoryStore:
    seed_runs(db_url, 3)
    db = open_database(db_url)
    yield HistoryStore(db)
    db.close()


def test_rename_tag_annotate_and_mark_a_baseline(store: HistoryStore) -> None:
    store.rename_run(1, "  chunk 256K, xfs  ")
    store.set_tags(1, [" chunk ", "xfs", "chunk", "", "slot  3"])
    store.set_notes(1, "Members moved to the second controller.")
    store.set_baseline(1, True)
    run = next(r for r in store.list_runs() if r.id == 1)
    assert run.name == "chunk 256K, xfs"
    assert run.tags == ("chunk", "xfs", "slot 3")
    assert run.notes.startswith("Members moved") and run.baseline
    store.set_baseline(1, False)
    assert not store.get_run(1).summary.baseline
    for bad in (lambda: store.rename_run(1, "   "), lambda: store.set_tags(1, ["x" * 65])):
        with pytest.raises(ValueError):
            bad()
    with pytest.raises(RunNotFoundError):
        store.set_notes(99, "nobody")


def test_deleted_runs_go_to_the_trash_and_come_back(store: HistoryStore, db_url: str) -> None:
    assert store.delete_runs([2, 3]) == [2, 3]
    assert [r.id for r in store.list_runs()] == [1]
    assert store.count_runs() == 1
    assert [r.id for r in quicklist.list_runs(db_url) or []] == [1], "the CLI's reader too"
    assert sorted(r.id for r in store.list_runs(trash=True)) == [2, 3]
    assert store.get_run(2).summary.id == 2, "a trashed run can still be shown"
    assert store.restore_runs([3]) == [3]
    assert [r.id for r in store.list_runs()] == [3, 1]
    assert store.purge_trash(timedelta(days=1)) == 0, "too recent to purge"
    assert store.purge_trash(timedelta(0)) == 1
    with pytest.raises(RunNotFoundError):
        store.get_run(2)
    with pytest.raises(RunNotFoundError):
        store.delete_runs([1, 42])
    assert [r.id for r in store.list_runs()] == [3, 1], "nothing moved when one id is unknown"


def test_listing_line_follows_the_results(store: HistoryStore) -> None:
    before = next(r for r in store.list_runs() if r.id == 1).headline
    assert before.figures == "read 211 MB/s"  # the seeded run 1 has a sequential read only
    store.add_results(1, [ResultValue("seq_write", "throughput", "MB/s", 512.0)])
    after = next(r for r in store.list_runs() if r.id == 1).headline
    assert after.figures == "write 512 MB/s, read 211 MB/s"


def test_headline_from_context() -> None:
    context = {
        "array": {
            "device": "md0",
            "level": "raid6",
            "chunk_kib": 512,
            "members": ["sda", "sdb", "sdc", "sdd"],
            "tuning": {"read_ahead_kb": 4096, "scheduler": "none"},
        },
        "disks": [{"name": "sda", "tuning": {"read_ahead_kb": 128}}],
        "dirty": {"dirty_ratio_pct": 40, "dirty_background_ratio_pct": 10, "dirty_bytes": 0},
    }
    results = [
        ResultValue("seq_read", "throughput", "MB/s", 640.4),
        ResultValue("random_read", "iops", "IOPS", 12345.0),
        ResultValue("seq_write", "seq_write_block_kBps", "KiB/s", None),
    ]
    line = headline(RunContext.from_json(context), results)
    assert line == Headline(
        "md0 raid6, 512 KiB chunk, 4 members",
        "read_ahead 4096 KiB, none, dirty 40/10 %",
        "read 640.4 MB/s, rand read 12345 IOPS",  # stored unrounded: rounded once, as shown
    )
    assert figures_in_units(line.figures, mib=False) == "read 640 MB/s, rand read 12,345 IOPS"
    # an import stores MB/s like a measured run (bonnie++'s 204,800 KiB/s); shown in one unit
    bonnie = [ResultValue("seq_write", "throughput", "MB/s", 209.7152, source_unit="KiB/s")]
    assert figures_in_units(headline(RunContext(), bonnie).figures, mib=True) == "write 200 MiB/s"
    assert figures_in_units(headline(RunContext(), bonnie).figures, mib=False) == "write 210 MB/s"
    loop = {
        "filesystem": "xfs",
        "disks": [
            {"name": "loop0", "tuning": {"read_ahead_kb": 128}},
            {"name": "vda", "tuning": {"read_ahead_kb": 4096}},
        ],
    }
    assert headline(RunContext.from_json(loop), []).tuning == "read_ahead loop0 128, vda 4096 KiB"
    assert headline(RunContext.from_json(loop), []).array == "loop0, xfs"
    many = {
        "disks": [{"name": f"sd{c}", "tuning": {"read_ahead_kb": n}} for n, c in enumerate("abcd")]
    }
    assert headline(RunContext.from_json(many), []).tuning == "mixed read_ahead"


def test_an_empty_listing_line_is_made_once_and_an_outdated_one_again(
    store: HistoryStore, db_url: str
) -> None:
    from sqlalchemy import event, select, update
    from tests.seed import record_run

    from stripewise.history.models import runs

    record_run(db_url, "nothing measured", {}, status=None)  # no context, no results
    store.list_runs()
    statements: list[str] = []
    event.listen(store._db.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    store.list_runs()
    assert len(statements) == 1, "an empty line is stored as made, not made again each time"
    with store._db.engine.begin() as conn:  # a line made by an older version
        conn.execute(update(runs).where(runs.c.id == 1).values(headline={"array": "old"}))
    assert next(r for r in store.list_runs() if r.id == 1).headline.figures == "read 211 MB/s"
    rounded = {"v": 2, "array": "", "tuning": "", "figures": "read 211 MB/s"}  # rounded once
    with store._db.engine.begin() as conn:
        conn.execute(update(runs).where(runs.c.id == 1).values(headline=rounded))
    store.list_runs()
    with store._db.engine.begin() as conn:
        stored = conn.execute(select(runs.c.headline).where(runs.c.id == 1)).scalar_one()
    assert stored["v"] == 3, "a line rounded by version 2 would be rounded twice in MiB/s"


def test_json_columns_are_compact_and_samples_packed(store: HistoryStore, db_url: str) -> None:
    import sqlite3

    path = db_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        context = conn.execute("SELECT context FROM runs WHERE id = 1").fetchone()[0]
        blocks = conn.execute("SELECT sample_count FROM sample_blocks WHERE run_id = 1").fetchall()
    conn.close()
    assert context == '{"kernel":"6.18.0","filesystem":"xfs"}', "no spaces after , and :"
    assert blocks == [(20,)], "a run's 20 samples of one phase are one block"
    assert store.samples(1)[0].data == {"read_mb_s": 200.0}

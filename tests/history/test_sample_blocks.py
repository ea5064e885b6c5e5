"""Samples packed in blocks (history.sample_blocks, history.sample_table): what goes in reads
back equal, on SQLite files and a real PostgreSQL server, however it was written."""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy import text as sa_text

from stripewise.history import sample_blocks as codec
from stripewise.history.database import Database, DatabaseError, open_database, path_to_url
from stripewise.history.keyed_runs import KeyedRun
from stripewise.history.models import sample_blocks
from stripewise.history.run_row import RunRow, new_run_key, write_run
from stripewise.history.sample_table import BLOCK_MAX, PILE, SMALL_BLOCK
from stripewise.history.spool import Spool
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.run import RunStatus
from stripewise.system.hostinfo import HostInfo

HOST = HostInfo("bench-01", "0123456789abcdef0123456789abcdef")
PHASES = ("seq_write", "seq_read", "random_read")


def _helper_like(seq: int) -> SampleRow:
    """A sample as the helper sends them: rates rounded as sampling.py rounds them, t_s to ms,
    an ETA that appears late, a busy % some samples lack."""
    wave = 1 + 0.2 * math.sin(seq / 5)
    rate = round(412.0 * wave + (seq % 7) * 0.137, 3)
    data: dict[str, float | None] = {
        "engine_read_mb_s": rate,
        "engine_write_mb_s": 0.0,
        "engine_read_iops": round(rate * 256, 1),
        "engine_write_iops": 0.0,
        "progress": round(seq / 900, 4),
        "disks.nvme0n1.read_mb_s": round(rate / 2 + 0.001 * (seq % 3), 3),
        "disks.nvme0n1.write_mb_s": 0.0,
        "cpu.iowait": round(30 + (seq % 11) * 0.3, 1),
        "cpu.idle": round(60 - (seq % 11) * 0.3, 1),
    }
    if seq % 4:
        data["disks.nvme0n1.busy_pct"] = round(90 + (seq % 10) * 0.7, 1)
    if seq > 40:
        data["eta_s"] = round((900 - seq) / 10, 1)
    phase = PHASES[seq * len(PHASES) // 900]
    return SampleRow(seq, round(seq * 0.1 + 0.0004 * (seq % 3), 3), phase, seq // 450, data)


@pytest.fixture
def db(history_db: Database) -> Database:
    return history_db


def _new_run(db: Database, store: HistoryStore) -> int:
    host = store.ensure_host(HOST)
    return store.create_run(host, name="r", target="/srv", engine="builtin", engine_version="1")


def _blocks(db: Database, run_id: int) -> list[tuple[str, int, int, int, int]]:
    columns = sample_blocks.c
    with db.engine.connect() as conn:
        return [
            tuple(row)  # type: ignore[misc]
            for row in conn.execute(
                select(
                    columns.phase,
                    columns.repetition,
                    columns.first_seq,
                    columns.last_seq,
                    columns.sample_count,
                )
                .where(columns.run_id == run_id)
                .order_by(columns.first_seq)
            )
        ]


# -- the codec ------------------------------------------------------------------------------


def test_every_series_reads_back_equal_with_nulls_gaps_and_odd_names() -> None:
    data: list[dict[str, Any]] = [
        {"a": 1.5, "": 2.0, "disks.sd b.read_mb_s": None, "série ✓": 1 / 3, "n": 3},
        {"série ✓": -0.001, "a": float("nan"), "big": 1.7976931348623157e308},
        {},
        {"a": float("inf"), "tiny": 5e-324, "n": -(2**52)},
        {"a": 2.25, "": 2.0, "disks.sd b.read_mb_s": 7.125, "série ✓": 0.1 + 0.2, "n": 4},
    ]
    seqs = [3, 4, 10, 11, 2**40]
    times = [0.1, 7199.999999999123, 7200.001, 1e-9, 86400.5]
    block = codec.decode(codec.encode(seqs, times, data))
    assert block.seqs == seqs
    assert block.times == times, "t_s exactly: a long run's late samples keep their ms"
    expected = [
        {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in d.items()}
        for d in data
    ]
    assert block.data == expected, "absent stays absent, null stays null, NaN/inf become null"
    assert all(type(v) is float for d in block.data for v in d.values() if v is not None)


_figure = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-1e6, 1e6).map(lambda v: round(v, 3)),  # as the helper rounds
    st.integers(-(2**53), 2**53),
)
_samples = st.lists(
    st.tuples(
        st.integers(0, 2**62),
        st.floats(allow_nan=False, allow_infinity=False),
        st.dictionaries(st.sampled_from(["a", "b.c", "", "é ✓", "d"]), _figure, max_size=5),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(_samples)
def test_any_samples_read_back_equal(samples: list[tuple[int, float, dict[str, Any]]]) -> None:
    seqs = [s for s, _t, _d in samples]
    times = [t for _s, t, _d in samples]
    data = [d for _s, _t, d in samples]
    block = codec.decode(codec.encode(seqs, times, data))
    assert block.seqs == seqs
    assert block.times == times
    assert block.data == [
        {k: None if v is None or not math.isfinite(v) else float(v) for k, v in d.items()}
        for d in data
    ]


def test_only_the_series_asked_for_are_unpacked() -> None:
    rows = [_helper_like(seq) for seq in range(30)]
    payload = codec.encode([r.seq for r in rows], [r.t_s for r in rows], [r.data for r in rows])
    block = codec.decode(payload, ("engine_read_mb_s", "eta_s", "missing"))
    assert block.data == [
        {k: v for k, v in r.data.items() if k in ("engine_read_mb_s", "eta_s")} for r in rows
    ]
    assert codec.decode_seqs(payload) == list(range(30))


def test_helper_samples_pack_into_a_few_bytes_each() -> None:
    rows = [_helper_like(seq) for seq in range(450)]
    (block,) = codec.pack([(r.seq, r.t_s, "seq_read", 0, r.data) for r in rows], BLOCK_MAX)
    assert (block.first_seq, block.last_seq, block.sample_count) == (0, 449, 450)
    # ten figures a sample, 427 bytes a sample as JSON rows
    assert len(block.payload) / 450 < 25


def test_pack_starts_a_block_at_each_phase_repetition_and_size_limit() -> None:
    rows = [(s, s * 0.1, "a" if s < 5 or s >= 8 else "b", 0 if s < 9 else 1, {"x": 1.0})
            for s in range(12)]  # fmt: skip
    blocks = codec.pack(rows, max_samples=2)
    assert [(b.phase, b.repetition, b.first_seq, b.last_seq) for b in blocks] == [
        ("a", 0, 0, 1), ("a", 0, 2, 3), ("a", 0, 4, 4), ("b", 0, 5, 6), ("b", 0, 7, 7),
        ("a", 0, 8, 8), ("a", 1, 9, 10), ("a", 1, 11, 11),
    ]  # fmt: skip


def test_a_damaged_or_newer_block_is_one_clear_error() -> None:
    payload = codec.encode([1, 2], [0.5, 1.0], [{"x": 1.0}, {"x": 2.0}])
    with pytest.raises(codec.BlockFormatError, match="format 2, this version reads 1"):
        codec.decode(bytes([2]) + payload[1:])
    with pytest.raises(codec.BlockFormatError, match="damaged"):
        codec.decode(payload[:-6])
    with pytest.raises(ValueError, match=r"'x'.*numbers or null"):
        codec.encode([1], [0.0], [{"x": "fast"}])  # type: ignore[dict-item]


# -- the store ------------------------------------------------------------------------------


def test_live_batches_then_finish_read_back_equal_in_few_blocks(db: Database) -> None:
    store = HistoryStore(db)
    run_id = _new_run(db, store)
    rows = [_helper_like(seq) for seq in range(900)]
    for start in range(0, 900, 5):  # the recorder's half-second batches at 10 Hz
        store.add_samples(run_id, rows[start : start + 5])
    live = _blocks(db, run_id)
    per_group: dict[tuple[str, int], int] = {}
    for phase, repetition, _first, _last, count in live:
        if count < SMALL_BLOCK:
            per_group[phase, repetition] = per_group.get((phase, repetition), 0) + 1
    assert max(per_group.values()) < PILE, "small blocks are merged while the run goes on"
    assert len(live) <= 900 // 5 // 3, "a third of the batches' blocks at most"
    assert store.samples(run_id) == rows

    store.finish_run(run_id, RunStatus.COMPLETE)
    # one block per phase and repetition once finished
    assert [b[:2] for b in _blocks(db, run_id)] == [
        ("seq_write", 0), ("seq_read", 0), ("seq_read", 1), ("random_read", 1),
    ]  # fmt: skip
    assert store.samples(run_id) == rows
    assert store.get_run(run_id).sample_count == 900
    assert store.engine_samples(run_id)[100] == (
        rows[100].t_s,
        rows[100].phase,
        rows[100].repetition,
        {"engine_read_mb_s": rows[100].data["engine_read_mb_s"], "engine_write_mb_s": 0.0},
    )


def test_a_resent_sample_is_stored_once(db: Database) -> None:
    store = HistoryStore(db)
    run_id = _new_run(db, store)
    first = [SampleRow(s, s * 0.5, "seq_read", 0, {"x": float(s)}) for s in range(10)]
    assert store.add_samples(run_id, first) == 10
    again = [SampleRow(s, s * 0.5, "seq_read", 0, {"x": -1.0}) for s in (3, 9, 10, 10, 11)]
    assert store.add_samples(run_id, again) == 2  # a lost reply: sent again, with the next
    assert store.add_samples(run_id, first[:4]) == 0
    stored = store.samples(run_id)
    assert [s.seq for s in stored] == list(range(12))
    assert [s.data["x"] for s in stored[:10]] == [float(s) for s in range(10)], "first kept"
    assert {s.seq for s in stored} == set(range(12))
    assert store.get_run(run_id).sample_count == 12


def test_engine_samples_leave_a_missing_rate_none_and_unknown_runs_raise(db: Database) -> None:
    store = HistoryStore(db)
    run_id = _new_run(db, store)
    store.add_samples(
        run_id,
        [
            SampleRow(0, 0.0, "seq_read", 0, {"engine_read_mb_s": 5.0, "cpu.idle": 3.0}),
            SampleRow(1, 0.5, "seq_read", 0, {"engine_write_mb_s": None}),
        ],
    )
    assert store.engine_samples(run_id) == [
        (0.0, "seq_read", 0, {"engine_read_mb_s": 5.0, "engine_write_mb_s": None}),
        (0.5, "seq_read", 0, {"engine_read_mb_s": None, "engine_write_mb_s": None}),
    ]
    empty = _new_run(db, store)
    assert store.samples(empty) == [] and store.engine_samples(empty) == []
    assert store.get_run(empty).sample_count == 0

    def finish(run_id: int) -> None:
        store.finish_run(run_id, RunStatus.COMPLETE)

    for call in (store.samples, store.engine_samples, finish):
        with pytest.raises(DatabaseError, match="run 999"):
            call(999)


def test_a_block_this_version_cannot_read_names_the_run(db: Database) -> None:
    store = HistoryStore(db)
    run_id = _new_run(db, store)
    store.add_samples(run_id, [SampleRow(0, 0.0, "seq_read", 0, {"x": 1.0})])
    with db.engine.begin() as conn:
        conn.execute(sample_blocks.update().values(payload=b"\x07garbage"))
    with pytest.raises(DatabaseError, match=f"samples of run {run_id}: sample block format 7"):
        store.samples(run_id)


def test_a_spool_sync_after_a_lost_reply_stores_each_sample_once(
    db: Database, tmp_path: Path
) -> None:
    """The server took a batch but the reply was lost: the recorder spooled it, and the rest
    of the run; the sync sends only what the server lacks, and compacts the run."""
    key = new_run_key()
    run = KeyedRun(HOST, RunRow(
        key=key, name="lost reply", target="/srv", engine="builtin",
        engine_version="1", started_at=datetime(2026, 12, 1, tzinfo=UTC),
    ))  # fmt: skip
    rows = [_helper_like(seq) for seq in range(200)]
    store = HistoryStore(db)
    run_id = write_run(db, run.host, run.row)
    for start in range(0, 60, 5):
        store.add_samples(run_id, rows[start : start + 5])
    spool = Spool(db.url, tmp_path / "spool")
    spool.keep_run(run)
    spool.keep_samples(key, rows[50:])  # seqs 50..59 the server already has
    spool.keep_end(key, [], RunStatus.COMPLETE)
    outcome = spool.sync(db)
    assert outcome.synced == {key: run_id} and outcome.samples_synced == 140
    assert store.samples(run_id) == rows
    assert store.get_run(run_id).summary.status is RunStatus.COMPLETE
    assert len(_blocks(db, run_id)) == 1, "compacted: its one phase and repetition, one block"
    assert spool.sync(db).synced == {}, "nothing left to send"


def _used_bytes(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        used = conn.execute(
            "SELECT (page_count - freelist_count) * page_size FROM pragma_page_count(), "
            "pragma_freelist_count(), pragma_page_size()"
        ).fetchone()[0]
    conn.close()
    return int(used)


def test_sqlite_bytes_per_sample_of_finished_helper_runs(tmp_path: Path) -> None:
    """What runs written live add to the file (blocks, their index, the run rows), per
    sample; the empty schema's pages are left out."""
    path = tmp_path / "size.db"
    with open_database(path_to_url(path)) as db:
        store = HistoryStore(db)
        _new_run(db, store)
        empty = _used_bytes(path)
        for _ in range(5):
            run_id = _new_run(db, store)
            rows = [_helper_like(seq) for seq in range(900)]
            for start in range(0, 900, 5):
                store.add_samples(run_id, rows[start : start + 5])
            store.finish_run(run_id, RunStatus.COMPLETE)
        grown = _used_bytes(path) - empty
    assert grown / (5 * 900) < 40, "was 427 bytes a sample as JSON rows"


def test_two_merges_of_one_run_at_once_keep_each_sample_once(postgres_url: str) -> None:
    """The second merge waits for the run's turn the first holds, then finds its blocks
    merged: it takes nothing rather than writing them again (PostgreSQL: the run's row lock,
    read committed)."""
    from stripewise.history import sample_table

    with open_database(postgres_url) as db:
        store = HistoryStore(db)
        run_id = _new_run(db, store)
        rows = [_helper_like(seq) for seq in range(200)]
        with db.engine.begin() as conn:  # 40 small blocks, none merged yet
            sample_table._insert_blocks(
                conn, run_id, codec.pack([(r.seq, r.t_s, r.phase, r.repetition, r.data)
                                          for r in rows], 5)
            )  # fmt: skip
        taken: list[int] = []
        with db.engine.connect() as first:
            first.begin()
            assert sample_table.lock_run(first, run_id)
            taken.append(sample_table.merge(first, run_id))
            second = threading.Thread(
                target=lambda: taken.append(_merge_in_own_transaction(db, run_id))
            )
            second.start()
            _wait_for_a_lock_wait(db)
            first.commit()
        second.join(timeout=30)
        assert taken == [40, 0]
        assert store.samples(run_id) == rows
        assert [b[4] for b in _blocks(db, run_id)] == [200]


def _merge_in_own_transaction(db: Database, run_id: int) -> int:
    from stripewise.history import sample_table

    with db.engine.begin() as conn:
        assert sample_table.lock_run(conn, run_id)
        return sample_table.merge(conn, run_id)


def _wait_for_a_lock_wait(db: Database) -> None:
    waiting = sa_text(
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE wait_event_type = 'Lock' AND datname = current_database()"
    )
    for _ in range(300):
        with db.engine.connect() as conn:
            if conn.execute(waiting).scalar_one():
                return
        time.sleep(0.05)
    raise AssertionError("the second merge never waited for the first")

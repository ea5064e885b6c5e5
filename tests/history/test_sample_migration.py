"""Migration 0011 on real databases: rows of `samples` as 0010 stored them become blocks that
read back equal, and a downgrade gives the rows back, on SQLite and on PostgreSQL."""

from __future__ import annotations

import math
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command

from stripewise.history.database import HEAD_REVISION, alembic_config, open_database
from stripewise.history.store import HistoryStore, SampleRow

# (run id, seq, t_s, phase, repetition, data) in the order 0010 inserted them (its ids)
OldRow = tuple[int, int, float, str, int, dict[str, Any]]

samples = sa.table(
    "samples",
    sa.column("id", sa.Integer()),
    sa.column("run_id", sa.Integer()),
    sa.column("seq", sa.Integer()),
    sa.column("t_s", sa.Float()),
    sa.column("phase", sa.String()),
    sa.column("repetition", sa.Integer()),
    sa.column("data", sa.JSON()),
)


def _old_rows() -> list[OldRow]:
    rows: list[OldRow] = []
    for seq in range(5000):  # one phase longer than a block (4,096 samples)
        data: dict[str, Any] = {
            "engine_read_mb_s": round(300 + 20 * math.sin(seq / 9), 3),
            "cpu.iowait": round(seq % 13 * 1.1, 1),
        }
        if seq % 5 == 0:
            data["disks.sdb.busy_pct"] = None
        rows.append((1, seq, round(seq * 0.1, 3), "seq_read", 0, data))
    rows.append((1, 7, 0.7, "seq_read", 0, {"engine_read_mb_s": -1.0}))  # a repeat kept by 0010
    for seq in range(40):  # phases and repetitions taking turns, odd names, full-precision t_s
        phase = ("seq_write", "mixed")[seq // 10 % 2]
        data = {"écrit ✓": seq / 7, "": seq, "x y.z": None} if seq % 3 else {"text": "fast"}
        rows.append((2, seq, seq * 0.1 + 1e-7 * seq, phase, seq // 20, data))
    return rows


def _read_back(data: dict[str, Any]) -> dict[str, float | None]:
    """What 0011 keeps of a sample: numbers as floats, anything else null."""
    return {k: float(v) if isinstance(v, int | float) else None for k, v in data.items()}


def _expected(rows: list[OldRow], run_id: int) -> list[SampleRow]:
    mine = sorted((r for r in rows if r[0] == run_id), key=lambda r: r[1])  # stable: by id
    return [SampleRow(seq, t_s, p, rep, _read_back(d)) for _run, seq, t_s, p, rep, d in mine]


@pytest.fixture
def url(history_url: str) -> str:
    return history_url


def _fill_0010(url: str, rows: list[OldRow]) -> None:
    command.upgrade(alembic_config(url), "0010")
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO hosts (id, hostname, machine_id, kernel, cpu_model, cpu_count, "
                    "ram_bytes, first_seen, last_seen) VALUES (1, 'h', 'm', 'k', 'c', 2, 1, "
                    ":now, :now)"
                ),
                {"now": "2026-01-01 00:00:00"},
            )
            for run_id in (1, 2, 3):
                conn.execute(
                    sa.text(
                        "INSERT INTO runs (id, uuid, host_id, name, status, engine, "
                        "engine_version, target, started_at, spec, context, tags, notes, "
                        "source, baseline) VALUES (:id, :uuid, 1, 'r', 'complete', 'builtin', "
                        "'1', '/srv', :now, '{}', '{}', '[]', '', 'measured', false)"
                    ),
                    {"id": run_id, "uuid": f"u{run_id}", "now": "2026-01-01 00:00:00"},
                )
            conn.execute(
                samples.insert(),
                [
                    {"run_id": r, "seq": s, "t_s": t, "phase": p, "repetition": rep, "data": d}
                    for r, s, t, p, rep, d in rows
                ],
            )
    finally:
        engine.dispose()


def _rows_of_0010(url: str) -> list[OldRow]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            found = conn.execute(
                sa.select(
                    samples.c.run_id,
                    samples.c.seq,
                    samples.c.t_s,
                    samples.c.phase,
                    samples.c.repetition,
                    samples.c.data,
                ).order_by(samples.c.run_id, samples.c.id)
            )
            return [tuple(row) for row in found]  # type: ignore[misc]
    finally:
        engine.dispose()


def test_0011_packs_old_rows_that_read_back_equal_and_downgrade_restores_them(url: str) -> None:
    rows = _old_rows()
    _fill_0010(url, rows)

    with open_database(url) as db:  # as a user's next start upgrades it
        assert db.schema_revision == HEAD_REVISION  # 0011 and every later one
        store = HistoryStore(db)
        for run_id in (1, 2):
            assert store.samples(run_id) == _expected(rows, run_id), run_id
            assert store.get_run(run_id).sample_count == len(_expected(rows, run_id))
        assert store.samples(3) == [] and store.get_run(3).sample_count == 0
        later = _expected(rows, 1)[100]
        assert store.engine_samples(1)[100] == (
            later.t_s,
            "seq_read",
            0,
            {"engine_read_mb_s": later.data["engine_read_mb_s"], "engine_write_mb_s": None},
        )
        with db.engine.connect() as conn:
            blocks = conn.execute(
                sa.text(
                    "SELECT run_id, phase, repetition, sample_count FROM sample_blocks "
                    "ORDER BY run_id, first_seq, id"
                )
            ).all()
            assert not db.engine.dialect.has_table(conn, "samples")
    assert [tuple(b) for b in blocks] == [
        (1, "seq_read", 0, 4096), (1, "seq_read", 0, 905),
        (2, "seq_write", 0, 10), (2, "mixed", 0, 10), (2, "seq_write", 1, 10), (2, "mixed", 1, 10),
    ]  # fmt: skip

    command.downgrade(alembic_config(url), "0010")
    back = _rows_of_0010(url)
    as_upgraded = sorted(
        ((r, s, t, p, rep, _read_back(d)) for r, s, t, p, rep, d in rows),
        key=lambda row: (row[0], row[1]),
    )
    assert back == as_upgraded, "one row per sample again, in seq order, equal figures"

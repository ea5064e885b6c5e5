"""Samples packed in blocks: table `sample_blocks` replaces `samples` (one row per sample).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02

A row of `samples` held one sample as a JSON document (427 bytes in SQLite); a block holds
consecutive samples of one run, phase and repetition column-wise, zlib-compressed
(history.sample_blocks, docs/history.md "How samples are stored"). Each run's rows are read in
their order (seq, then id) and packed, up to 4,096 samples a block; the values read back
equal. A figure that is not a number (no release wrote one) is kept as null. Downgrade
unpacks the blocks into rows again, one per sample, in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from stripewise.history.sample_blocks import decode, pack

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BLOCK_MAX = 4096  # as history.sample_table merges them

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
sample_blocks = sa.table(
    "sample_blocks",
    sa.column("id", sa.Integer()),
    sa.column("run_id", sa.Integer()),
    sa.column("phase", sa.String()),
    sa.column("repetition", sa.Integer()),
    sa.column("first_seq", sa.Integer()),
    sa.column("last_seq", sa.Integer()),
    sa.column("sample_count", sa.Integer()),
    sa.column("payload", sa.LargeBinary()),
)


def upgrade() -> None:
    op.create_table(
        "sample_blocks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(64), nullable=False),
        sa.Column("repetition", sa.Integer(), nullable=False),
        sa.Column("first_seq", sa.Integer(), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.Column("sample_count", sa.Integer(), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_sample_blocks"),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_sample_blocks_run_id_runs", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_sample_blocks_run_id_first_seq", "sample_blocks", ["run_id", "first_seq"])
    if not op.get_context().as_sql:  # SQL rendered for a new database has no rows to move
        _pack_rows()
    op.drop_index("ix_samples_run_id_seq", table_name="samples")
    op.drop_table("samples")


def downgrade() -> None:
    op.create_table(
        "samples",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("t_s", sa.Float(), nullable=False),
        sa.Column("phase", sa.String(64), nullable=False),
        sa.Column("repetition", sa.Integer(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_samples"),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_samples_run_id_runs", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_samples_run_id_seq", "samples", ["run_id", "seq"])
    if not op.get_context().as_sql:
        _unpack_blocks()
    op.drop_index("ix_sample_blocks_run_id_first_seq", table_name="sample_blocks")
    op.drop_table("sample_blocks")


def _run_ids(table: Any) -> list[int]:
    found = op.get_bind().execute(sa.select(table.c.run_id).distinct().order_by(table.c.run_id))
    return [int(run_id) for (run_id,) in found]


def _pack_rows() -> None:
    """Run by run, so memory holds one run's samples at a time."""
    bind = op.get_bind()
    for run_id in _run_ids(samples):
        found = bind.execute(
            sa.select(
                samples.c.seq, samples.c.t_s, samples.c.phase, samples.c.repetition, samples.c.data
            )
            .where(samples.c.run_id == run_id)
            .order_by(samples.c.seq, samples.c.id)
        )
        rows = [(seq, t_s, phase, rep, _figures(data)) for seq, t_s, phase, rep, data in found]
        blocks = [block.row(run_id) for block in pack(rows, BLOCK_MAX)]
        bind.execute(sample_blocks.insert(), blocks)


def _figures(data: Any) -> dict[str, float | None]:
    if not isinstance(data, Mapping):
        return {}
    return {str(k): float(v) if isinstance(v, int | float) else None for k, v in data.items()}


def _unpack_blocks() -> None:
    bind = op.get_bind()
    for run_id in _run_ids(sample_blocks):
        found = bind.execute(
            sa.select(sample_blocks.c.phase, sample_blocks.c.repetition, sample_blocks.c.payload)
            .where(sample_blocks.c.run_id == run_id)
            .order_by(sample_blocks.c.first_seq, sample_blocks.c.id)
        )
        rows: list[dict[str, Any]] = []
        for phase, repetition, payload in found:
            block = decode(bytes(payload))
            rows.extend(
                {
                    "run_id": run_id,
                    "seq": seq,
                    "t_s": t_s,
                    "phase": phase,
                    "repetition": repetition,
                    "data": data,
                }
                for seq, t_s, data in zip(block.seqs, block.times, block.data, strict=True)
            )
        rows.sort(key=lambda row: int(row["seq"]))  # stable: blocks were read in their order
        bind.execute(samples.insert(), rows)

"""Experiments: a sweep of one or two parameters kept with its design and result
(docs/experiments.md).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28

An experiment's points are ordinary runs tagged `experiment:<id>`; this table keeps what ties
them together: the design (protocol.experiment design_to_json), the result once it ends
(result_to_json, the `experiment_result` event's keys), the varied names as text for listing
and comparing, and the trash mark runs have. The host that ran it is a `hosts` row, as for a
run. Nothing older refers to it, so no row is rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STATUSES = "status IN ('running', 'complete', 'cancelled', 'failed', 'aborted')"


def upgrade() -> None:
    op.create_table(
        "experiments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("parameters", sa.String(255), nullable=False),
        sa.Column("design", sa.JSON(), nullable=False),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_experiments"),
        sa.ForeignKeyConstraint(["host_id"], ["hosts.id"], name="fk_experiments_host_id_hosts"),
        sa.CheckConstraint(STATUSES, name="ck_experiments_status"),
    )
    op.create_index("ix_experiments_created_at", "experiments", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_experiments_created_at", table_name="experiments")
    op.drop_table("experiments")

"""Drop tuning_snapshots and array_plans: nothing ever read or wrote them.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_table("array_plans")
    op.drop_index("ix_tuning_snapshots_run_id", table_name="tuning_snapshots")
    op.drop_table("tuning_snapshots")


def downgrade() -> None:
    """The two tables as 0002 made them, empty."""
    op.create_table(
        "tuning_snapshots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("taken_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("label", sa.String(255), nullable=False),
        sa.Column("values", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_tuning_snapshots"),
        sa.ForeignKeyConstraint(
            ["host_id"], ["hosts.id"], name="fk_tuning_snapshots_host_id_hosts"
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_tuning_snapshots_run_id_runs", ondelete="SET NULL"
        ),
    )
    op.create_index("ix_tuning_snapshots_run_id", "tuning_snapshots", ["run_id"])
    op.create_table(
        "array_plans",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("host_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("format_version", sa.Integer(), nullable=False),
        sa.Column("plan", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_array_plans"),
        sa.ForeignKeyConstraint(
            ["host_id"], ["hosts.id"], name="fk_array_plans_host_id_hosts", ondelete="SET NULL"
        ),
    )

"""Hosts, runs, their samples and results.

Revision ID: 0001
Revises:
Create Date: 2025-01-01

Written by hand for SQLite and PostgreSQL alike: plain `op.create_table`, constraints named
after `models.NAMING_CONVENTION` so later batch migrations can find them.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STATUSES = "status IN ('running', 'complete', 'cancelled', 'failed', 'aborted')"
SOURCES = "source IN ('measured', 'imported')"


def _utc() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "hosts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("hostname", sa.String(255), nullable=False),
        sa.Column("machine_id", sa.String(255), nullable=False),
        sa.Column("kernel", sa.String(255), nullable=False),
        sa.Column("cpu_model", sa.String(255), nullable=False),
        sa.Column("cpu_count", sa.Integer(), nullable=False),
        sa.Column("ram_bytes", sa.BigInteger(), nullable=False),
        sa.Column("first_seen", _utc(), nullable=False),
        sa.Column("last_seen", _utc(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_hosts"),
        sa.UniqueConstraint("machine_id", name="uq_hosts_machine_id"),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uuid", sa.String(36), nullable=False),
        sa.Column("host_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("engine", sa.String(64), nullable=False),
        sa.Column("engine_version", sa.String(64), nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("started_at", _utc(), nullable=False),
        sa.Column("finished_at", _utc(), nullable=True),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("context", sa.JSON(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("baseline", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
        sa.ForeignKeyConstraint(["host_id"], ["hosts.id"], name="fk_runs_host_id_hosts"),
        sa.UniqueConstraint("uuid", name="uq_runs_uuid"),
        sa.CheckConstraint(STATUSES, name="ck_runs_status"),
        sa.CheckConstraint(SOURCES, name="ck_runs_source"),
    )
    op.create_index("ix_runs_started_at", "runs", ["started_at"])
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
    op.create_table(
        "results",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(64), nullable=False),
        sa.Column("metric", sa.String(64), nullable=False),
        sa.Column("unit", sa.String(32), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("min_value", sa.Float(), nullable=True),
        sa.Column("max_value", sa.Float(), nullable=True),
        sa.Column("repetitions", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_results"),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_results_run_id_runs", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_results_run_id", "results", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_results_run_id", table_name="results")
    op.drop_table("results")
    op.drop_index("ix_samples_run_id_seq", table_name="samples")
    op.drop_table("samples")
    op.drop_index("ix_runs_started_at", table_name="runs")
    op.drop_table("runs")
    op.drop_table("hosts")

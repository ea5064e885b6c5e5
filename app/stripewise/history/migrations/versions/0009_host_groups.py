"""Host groups: named lists of benchmark hosts, kept in order (docs/hosts.md).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24

Each host is stored as its parts (kind, host, port, user), never as text to parse again, and
nothing secret: ssh hosts are reached with the admin's own keys.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "host_groups",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_host_groups"),
        sa.UniqueConstraint("name", name="uq_host_groups_name"),
    )
    op.create_table(
        "host_group_hosts",
        sa.Column("group_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("port", sa.Integer(), nullable=False),
        sa.Column("user", sa.String(32), nullable=True),
        sa.PrimaryKeyConstraint("group_id", "position", name="pk_host_group_hosts"),
        sa.ForeignKeyConstraint(
            ["group_id"],
            ["host_groups.id"],
            name="fk_host_group_hosts_group_id_host_groups",
            ondelete="CASCADE",
        ),
        sa.CheckConstraint("kind IN ('fio', 'ssh')", name="ck_host_group_hosts_kind"),
    )


def downgrade() -> None:
    op.drop_table("host_group_hosts")
    op.drop_table("host_groups")

"""The admin's own names for controller slots ("Bay 12"), per host.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "slot_labels",
        sa.Column("host_key", sa.String(255), nullable=False),
        sa.Column("slot_key", sa.String(512), nullable=False),
        sa.Column("label", sa.String(255), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("host_key", "slot_key", name="pk_slot_labels"),
    )


def downgrade() -> None:
    op.drop_table("slot_labels")

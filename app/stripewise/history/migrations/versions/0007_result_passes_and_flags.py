"""Each result keeps its repetitions' figures (a verdict's evidence), the guards it tripped,
and an import's own unit for display.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # NULL for results filed before: their passes were not kept, and no verdict is made
    # from them (docs/history.md)
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("passes", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("flags", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("source_unit", sa.String(32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.drop_column("source_unit")
        batch.drop_column("flags")
        batch.drop_column("passes")

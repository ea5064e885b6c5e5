"""Group runs: a run on several hosts at once is a parent run (the totals) with one child
run per host (docs/protocol.md, "Group runs").

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24

`parent_run_id` ties a host's run to its group run (deleted with it); `host_label` names the
host as the user wrote it (`HOST:PORT`, `ssh://...`). Both NULL for every other run, so older
runs need no rewriting.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("parent_run_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("host_label", sa.String(255), nullable=True))
        batch.create_foreign_key(
            "fk_runs_parent_run_id_runs", "runs", ["parent_run_id"], ["id"], ondelete="CASCADE"
        )
        batch.create_index("ix_runs_parent_run_id", ["parent_run_id"])


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_index("ix_runs_parent_run_id")
        batch.drop_constraint("fk_runs_parent_run_id_runs", type_="foreignkey")
        batch.drop_column("host_label")
        batch.drop_column("parent_run_id")

"""Lists that do not grow with the history: indexes for the listing and its filters, and each
run's tags as rows of their own so that a tag is looked up by index.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28

The listing reads a page at a time, newest first, by keyset (`(started_at, id) < (?, ?)`,
history.run_pages): `ix_runs_listed` holds the listed runs (not in the trash, not a group
run's host) in that order, and one index per filter the History page and `history list`
offer (host, target, engine) leads with the filter's column in the same order (a target's and
an engine's lowered: filters ignore case); a date range
is a range of `ix_runs_listed`. `ix_runs_running` finds the runs still marked running, which
every `history list` checks first. `run_tags` mirrors the JSON `runs.tags` (kept as the one
written) through triggers, so no writer changes and none can forget it; a later migration that
rebuilds `runs` (a SQLite batch) must create its triggers again; a tag is looked up by its
lowered text. Nothing is rewritten: the
tags of the runs already stored are copied once.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LISTED = "deleted_at IS NULL AND parent_run_id IS NULL"
TRASHED = "deleted_at IS NOT NULL"
RUNNING = "status = 'running'"
HOST_RUNS = "parent_run_id IS NOT NULL"
# index name -> its leading columns before (started_at, id)
# (an expression on lower(): a target, an engine and a tag match whatever their case, as a
# hostname does, through `hosts` itself, small; run_pages compares lower() on both sides)
FILTERS: dict[str, list[str | sa.TextClause]] = {
    "ix_runs_listed": [],
    "ix_runs_host_listed": ["host_id"],
    "ix_runs_target_listed": [sa.text("lower(target)")],
    "ix_runs_engine_listed": [sa.text("lower(engine)")],
}

# tags that are not a JSON array (never written so, but a trigger must not fail a write) give none
_SQLITE_ARRAY = "CASE WHEN json_valid({0}) AND json_type({0}) = 'array' THEN {0} ELSE '[]' END"
_SQLITE_TAGS = (
    "INSERT INTO run_tags (run_id, tag) SELECT DISTINCT NEW.id, value FROM "
    f"json_each({_SQLITE_ARRAY.format('NEW.tags')}) WHERE value IS NOT NULL"
)
SQLITE_TRIGGERS = (
    f"CREATE TRIGGER run_tags_insert AFTER INSERT ON runs BEGIN {_SQLITE_TAGS}; END",
    "CREATE TRIGGER run_tags_update AFTER UPDATE OF tags ON runs BEGIN "
    f"DELETE FROM run_tags WHERE run_id = NEW.id; {_SQLITE_TAGS}; END",
)
POSTGRESQL_TRIGGERS = (
    "CREATE FUNCTION run_tags_copy() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "DELETE FROM run_tags WHERE run_id = NEW.id; "
    "IF json_typeof(NEW.tags) = 'array' THEN "
    "INSERT INTO run_tags (run_id, tag) SELECT DISTINCT NEW.id, tag "
    "FROM json_array_elements_text(NEW.tags) AS tag WHERE tag IS NOT NULL; "
    "END IF; RETURN NULL; END $$",
    "CREATE TRIGGER run_tags_insert AFTER INSERT ON runs FOR EACH ROW "
    "EXECUTE FUNCTION run_tags_copy()",
    "CREATE TRIGGER run_tags_update AFTER UPDATE OF tags ON runs FOR EACH ROW "
    "EXECUTE FUNCTION run_tags_copy()",
)


def upgrade() -> None:
    # a group run's host runs only: whole, SQLite chose it for `parent_run_id IS NULL` (every
    # listed run) over the listing's order, and sorted the whole history for each page
    op.drop_index("ix_runs_parent_run_id", table_name="runs")
    _partial("ix_runs_parent_run_id", ["parent_run_id"], HOST_RUNS)
    _partial("ix_runs_trashed", ["started_at", "id"], TRASHED)
    for name, leading in FILTERS.items():
        _partial(name, [*leading, "started_at", "id"], LISTED)
    _partial("ix_runs_running", ["host_id"], RUNNING)
    op.create_table(
        "run_tags",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("tag", sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "tag", name="pk_run_tags"),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_run_tags_run_id_runs", ondelete="CASCADE"
        ),
    )
    op.create_index("ix_run_tags_tag", "run_tags", [sa.text("lower(tag)"), "run_id"])
    if op.get_context().dialect.name == "postgresql":
        for statement in POSTGRESQL_TRIGGERS:
            op.execute(statement)
        op.execute(
            "INSERT INTO run_tags (run_id, tag) SELECT DISTINCT runs.id, tag FROM runs, "
            "json_array_elements_text(CASE WHEN json_typeof(runs.tags) = 'array' "
            "THEN runs.tags ELSE '[]'::json END) AS tag WHERE tag IS NOT NULL"
        )
    else:
        for statement in SQLITE_TRIGGERS:
            op.execute(statement)
        op.execute(
            "INSERT INTO run_tags (run_id, tag) SELECT DISTINCT runs.id, tags.value FROM runs, "
            f"json_each({_SQLITE_ARRAY.format('runs.tags')}) AS tags WHERE tags.value IS NOT NULL"
        )


def downgrade() -> None:
    postgresql = op.get_context().dialect.name == "postgresql"
    for trigger in ("run_tags_update", "run_tags_insert"):
        op.execute(f"DROP TRIGGER {trigger}{' ON runs' if postgresql else ''}")
    if postgresql:
        op.execute("DROP FUNCTION run_tags_copy()")
    op.drop_index("ix_run_tags_tag", table_name="run_tags")
    op.drop_table("run_tags")
    op.drop_index("ix_runs_running", table_name="runs")
    for name in reversed(FILTERS):
        op.drop_index(name, table_name="runs")
    op.drop_index("ix_runs_trashed", table_name="runs")
    op.drop_index("ix_runs_parent_run_id", table_name="runs")
    op.create_index("ix_runs_parent_run_id", "runs", ["parent_run_id"])


def _partial(name: str, columns: list[str | sa.TextClause], where: str) -> None:
    op.create_index(
        name, "runs", columns, sqlite_where=sa.text(where), postgresql_where=sa.text(where)
    )

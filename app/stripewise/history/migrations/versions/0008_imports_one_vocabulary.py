"""Imported runs in the vocabulary of measured runs: (phase, quantity, unit), SI units.

Imports filed before stored each tool's own names: bonnie++'s `seq_write_block_kBps` in KiB/s,
fio's job names as phases, iozone's file-by-record cells. They are converted with the
importers' own mapping (`stripewise.importers.mapping`, docs/importing.md), so an old import
reads exactly as importing its file today: `seq_write throughput` in MB/s, the tool's unit
kept in `source_unit`. A row the mapping does not know is kept as it is, and so is a run
whose engine or spec cannot be read; converted runs get their listing line made again.
Downgrade gives the tools' names and units back (the efficiency figures added are dropped).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from stripewise.importers.mapping import to_tool_names, to_vocabulary
from stripewise.model.run import ResultValue

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Convert = Callable[[str, Mapping[str, Any], Sequence[ResultValue]], list[ResultValue]]

runs = sa.table(
    "runs",
    sa.column("id", sa.Integer()),
    sa.column("engine", sa.String()),
    sa.column("source", sa.String()),
    sa.column("spec", sa.JSON()),
    sa.column("headline", sa.JSON()),
)
results = sa.table(
    "results",
    sa.column("id", sa.Integer()),
    sa.column("run_id", sa.Integer()),
    sa.column("phase", sa.String()),
    sa.column("metric", sa.String()),
    sa.column("unit", sa.String()),
    sa.column("value", sa.Float()),
    sa.column("min_value", sa.Float()),
    sa.column("max_value", sa.Float()),
    sa.column("repetitions", sa.Integer()),
    sa.column("passes", sa.JSON()),
    sa.column("flags", sa.JSON()),
    sa.column("source_unit", sa.String()),
)


def _value(row: Any) -> ResultValue:
    return ResultValue(
        phase=row.phase,
        metric=row.metric,
        unit=row.unit,
        value=row.value,
        min_value=row.min_value,
        max_value=row.max_value,
        repetitions=row.repetitions or 1,
        passes=tuple(row.passes or ()),
        flags=tuple(row.flags or ()),
        source_unit=row.source_unit or "",
    )


def _row(run_id: int, value: ResultValue) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "phase": value.phase[:64],
        "metric": value.metric[:64],
        "unit": value.unit[:32],
        "value": value.value,
        "min_value": value.min_value,
        "max_value": value.max_value,
        "repetitions": value.repetitions,
        "passes": list(value.passes) or None,
        "flags": list(value.flags) or None,
        "source_unit": value.source_unit[:32] or None,
    }


def _convert_imports(convert: Convert) -> None:
    if op.get_context().as_sql:
        return  # SQL rendered for a new database: there are no rows to convert
    bind = op.get_bind()
    imported = bind.execute(
        sa.select(runs.c.id, runs.c.engine, runs.c.spec).where(runs.c.source == "imported")
    ).all()
    for run in imported:
        spec = run.spec if isinstance(run.spec, dict) else {}
        stored = bind.execute(
            sa.select(results).where(results.c.run_id == run.id).order_by(results.c.id)
        ).all()
        before = [_value(row) for row in stored]
        after = convert(str(run.engine or ""), spec, before)
        if after == before:
            continue
        bind.execute(results.delete().where(results.c.run_id == run.id))
        if after:
            bind.execute(results.insert(), [_row(run.id, value) for value in after])
        bind.execute(runs.update().where(runs.c.id == run.id).values(headline=sa.null()))


def upgrade() -> None:
    _convert_imports(to_vocabulary)


def downgrade() -> None:
    _convert_imports(to_tool_names)

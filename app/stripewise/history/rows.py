"""Database rows to model values, shared by the SQLAlchemy store and the quick SQLite reader."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from stripewise.model.run import Headline, RunStatus, RunSummary

# The listing's columns, in order; both readers select exactly these.
SUMMARY_FIELDS = (
    "id",
    "name",
    "status",
    "hostname",
    "target",
    "engine",
    "engine_version",
    "started_at",
    "finished_at",
    "tags",
    "notes",
    "source",
    "baseline",
    "headline",
    "partial",
)
# A group run whose total leaves out a host that did not complete (protocol.group: `partial`),
# from its host runs' statuses: the same text on SQLite and PostgreSQL, an indexed look-up
# (ix_runs_parent_run_id) per listed run rather than the context's JSON parsed. A scalar
# subquery, not EXISTS: PostgreSQL hashes an EXISTS over the whole table (20 ms at 100,000
# runs) even for a page of 50.
PARTIAL_SQL = (
    "runs.status = 'complete' AND (SELECT 1 FROM runs AS host_runs "
    "WHERE host_runs.parent_run_id = runs.id AND host_runs.status <> 'complete' LIMIT 1) "
    "IS NOT NULL"
)


class SummaryRow(Protocol):
    id: int
    name: str
    status: str
    hostname: str
    target: str
    engine: str
    engine_version: str
    started_at: datetime
    finished_at: datetime | None
    tags: Sequence[str] | None
    notes: str | None
    source: str
    baseline: bool | int | None
    headline: Any
    partial: bool | int | None


def as_utc(value: datetime) -> datetime:
    """Naive values from the database are UTC; aware ones are converted to UTC."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def summary_from_row(row: SummaryRow | Any) -> RunSummary:
    return RunSummary(
        id=row.id,
        name=row.name,
        status=RunStatus(row.status),
        host=row.hostname,
        target=row.target,
        engine=row.engine,
        engine_version=row.engine_version,
        started_at=row.started_at,
        finished_at=row.finished_at,
        tags=tuple(row.tags or ()),
        notes=row.notes or "",
        source=row.source,
        baseline=bool(row.baseline),
        headline=Headline.from_json(row.headline),
        partial=bool(row.partial),
    )

"""Runs an import has just stored, read back a batch at a time for its report.

`stripewise import` prints each stored run with its figures; reading them one query set per
run (`HistoryStore.get_run`: four queries and a RunDetail each) took most of an import of
100,000 runs. Here a batch of runs is two queries: their rows with their hosts, then their
results, each run handed on and let go in file order.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, select

from stripewise.history.connection import Database, driver_errors
from stripewise.history.models import hosts, results, runs
from stripewise.model.run_context import ImportRecord

# Runs read back per pair of queries; their ids are bound as parameters, well under
# SQLite's and PostgreSQL's limits.
READ_BATCH = 100


# One stored result as the report prints it (its passes and flags are not read): phase,
# metric, unit and value.
Figure = tuple[str, str, str, float | None]


@dataclass(frozen=True)
class StoredImport:
    """What the import's report says of one stored run, as the history holds it."""

    id: int
    name: str
    hostname: str
    machine_id: str
    engine: str
    engine_version: str
    target: str
    started_at: datetime
    record: ImportRecord
    results: tuple[Figure, ...]


def stored_imports(db: Database, ids: Sequence[int]) -> Iterator[StoredImport]:
    """The runs `ids` (in that order), READ_BATCH at a time; a run not found is left out."""
    for start in range(0, len(ids), READ_BATCH):
        batch = ids[start : start + READ_BATCH]
        run_stmt = (
            select(
                runs.c.id,
                runs.c.name,
                runs.c.engine,
                runs.c.engine_version,
                runs.c.target,
                runs.c.started_at,
                runs.c.context["import"].label("record"),
                hosts.c.hostname,
                hosts.c.machine_id,
            )
            .select_from(runs.join(hosts, runs.c.host_id == hosts.c.id))
            .where(runs.c.id.in_(batch))
        )
        result_stmt = (
            select(
                results.c.run_id, results.c.phase, results.c.metric, results.c.unit, results.c.value
            )
            .where(results.c.run_id.in_(batch))
            .order_by(results.c.run_id, results.c.id)
        )
        with driver_errors(db), db.engine.connect() as conn:
            rows = {int(row.id): row for row in conn.execute(run_stmt)}
            by_run = itertools.groupby(_driver_rows(conn, result_stmt), operator.itemgetter(0))
            figures = {int(run_id): tuple(row[1:] for row in found) for run_id, found in by_run}
        for run_id in batch:
            if (row := rows.get(run_id)) is None:
                continue
            yield StoredImport(
                id=run_id,
                name=row.name,
                hostname=row.hostname,
                machine_id=row.machine_id,
                engine=row.engine,
                engine_version=row.engine_version,
                target=row.target,
                started_at=row.started_at,
                record=_record(row.record),
                results=figures.get(run_id, ()),
            )


def _driver_rows(conn: Connection, stmt: Select[Any]) -> list[Any]:
    """The rows of `stmt` as the driver fetches them: a batch's results are 4,000 rows, and
    SQLAlchemy's own rows cost twice the fetch. For plain columns (text, numbers: nothing to
    convert) and integer ids, which are written into the statement."""
    sql = stmt.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}).string
    return list(conn.exec_driver_sql(sql).cursor.fetchall())


def _record(stored: object) -> ImportRecord:
    """The format and line of the run's `context.import` (what the report prints), typed as
    a run's context reads them."""
    if not isinstance(stored, dict):
        return ImportRecord()
    fmt, line = stored.get("format"), stored.get("line")
    return ImportRecord(
        format=fmt if isinstance(fmt, str) else None,
        line=line if isinstance(line, int) and not isinstance(line, bool) else None,
    )

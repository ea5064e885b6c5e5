"""The run listing a page at a time: keyset paging, filters in the query, never OFFSET.

A page ends at a row whose key (`started_at`, `id`), or `id` alone when ordered by id, the next
page starts after: `WHERE (started_at, id) < (?, ?) ORDER BY started_at DESC, id DESC LIMIT n`
reads n index entries wherever the page lies, where OFFSET would step over every row before it.
Sorted by a text column (name, host, target, engine, status), the key is (lower(column),
`started_at`, `id`), so that a long list is read in that order too, not only its rows fetched.
Each filter the History page and `history list` offer is a column with an index of its own
(migration 0013: host, target, engine, tag, each whatever its case, and a date range of the
listed order; the target's and engine's also serve their sort); terms on a run's context
(`read_ahead_kb=4096`, a bare word) are matched in Python, page by page (`model.run_filter`),
as they need the context's JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time
from typing import Any

from sqlalchemy import (
    Boolean,
    ColumnElement,
    Connection,
    Select,
    func,
    literal,
    literal_column,
    select,
    true,
    tuple_,
)

from stripewise.history.models import hosts, run_tags, runs
from stripewise.history.rows import PARTIAL_SQL, SUMMARY_FIELDS
from stripewise.model.run import RunSummary
from stripewise.model.run_filter import Term, parse_filter

PAGE_SIZE = 200  # rows a view fetches at a time: a few screens


def _summary_column(field: str) -> ColumnElement[Any]:
    if field == "partial":  # no column: the runs' host runs say it
        return literal_column(f"({PARTIAL_SQL})", Boolean()).label(field)
    return hosts.c.hostname if field == "hostname" else runs.c[field]


SUMMARY_COLUMNS = tuple(_summary_column(field) for field in SUMMARY_FIELDS)
# the filter terms answered by an indexed column rather than the context (`host=node1`)
QUERY_KEYS = ("host", "target", "engine", "tag", "since", "before")
SCOPES = ("all", "baselines", "imported", "trash")
# the text columns a list is sorted by in the query (keyset on (lower(column), started_at, id)):
# target and engine read in that order from their filter's index (migration 0013)
SORT_COLUMNS = {
    "name": runs.c.name,
    "host": hosts.c.hostname,
    "target": runs.c.target,
    "engine": runs.c.engine,
    "status": runs.c.status,
}


@dataclass(frozen=True)
class RunQuery:
    """Which runs are listed, and in which order (newest first unless said otherwise)."""

    host: str | None = None
    target: str | None = None
    engine: str | None = None
    tag: str | None = None
    since: datetime | None = None  # started at or after
    before: datetime | None = None  # started before
    scope: str = "all"  # SCOPES: the trash lists the deleted runs instead
    by_id: bool = False  # ordered by id instead of by start time
    sort: str | None = None  # SORT_COLUMNS: by that column's text first, whatever its case
    ascending: bool = False
    # the ids of the hosts `host` names, read first (`with_host_ids`): one id is read through
    # ix_runs_host_listed in order; two machines of one name (cloned VMs) list both
    host_ids: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Cursor:
    """Where a page ended: the next one starts after this row in the query's order."""

    started_at: datetime
    run_id: int
    text: str | None = None  # the run's text in the column sorted by (RunQuery.sort)

    @classmethod
    def after(cls, run: RunSummary, query: RunQuery | None = None) -> Cursor:
        sort = query.sort if query is not None else None
        return cls(run.started_at, run.id, None if sort is None else _sort_text(run, sort))


def _sort_text(run: RunSummary, sort: str) -> str:
    return run.status.value if sort == "status" else str(getattr(run, sort))


def page_statement(query: RunQuery, after: Cursor | None, limit: int | None) -> Select[Any]:
    """The page's rows (`SUMMARY_COLUMNS`), `limit` of them (None: all that follow)."""
    stmt = select(*SUMMARY_COLUMNS).select_from(runs.join(hosts, runs.c.host_id == hosts.c.id))
    stmt = stmt.where(*_conditions(query))
    by_id = query.by_id and query.sort is None
    keys: list[ColumnElement[Any]] = [runs.c.id] if by_id else [runs.c.started_at, runs.c.id]
    if query.sort is not None:
        keys.insert(0, func.lower(SORT_COLUMNS[query.sort]))
    if after is not None:
        values: list[ColumnElement[Any]] = [literal(after.run_id)]
        if not by_id:
            values.insert(0, literal(after.started_at, runs.c.started_at.type))
        if query.sort is not None:
            values.insert(0, func.lower(literal(after.text or "", SORT_COLUMNS[query.sort].type)))
        key, value = (keys[0], values[0]) if by_id else (tuple_(*keys), tuple_(*values))
        stmt = stmt.where(key > value if query.ascending else key < value)
    stmt = stmt.order_by(*(k.asc() if query.ascending else k.desc() for k in keys))
    return stmt if limit is None else stmt.limit(limit)


def count_statement(query: RunQuery) -> Select[Any]:
    """How many runs the query lists, read from the same indexes."""
    return select(func.count()).select_from(runs).where(*_conditions(query))


def _conditions(query: RunQuery) -> list[ColumnElement[bool]]:
    found: list[ColumnElement[bool]]
    if query.scope == "trash":  # a group run's host runs go with it, and are not listed
        found = [runs.c.deleted_at.is_not(None), runs.c.parent_run_id.is_(None)]
    else:  # as ix_runs_listed's WHERE, so that the index (and each filter's) applies
        found = [runs.c.deleted_at.is_(None), runs.c.parent_run_id.is_(None)]
    if query.scope == "baselines":
        found.append(runs.c.baseline == true())
    elif query.scope == "imported":
        found.append(runs.c.source == "imported")
    # each filter ignores case (an admin types host=Server1 for server1), lower() on both
    # sides as migration 0013's expression indexes are made
    if query.host is not None and query.host_ids is not None:
        ids = query.host_ids
        found.append(runs.c.host_id == ids[0] if len(ids) == 1 else runs.c.host_id.in_(ids))
    elif query.host is not None:  # not read first: right, but each page sorts the host's runs
        found.append(runs.c.host_id.in_(_hosts_named(query.host)))
    if query.target is not None:
        found.append(_same(runs.c.target, query.target))
    if query.engine is not None:
        found.append(_same(runs.c.engine, query.engine))
    if query.tag is not None:
        tagged = select(run_tags.c.run_id).where(_same(run_tags.c.tag, query.tag))
        found.append(runs.c.id.in_(tagged))
    if query.since is not None:
        found.append(runs.c.started_at >= literal(query.since, runs.c.started_at.type))
    if query.before is not None:
        found.append(runs.c.started_at < literal(query.before, runs.c.started_at.type))
    return found


def _hosts_named(name: str) -> Select[Any]:
    return select(hosts.c.id).where(_same(hosts.c.hostname, name))


def with_host_ids(conn: Connection, query: RunQuery) -> RunQuery:
    """`query` with the ids of the hosts its `host` names (hosts is small: one quick read), so
    its pages are read through ix_runs_host_listed without a sort."""
    if query.host is None:
        return query
    ids = tuple(
        int(i) for i in conn.execute(_hosts_named(query.host).order_by(hosts.c.id)).scalars()
    )
    return replace(query, host_ids=ids)


def _same(column: ColumnElement[str], value: str) -> ColumnElement[bool]:
    """The column's text equals `value` whatever the case of either."""
    return func.lower(column) == func.lower(literal(value, column.type))


def _day(text: str) -> datetime:
    """`2026-03-01` (local midnight, as the list shows times) or a full ISO time."""
    try:
        return datetime.combine(date.fromisoformat(text), time()).astimezone(UTC)
    except ValueError:
        moment = datetime.fromisoformat(text)
        return (moment if moment.tzinfo else moment.astimezone()).astimezone(UTC)


def parse_query(text: str, scope: str = "all") -> tuple[RunQuery, list[Term]]:
    """A filter as typed on the History page: `host=`, `target=`, `engine=`, `tag=`, `since=`
    and `before=` (a day or an ISO time) go into the query, matched whatever their case;
    every other term (`read_ahead_kb=4096`, a word) is matched on each run's
    context and fields (`model.run_filter.matches`). ValueError: a date that is not one."""
    typed: dict[str, str] = {}  # the first of each key counts
    rest: list[Term] = []
    for word in text.split():
        key, sep, value = word.partition("=")
        if sep and value and key.lower() in QUERY_KEYS and key.lower() not in typed:
            typed[key.lower()] = value
        else:
            rest += parse_filter(word)
    since, before = typed.get("since"), typed.get("before")
    query = RunQuery(
        host=typed.get("host"),
        target=typed.get("target"),
        engine=typed.get("engine"),
        tag=typed.get("tag"),
        since=None if since is None else _day(since),
        before=None if before is None else _day(before),
        scope=scope,
    )
    return query, rest


def filtered_out(query: RunQuery) -> bool:
    """True when the query lists only some of the runs in its scope."""
    return any(getattr(query, key) is not None for key in QUERY_KEYS)

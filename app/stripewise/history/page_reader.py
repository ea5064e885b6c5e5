"""A page of the History page's listing with the terms the query cannot answer (a run's
context, a bare word) matched here, page by page, so a filter never reads the whole history
before showing its first matches."""

from __future__ import annotations

from dataclasses import dataclass

from stripewise.history.run_pages import Cursor, RunQuery
from stripewise.history.store import HistoryStore
from stripewise.model.run import RunSummary
from stripewise.model.run_context import RunContext
from stripewise.model.run_filter import Term, matches


@dataclass(frozen=True)
class RunPage:
    runs: list[RunSummary]
    next: Cursor | None  # where the next page starts; None: nothing follows
    count: int | None  # how many the query lists in all, when known (read with a first page)


def _fields(run: RunSummary) -> dict[str, str]:
    """The run's own fields a term may match besides its context."""
    return {
        "name": run.name,
        "host": run.host,
        "target": run.target,
        "engine": run.engine,
        "status": run.status.value,
        "tags": " ".join(run.tags),
        "notes": run.notes,
        "headline": " ".join((run.headline.array, run.headline.tuning, run.headline.figures)),
    }


def read_page(
    store: HistoryStore, query: RunQuery, terms: list[Term], after: Cursor | None, limit: int
) -> RunPage:
    """`limit` runs the query lists after `after` that match every term, or fewer when the
    history ends first."""
    if not terms:
        found = store.list_page(query, after, limit)
        count = store.count_listed(query) if after is None else None
        return RunPage(
            found, Cursor.after(found[-1], query) if len(found) == limit else None, count
        )
    kept: list[RunSummary] = []
    first = after is None
    while True:
        page = store.list_page(query, after, limit)
        contexts = store.contexts([run.id for run in page])
        for run in page:
            if matches(contexts.get(run.id, RunContext()), terms, _fields(run)):
                kept.append(run)
                if len(kept) == limit:  # the next page starts after this run
                    return RunPage(kept, Cursor.after(run, query), None)
        if len(page) < limit:
            return RunPage(kept, None, len(kept) if first else None)
        after = Cursor.after(page[-1], query)

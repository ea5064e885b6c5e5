"""A run's listing line (`model.run_headline`), made from its context and results when it has
none or an outdated one, and stored so the next listing only reads it."""

from __future__ import annotations

from sqlalchemy import bindparam, select, update

from stripewise.history.connection import Database, driver_errors
from stripewise.history.errors import DatabaseError
from stripewise.history.models import results, runs
from stripewise.history.result_rows import result_value
from stripewise.model.run import Headline, ResultValue
from stripewise.model.run_context import RunContext
from stripewise.model.run_headline import headline


def make_headlines(db: Database, run_ids: list[int]) -> dict[int, Headline]:
    """Listing lines for runs without one (new results, imports, older databases); stored
    so the next listing reads them, when the database takes writes: a locked or full one
    still lists, and they are made again next time."""
    made: dict[int, Headline] = {}
    # in id order: two instances listing at once lock the rows they update in the same
    # order on a server, so neither holds what the other waits for (no deadlock)
    chunks = [sorted(run_ids)[at : at + 500] for at in range(0, len(run_ids), 500)]
    with driver_errors(db), db.engine.connect() as conn:
        for chunk in chunks:  # within any backend's parameter limit
            rows = conn.execute(
                select(runs.c.id, runs.c.context, runs.c.headline).where(runs.c.id.in_(chunk))
            ).all()
            values: dict[int, list[ResultValue]] = {i: [] for i in chunk}
            for r in conn.execute(select(results).where(results.c.run_id.in_(chunk))):
                values[int(r.run_id)].append(result_value(r))
            for row in rows:
                if not Headline.is_current(row.headline):
                    made[int(row.id)] = headline(
                        RunContext.from_json(row.context), values[int(row.id)]
                    )
    try:
        with driver_errors(db), db.engine.begin() as conn:
            for chunk in chunks:
                if todo := [i for i in chunk if i in made]:
                    conn.execute(
                        update(runs).where(runs.c.id == bindparam("run_id")),
                        [{"run_id": i, "headline": made[i].as_json()} for i in todo],
                    )
    except DatabaseError:
        pass  # shown all the same; stored by a later listing
    return made

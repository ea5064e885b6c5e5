"""`stripewise bench --save`: the run, its samples and its results into the history."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from stripewise.cli.errors import CliError
from stripewise.protocol.events import BenchStarted, RunResult, Sample
from stripewise.protocol.group import GroupOutcome
from stripewise.protocol.spec import spec_to_json


def save_run(
    url: str,
    name: str,
    started: BenchStarted,
    result: RunResult,
    samples: Sequence[Sample],
) -> int | None:
    """`started` is the helper's bench.start reply (the spec as it normalised it, the disks
    under the target); `result` its run_result, or the one the client made for a run the
    helper never finished (status `aborted` or `cancelled`). None when the database could not
    take the run: it is then kept in the local spool, said in one line on stderr, and synced
    by the next command that opens the database."""
    # lazy: SQLAlchemy and the context probes load only for `bench --save`
    from stripewise.history.hostinfo import HostInfo
    from stripewise.history.spool import KeyedRun, new_run_key, save_or_spool
    from stripewise.history.store import SampleRow
    from stripewise.inventory.bench_context import collect_context

    finished = datetime.now(UTC)
    run = KeyedRun(
        key=new_run_key(),
        host=HostInfo.current(),
        name=name,
        target=started.spec.target,
        engine=started.engine,
        engine_version=started.engine_version,
        spec=spec_to_json(started.spec),
        context=collect_context(
            started.spec.target,
            started.disks,
            engine=started.engine,
            engine_version=started.engine_version,
            layers=started.layers,
        ),
        started_at=finished - timedelta(seconds=result.elapsed_s),
    )
    rows = [SampleRow.of(n, s) for n, s in enumerate(samples)]
    run_id, waiting = save_or_spool(url, run, rows, result.values(), result.status, finished)
    if waiting is not None:
        print(f"stripewise: {waiting}", file=sys.stderr)
    return run_id


def save_group_run(url: str, outcome: GroupOutcome, samples: Sequence[Sample]) -> int:
    """A group run (`--host`/`--group`): the totals as one run, each host's run under it."""
    from stripewise.history.database import open_database
    from stripewise.history.errors import DatabaseError
    from stripewise.history.group_runs import store_group_run

    try:
        db = open_database(url)
        try:
            return store_group_run(db, outcome, samples=samples)
        finally:
            db.close()
    except DatabaseError as exc:  # the run's figures were printed; say it was not kept
        raise CliError(f"the group run was not saved: {exc}") from None

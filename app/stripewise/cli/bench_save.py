"""`stripewise bench --save`: the run, its samples and its results into the history."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from stripewise.protocol.events import BenchStarted, RunResult, Sample
from stripewise.protocol.spec import spec_to_json


def save_run(
    url: str,
    name: str,
    started: BenchStarted,
    result: RunResult,
    samples: Sequence[Sample],
) -> int:
    """`started` is the helper's bench.start reply (the spec as it normalised it, the disks
    under the target); `result` its run_result, or the one the client made for a run the
    helper never finished (status `aborted` or `cancelled`)."""
    # lazy: SQLAlchemy and the context probes load only for `bench --save`
    from stripewise.history.database import open_database
    from stripewise.history.hostinfo import HostInfo
    from stripewise.history.store import HistoryStore, SampleRow
    from stripewise.inventory.bench_context import collect_context

    finished = datetime.now(UTC)
    started_at = finished - timedelta(seconds=result.elapsed_s)
    db = open_database(url)
    try:
        store = HistoryStore(db)
        run_id = store.create_run(
            store.ensure_host(HostInfo.current()),
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
            started_at=started_at,
        )
        store.add_samples(run_id, [SampleRow.of(n, s) for n, s in enumerate(samples)])
        store.add_results(run_id, result.values())
        store.finish_run(run_id, result.status, finished_at=finished)
        return run_id
    finally:
        db.close()

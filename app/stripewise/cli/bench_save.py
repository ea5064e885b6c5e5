"""`stripewise bench --save`: the run, its samples and its results into the history."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stripewise.model.run import RunStatus

_SPEC_KEYS = (
    "size",
    "block_size",
    "phases",
    "streams",
    "repeat",
    "rate",
    "engine",
    "buffered",
    "queue_depth",
)


def _spec_of(args: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k, v in vars(args).items() if k in _SPEC_KEYS}


def _sampled_disks(samples: list[dict[str, Any]]) -> list[str]:
    """The disks the helper sampled: bench.start's list when the caller did not pass it."""
    names: dict[str, None] = {}
    for sample in samples:
        disks = sample.get("disks")
        if isinstance(disks, dict):
            names.update(dict.fromkeys(str(name) for name in disks))
    return list(names)


def save_run(
    url: str,
    args: argparse.Namespace,
    result: dict[str, Any],
    samples: list[dict[str, Any]],
    disks: Sequence[str] = (),
    *,
    status: RunStatus | None = None,
) -> int:
    """`disks`: the kernel names from the helper's bench.start reply. `status` overrides the
    one `result` says (a run_result the client made for a lost helper says `aborted`)."""
    # lazy: SQLAlchemy and the context probes load only for `bench --save`
    from stripewise.history.bench_rows import final_status, result_values, sample_row
    from stripewise.history.database import open_database
    from stripewise.history.hostinfo import HostInfo
    from stripewise.history.store import HistoryStore
    from stripewise.inventory.bench_context import collect_context

    spec = _spec_of(args)
    finished = datetime.now(UTC)
    started = finished - timedelta(seconds=float(result.get("elapsed_s") or 0))
    db = open_database(url)
    try:
        store = HistoryStore(db)
        run_id = store.create_run(
            store.ensure_host(HostInfo.current()),
            name=f"{args.engine} on {args.target}",
            target=args.target,
            engine=str(result.get("engine")),
            engine_version=str(result.get("engine_version")),
            spec=spec,
            context=collect_context(
                args.target,
                list(disks) or _sampled_disks(samples),
                spec=spec,
                engine=str(result.get("engine")),
                engine_version=str(result.get("engine_version")),
            ),
            started_at=started,
        )
        store.add_samples(run_id, [sample_row(n, s) for n, s in enumerate(samples)])
        store.add_results(run_id, result_values(result))
        store.finish_run(run_id, status or final_status(result), finished_at=finished)
        return run_id
    finally:
        db.close()

"""Scaling tests as `stripewise bench scaling --save` files them (docs/scaling.md, "In the
history"): engine and tag `scaling`; in the context the `scaling_result` event under `scaling`
and what was read under `scaling_set`. Written into a real history for the planner's tests.

The CLI's and GUI's writer (`history.scaling_runs.save_scaling_run`, in test_measured_ceilings)
files a run under the machine that ran it; a testbed machine is not this one, so these runs
carry the testbed's host key in their context instead, in the same shape."""

from __future__ import annotations

from datetime import UTC, datetime

from stripewise.history.connection import Database
from stripewise.history.store import HistoryStore
from stripewise.model.run import RunStatus
from stripewise.model.run_context import JsonObject, RunContext
from stripewise.system.hostinfo import HostInfo

WHEN = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
RECORDER = HostInfo(
    hostname="thumper",
    machine_id="5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e",
    kernel="6.1.0",
    cpu_model="Opteron 285",
    cpu_count=4,
    ram_bytes=16 * 2**30,
)


def scaling_result(disks: list[str], ceiling_mb_s: float | None, knee: int) -> JsonObject:
    """A `scaling_result` event for these disks: steps of 1, 2, 4 ... N, each adding 100 MB/s
    a disk until `ceiling_mb_s` (None: still growing at N)."""
    counts = sorted({min(2**i, len(disks)) for i in range(len(disks).bit_length() + 1)})
    steps = []
    for count in counts:
        mean = 100.0 * count if ceiling_mb_s is None else min(100.0 * count, ceiling_mb_s)
        steps.append(
            {"disks": disks[:count], "mb_s": {"mean": mean, "ci95": [mean - 20, mean + 20]}}
        )
    return {
        "event": "scaling_result",
        "status": "complete",
        "steps": steps,
        "alone": {d: {"mean": 100.0, "ci95": [95.0, 105.0]} for d in disks},
        "ceiling": None if ceiling_mb_s is None else {"mb_s": ceiling_mb_s, "disks": knee},
        "outliers": [],
        "written_bytes": 0,
    }


def save_scaling_run(
    db: Database,
    *,
    controller: str | None,
    bus: str | None,
    disks: list[str],
    ceiling_mb_s: float | None,
    knee: int = 4,
    started_at: datetime = WHEN,
    host_key: str | None = None,
    recorder: HostInfo = RECORDER,
) -> int:
    store = HistoryStore(db)
    chosen: JsonObject = {"controller": controller, "bus": bus, "disks": disks}
    context = RunContext(
        host_key=host_key,
        engine="scaling",
        engine_version="test",
        extra={"scaling": scaling_result(disks, ceiling_mb_s, knee), "scaling_set": chosen},
    )
    run_id = store.create_run(
        store.ensure_host(recorder),
        name=f"scaling {controller or bus}",
        target=controller or bus or ",".join(disks),
        engine="scaling",
        engine_version="test",
        context=context,
        options=chosen,
        started_at=started_at,
        tags=("scaling",),
    )
    store.finish_run(run_id, RunStatus.COMPLETE, finished_at=started_at)
    return run_id

"""A scaling test filed as one run, the same from `stripewise bench scaling --save` and from
the Hardware page's dialog (docs/scaling.md, "In the history"): engine and tag `scaling`, each
step's aggregate MB/s and each disk's alone as results, the `scaling_result` and what was read
in the context, where history/ceilings.py finds the measured ceiling for the planner."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from stripewise import __version__
from stripewise.history.ceilings import SCALING_ENGINE
from stripewise.history.connection import Database
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.run import ResultValue, RunStatus
from stripewise.model.run_context import JsonObject, RunContext
from stripewise.model.scaling import ScalingAnalysis, ScalingPlan, Step, analyse
from stripewise.model.scaling_set import DiskSet
from stripewise.protocol.events import Sample
from stripewise.protocol.scaling import ScalingEnd, ScalingResult, ScalingStarted
from stripewise.system.hostinfo import HostInfo

ENGINE = SCALING_ENGINE  # the history's engine name for these runs, as the planner reads it
TAG = "scaling"


def plan_of(started: ScalingStarted) -> ScalingPlan:
    """The helper's plan as the model's (visits are the helper's to order)."""
    steps = tuple(Step(step.disks, step.alone) for step in started.steps)
    return ScalingPlan(started.devices, steps, ())


def outcome_of(
    started: ScalingStarted,
    end: ScalingEnd,
    chosen: DiskSet,
    passes: Mapping[int, Sequence[float]],
) -> tuple[ScalingResult, ScalingAnalysis | None]:
    """The test's answer from its passes' MB/s by step: analysed once every step has a pass
    (model/scaling.py), else only how it ended."""
    plan = plan_of(started)
    complete = all(passes.get(i) for i in range(len(plan.steps)))
    analysis = analyse(plan, passes, chosen.identities) if complete else None
    return ScalingResult.of(end, chosen.name, analysis), analysis


def save_scaling_run(
    db: Database,
    chosen: DiskSet,
    started: ScalingStarted,
    result: ScalingResult,
    analysis: ScalingAnalysis | None,
    started_at: datetime,
    samples: Sequence[Sample],
) -> int:
    """The test as one run: engine `scaling`, tag `scaling`; each step's aggregate MB/s and
    each disk's alone as result values (their passes kept); the scaling_result and what was
    measured (controller, bus, disks) in the context. Its id; DatabaseError when refused."""
    measured: JsonObject = {
        "controller": chosen.controller,
        "bus": chosen.bus,
        "disks": list(chosen.disks),
        "size": started.size,
        "block_size": started.block_size,
        "repeat": started.repeat,
    }
    context = RunContext(
        engine=ENGINE,
        engine_version=__version__,
        extra={"scaling": result.to_json(), "scaling_set": measured},
    )
    store = HistoryStore(db)
    run_id = store.create_run(
        store.ensure_host(HostInfo.current()),
        name=f"scaling {chosen.name}",
        target=chosen.controller or ",".join(f"/dev/{d}" for d in chosen.disks),
        engine=ENGINE,
        engine_version=__version__,
        context=context,
        options=measured,
        started_at=started_at,
        tags=(TAG,),
    )
    store.add_samples(run_id, [SampleRow.of(n, s) for n, s in enumerate(samples)])
    if analysis is not None:
        store.add_results(run_id, result_values(analysis))
    store.finish_run(run_id, RunStatus(result.status), finished_at=datetime.now(UTC))
    return run_id


def result_values(analysis: ScalingAnalysis) -> list[ResultValue]:
    """Each step as phase `scaling_N` (N disks at once) and each disk alone as `alone_DISK`,
    metric `mb_s`: the mean over passes, min and max, and every pass."""

    def value(phase: str, passes: Sequence[float], mean: float) -> ResultValue:
        return ResultValue(
            phase, "mb_s", "MB/s", round(mean, 2), min(passes), max(passes), len(passes),
            tuple(passes),
        )  # fmt: skip

    values = [value(f"scaling_{len(s.disks)}", s.mb_s.passes, s.mb_s.mean) for s in analysis.steps]
    values += [value(f"alone_{d}", f.passes, f.mean) for d, f in analysis.alone.items()]
    return values

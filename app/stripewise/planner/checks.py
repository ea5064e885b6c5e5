"""A plan's evaluation with the checks of its hardware: what the planner page and `stripewise
plan` show.

`model.evaluate` judges arrays; `model.plan.hardware_problems` judges the controllers and disks
themselves (figures within bounds, no more disks than ports). Here the second joins the first as
plan-wide problems, each once, and, as evaluate does for its own, each array's report also
carries those that involve its disks: `ArrayReport.ok` alone still says whether it can be built.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from stripewise.model.array_problems import health_problems
from stripewise.model.ceilings import MeasuredCeiling
from stripewise.model.evaluate import ArrayReport, PlanReport, evaluate
from stripewise.model.health import HealthVerdict
from stripewise.model.plan import Plan, Problem, hardware_problems


def evaluate_plan(
    plan: Plan,
    health: Mapping[str, HealthVerdict] | None = None,
    *,
    measured: Iterable[MeasuredCeiling] = (),
) -> PlanReport:
    """`health`: this machine's disks' SMART verdicts by kernel name, for a plan of its disks:
    a failing or worn member is a problem of its array. `measured`: the ceilings scaling tests
    found on the plan's host (history.ceilings)."""
    report = evaluate(plan, measured)
    found = (*hardware_problems(plan), *(health_problems(plan, health) if health else ()))
    extra = tuple(p for p in found if p not in report.problems)
    if not extra:
        return report
    return replace(
        report,
        arrays=tuple(_with_its_own(a, extra) for a in report.arrays),
        problems=(*extra, *report.problems),
    )


def _with_its_own(report: ArrayReport, problems: tuple[Problem, ...]) -> ArrayReport:
    own = {*report.array.members, *report.array.spares}
    mine = tuple(p for p in problems if own.intersection(p.disks) and p not in report.problems)
    return replace(report, problems=(*report.problems, *mine)) if mine else report


def hardware_errors(plan: Plan) -> tuple[Problem, ...]:
    """What makes the hardware impossible (a file with these is refused by `stripewise plan`)."""
    return tuple(p for p in hardware_problems(plan) if p.error)

"""Everything the planner shows about a plan, computed in one pass after every edit.

One PlanIndex per evaluation keeps this linear in the number of disks: a 48-disk plan with a few
arrays evaluates in a few milliseconds, fast enough to rerun after each drop in the GUI.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from stripewise.model.array_problems import check_array, duplicate_name, plan_problems
from stripewise.model.arrays import (
    FsGeometry,
    Geometry,
    PlanIndex,
    fs_geometry,
    geometry,
    normalized,
)
from stripewise.model.ceilings import Ceilings, MeasuredCeiling
from stripewise.model.placement import Spread, spread
from stripewise.model.plan import Plan, PlannedArray, Problem
from stripewise.model.predict import Prediction, predict


@dataclass(frozen=True)
class ArrayReport:
    """One array's figures. `problems` includes the plan-wide ones that involve this array,
    so `ok` alone says whether it can be built. `cost` counts the disks it buys (members and
    spares): disks already in the machine cost nothing new."""

    array: PlannedArray
    geometry: Geometry
    fs: FsGeometry | None
    prediction: Prediction | None
    spread: Spread
    problems: tuple[Problem, ...]
    cost: float | None

    @property
    def ok(self) -> bool:
        return not any(p.error for p in self.problems)

    @property
    def members_per_controller(self) -> dict[str, int]:
        return self.spread.per_controller


@dataclass(frozen=True)
class PlanReport:
    """`problems` holds only the plan-wide problems; `total_cost` is the new hardware: the
    disks to buy in arrays plus the hypothetical controllers that carry them (None if any of
    those has no price); the machine's own disks and controllers cost nothing."""

    arrays: tuple[ArrayReport, ...]
    problems: tuple[Problem, ...]
    total_cost: float | None
    usable_bytes: int
    cost_per_usable_tb: float | None  # decimal TB

    @property
    def ok(self) -> bool:
        return not any(p.error for p in self.problems) and all(a.ok for a in self.arrays)

    def array(self, name: str) -> ArrayReport | None:
        return next((a for a in self.arrays if a.array.name == name), None)


def evaluate(plan: Plan, measured: Iterable[MeasuredCeiling] = ()) -> PlanReport:
    """`measured`: ceilings scaling tests found; those of the plan's host replace the plan's
    figures for their controller or bus (model/ceilings.py)."""
    index = PlanIndex.of(plan)
    ceilings = Ceilings.of(index, measured)
    shared = plan_problems(plan)
    reports = tuple(_evaluate_array(plan, a, index, ceilings, shared) for a in plan.arrays)
    usable = sum(r.geometry.usable_bytes for r in reports)
    total = _total_cost(plan, index)
    # what is bought pays for the arrays it goes into, not for those of the machine's own disks
    bought = sum(r.geometry.usable_bytes for r in reports if _buys(r.array, index))
    return PlanReport(
        arrays=reports,
        problems=shared,
        total_cost=total,
        usable_bytes=usable,
        cost_per_usable_tb=total / (bought / 1e12) if total is not None and bought else None,
    )


def _buys(array: PlannedArray, index: PlanIndex) -> bool:
    """Whether the array needs a disk or a controller to be bought."""
    disks = [index.disks[d] for d in (*array.members, *array.spares) if d in index.disks]
    controllers = [index.controllers.get(d.controller) for d in disks]
    return any(d.bought for d in disks) or any(c and c.hypothetical for c in controllers)


def _evaluate_array(
    plan: Plan,
    array: PlannedArray,
    index: PlanIndex,
    ceilings: Ceilings,
    shared: tuple[Problem, ...],
) -> ArrayReport:
    array = normalized(array)  # reports always carry enum-typed levels
    shape = geometry(array, plan, index)
    own = set(array.members) | set(array.spares)
    twins = sum(1 for a in plan.arrays if a.name == array.name)
    mine = tuple(
        p for p in shared if own.intersection(p.disks) or p == duplicate_name(array.name, twins)
    )
    placed = spread(array, plan, index, ceilings)
    return ArrayReport(
        array=array,
        geometry=shape,
        fs=fs_geometry(array, shape),
        prediction=predict(array, plan, shape, index, ceilings),
        spread=placed,
        problems=check_array(array, plan, index) + mine + _exposed(array, placed),
        cost=_price_sum(index, (*array.members, *array.spares)),
    )


def _exposed(array: PlannedArray, placed: Spread) -> tuple[Problem, ...]:
    """A redundant array that one controller's failure takes down: a warning a script reads
    (`warnings`), not only words in the spread's explanation."""
    if not placed.single_point_of_failure:
        return ()
    said = next(
        (line for line in placed.explanation if "takes the array down" in line),
        "one controller failure takes the array down.",
    )
    return (
        Problem(
            "single_point_of_failure",
            f"{array.name}: single point of failure: {said}",
            error=False,
            disks=tuple(array.members),
        ),
    )


def _price_sum(index: PlanIndex, disk_ids: tuple[str, ...]) -> float | None:
    """What the disks to buy cost; None when one of them has no price. A real disk without a
    price is one the machine has already (an inventory gives none): it costs nothing new."""
    total = 0.0
    for disk_id in dict.fromkeys(disk_ids):
        disk = index.disks.get(disk_id)
        if disk is None:
            return None
        if disk.price is not None:
            total += disk.price
        elif disk.hypothetical:
            return None
    return total


def _total_cost(plan: Plan, index: PlanIndex) -> float | None:
    used = tuple(d for a in plan.arrays for d in (*a.members, *a.spares))
    total = _price_sum(index, used)
    if total is None:
        return None
    controllers = dict.fromkeys(index.disks[d].controller for d in used)
    for controller_id in controllers:
        controller = index.controllers.get(controller_id)
        if controller is not None and controller.hypothetical:
            if controller.price is None:
                return None
            total += controller.price
    return total

"""An evaluated plan as JSON (`stripewise plan --json`) and as readable text.

The required keys per array are name, level, members, data_disks, usable_bytes,
fault_tolerance, predicted, spread_score, warnings and commands; the rest are extras that
scripts may also use.

`predicted` is null when there is no prediction; the extra `unpredicted_why` then says why
("no members yet", "no speed known for sdc ...", the problem that makes the array unbuildable),
and is null when there is one. `predicted.bottleneck` names the side (read or write) that keeps
furthest below the disks' raw speed (docs/prediction-model.md); `predicted.read_bottleneck` and
`predicted.write_bottleneck` name each side's own: disks, parity, controller or bus.

`spread_score` is 0-100, or null for an array of fewer than two members: nothing is spread
yet, so no score is given (before issue 16 an empty array read 100). The key is always there;
the extra `spread.score` follows it, and `spread.headline` says it in words.

`cost.total` is the new hardware: 0 when nothing is bought (the extra `cost.to_buy`, the disks
and controllers to buy, is then empty), null when one of those has no price.
`cost.cost_per_usable_tb` is null when nothing is bought, or the total or a size is unknown.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from enum import Enum
from typing import Any

from stripewise.model.ceilings import PredictionBasis
from stripewise.model.evaluate import ArrayReport, PlanReport
from stripewise.model.placement import Spread
from stripewise.model.plan import Plan, Problem
from stripewise.model.predict import why_unpredicted
from stripewise.model.units import human_size
from stripewise.model.wording import count_noun
from stripewise.planner.commands import Command, PlanNotReady, commands_for
from stripewise.planner.costs import cost_text, to_buy
from stripewise.planner.sizes import (
    cost_per_usable_tb,
    members_of_unknown_size,
    plan_usable_bytes,
    raw_bytes,
    unknown_capacity_text,
    usable_bytes,
)

LEVEL_TITLES = {
    "raid0": "RAID 0",
    "raid1": "RAID 1",
    "raid5": "RAID 5",
    "raid6": "RAID 6",
    "raid10": "RAID 10",
    "raid50": "RAID 50",
    "raid60": "RAID 60",
    "jbod": "JBOD (linear)",
}


def array_commands(plan: Plan, report: ArrayReport, host: str = "") -> tuple[Command, ...]:
    """The array's commands, or none while it has errors."""
    try:
        return commands_for(report.array, plan, report, host)
    except PlanNotReady:
        return ()


def plan_json(plan: Plan, report: PlanReport, host: str = "") -> dict[str, Any]:
    return {
        "name": plan.name,
        "host": plan.host,
        "ok": report.ok,
        "arrays": [_array(plan, a, host) for a in report.arrays],
        "controllers": _controllers(plan),
        "errors": [p.message for p in report.problems if p.error],
        "warnings": [p.message for p in report.problems if not p.error],
        "problems": [_problem(p) for p in report.problems],
        "cost": {
            "total": _number(report.total_cost),
            "currency": plan.currency,
            "usable_bytes": plan_usable_bytes(plan, report),  # null: a size is unknown
            "cost_per_usable_tb": _number(cost_per_usable_tb(plan, report)),
            "to_buy": list(to_buy(plan)),  # []: nothing bought, so total 0 and no cost per TB
        },
    }


def _array(plan: Plan, report: ArrayReport, host: str) -> dict[str, Any]:
    array, g = report.array, report.geometry
    prediction = report.prediction
    predicted = None
    if prediction is not None:
        predicted = {
            "read_mb_s": _range(prediction.read_mb_s),
            "write_mb_s": _range(prediction.write_mb_s),
            "bottleneck": _plain(prediction.bottleneck),
            "read_bottleneck": prediction.read_bottleneck,
            "write_bottleneck": prediction.write_bottleneck,
            "explanation": _plain(getattr(prediction, "explanation", None)),
            **_basis(prediction.basis),
        }
    commands = array_commands(plan, report, host)
    unknown = members_of_unknown_size(plan, report)  # sizes a udev dump did not record
    fs = report.fs
    return {
        "name": array.name,
        "level": array.level.value,
        "members": list(array.members),
        "data_disks": g.data_disks,
        "usable_bytes": usable_bytes(plan, report),  # null when a member's size is unknown
        "fault_tolerance": g.fault_tolerance,
        "predicted": predicted,
        "spread_score": report.spread.score if report.spread.scored else None,
        "warnings": [p.message for p in report.problems if not p.error],
        "commands": [c.shell for c in commands if c.argv],
        # extras
        "unpredicted_why": _unpredicted_why(plan, report),
        "ok": report.ok,
        "errors": [p.message for p in report.problems if p.error],
        "problems": [_problem(p) for p in report.problems],
        "spares": list(array.spares),
        "raw_bytes": raw_bytes(plan, report),
        "efficiency": None if unknown else _number(g.efficiency),
        "size_unknown": list(unknown),
        "groups": g.groups,
        "group_size": g.group_size,
        "chunk_kib": g.chunk_kib,
        "stripe_kib": g.stripe_kib,
        "outer_chunk_kib": g.outer_chunk_kib,
        "filesystem": None
        if fs is None
        else {
            "type": fs.filesystem.value,
            "block_kib": fs.block_kib,
            "stride": fs.stride,
            "stripe_width": fs.stripe_width,
            "su_kib": fs.su_kib,
            "sw": fs.sw,
            "mkfs_args": list(fs.mkfs_args()),
        },
        "mountpoint": array.mountpoint,
        "spread": _spread(report.spread),
        "cost": _number(report.cost),
        "steps": [
            {"title": c.title, "command": c.shell or None, "comment": c.comment} for c in commands
        ],
    }


def _unpredicted_why(plan: Plan, report: ArrayReport) -> str | None:
    """Why an array has no prediction, as the planner's card says it; None when it has one."""
    if report.prediction is not None:
        return None
    return why_unpredicted(report.array, plan, report.geometry, report.problems)


def _basis(basis: PredictionBasis) -> dict[str, Any]:
    """What the prediction's controller and bus ceilings rest on (issue 32): `basis` with the
    run of a measured one (null otherwise), every measured run used, and each link checked."""
    return {
        "basis": basis.basis.value,
        "run": basis.run,
        "runs": list(basis.runs),
        "basis_text": basis.text,
        "ceilings": [
            {
                "kind": link.kind.value,
                "id": link.link,
                "mb_s": _number(link.mb_s),
                "basis": link.basis.value,
                "run": link.measured.run_id if link.measured else None,
                "measured_at": link.measured.measured_at.isoformat() if link.measured else None,
                "ci95": list(link.measured.ci95) if link.measured and link.measured.ci95 else None,
                "disks": link.measured.disks if link.measured else None,
                "text": link.text,
            }
            for link in basis.links
        ],
    }


def _controllers(plan: Plan) -> list[dict[str, Any]]:
    """Each controller with the name people know it by (distinct in the plan) and its load."""
    names = plan.controller_names()
    return [
        {
            "id": c.id,
            "name": names[c.id],
            "label": c.label,
            "model": c.model,
            "ports": c.ports,
            "disks": len(plan.disks_on(c.id)),
            "bus_mb_s": _number(c.bus_mb_s),
            "hypothetical": c.hypothetical,
            "price": _number(c.price),
        }
        for c in plan.controllers
    ]


def _spread(spread: Spread) -> dict[str, Any]:
    """The score's parts, its score null as `spread_score` is when there is none, and the
    headline the text shows ("spread 85 / 100", "no members yet")."""
    found: dict[str, Any] = _plain(spread)
    found["score"] = spread.score if spread.scored else None
    found["headline"] = spread.headline()
    return found


def _problem(problem: Problem) -> dict[str, Any]:
    return {
        "code": problem.code,
        "message": problem.message,
        "error": problem.error,
        "disks": list(problem.disks),
    }


def _range(value: Any) -> dict[str, Any]:
    return {"low": _number(value.low), "high": _number(value.high)}


def _number(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _plain(value: Any) -> Any:
    """Dataclasses, enums, mappings and tuples as JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    return _number(value)


def format_plan(plan: Plan, report: PlanReport) -> str:
    """A readable summary per array, for the terminal."""
    lines = [
        f"{plan.name}: {count_noun(len(report.arrays), 'array')} on "
        f"{count_noun(len(plan.disks), 'disk')} and "
        f"{count_noun(len(plan.controllers), 'controller')}"
    ]
    lines += [f"error: {p.message}" for p in report.problems if p.error]
    lines += [f"warning: {p.message}" for p in report.problems if not p.error]
    lines += _controller_lines(plan)
    for a in report.arrays:
        lines += ["", *_array_lines(plan, a)]
    lines.append("")
    if report.total_cost is None or to_buy(plan):  # no line when nothing is bought
        per_tb = cost_per_usable_tb(plan, report)
        per = f", {per_tb:,.0f} {plan.currency} per usable TB" if per_tb else ""
        lines.append(f"cost of new hardware: {cost_text(plan, report)}{per}")
    usable = plan_usable_bytes(plan, report)
    if usable is None:
        lines.append("usable in all: unknown (an array has disks of unknown size)")
    else:
        lines.append(f"usable in all: {human_size(usable)}")
    return "\n".join(lines)


def _controller_lines(plan: Plan) -> list[str]:
    """Controllers to buy, by their distinct names, with the ports their disks take."""
    lines = []
    for controller in plan.controllers:
        if not controller.hypothetical:
            continue  # the machine's own: the inventory lists them
        disks = len(plan.disks_on(controller.id))
        load = count_noun(disks, "disk")
        if controller.ports is not None:
            load = f"{disks:,} of {count_noun(controller.ports, 'port')} used"
        lines.append(f"controller to buy: {controller.title_and_id}, {load}")
    return lines


def _array_lines(plan: Plan, report: ArrayReport) -> list[str]:
    array, g = report.array, report.geometry
    unknown_sizes = members_of_unknown_size(plan, report)
    level = LEVEL_TITLES.get(array.level.value, array.level.value)
    head = f"{array.name}  {level}, {count_noun(g.members, 'disk')}"
    if g.data_disks:
        head += f" ({g.data_disks} data)"
    if array.level.value not in ("raid1", "jbod"):
        head += f", {array.chunk_kib} KiB chunk"
    if array.level.nested and g.groups:
        head += f", {count_noun(g.groups, 'set')} of {g.group_size}"
    lines = [head, "  members: " + (" ".join(array.members) or "none")]
    if array.spares:
        lines.append("  spares: " + " ".join(array.spares))
    if unknown_sizes and g.valid:
        lines.append(f"  usable {unknown_capacity_text(unknown_sizes)}")
    elif g.usable_bytes:
        lines.append(
            f"  usable {human_size(g.usable_bytes)} of {human_size(g.raw_bytes)} raw "
            f"({g.efficiency:.0%}), survives {count_noun(g.fault_tolerance, 'failed disk')}"
        )
    p = report.prediction
    if p is not None:  # each side names its own limit: reads rarely stop where parity does
        lines.append(
            f"  predicted: read {p.read_mb_s} (limited by {p.read_bottleneck}), "
            f"write {p.write_mb_s} (limited by {p.write_bottleneck})"
        )
        lines.append(f"  {p.basis.text}")
    else:
        lines.append(f"  predicted: unknown: {_unpredicted_why(plan, report)}")
    spread = report.spread
    if spread.scored:
        lines.append(f"  {spread.headline()}: " + " ".join(spread.explanation))
    else:  # "spread 100/100" would praise an array with nothing to spread
        lines.append(f"  spread: {spread.headline()}")
    fs = report.fs
    if fs is not None:
        args = " ".join(fs.mkfs_args())
        lines.append(f"  filesystem: mkfs.{fs.filesystem.value} {args}".rstrip())
    lines += [f"  error: {x.message}" for x in report.problems if x.error]
    lines += [f"  warning: {x.message}" for x in report.problems if not x.error]
    return lines

"""An evaluated plan as JSON (`stripewise plan --json`) and as readable text.

The required keys per array are name, level, members, data_disks, usable_bytes,
fault_tolerance, predicted, spread_score, warnings and commands; the rest are extras that
scripts may also use.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from enum import Enum
from typing import Any

from stripewise.model.evaluate import ArrayReport, PlanReport
from stripewise.model.plan import Plan, Problem
from stripewise.model.units import human_size
from stripewise.planner.commands import Command, PlanNotReady, commands_for

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
        "errors": [p.message for p in report.problems if p.error],
        "warnings": [p.message for p in report.problems if not p.error],
        "problems": [_problem(p) for p in report.problems],
        "cost": {
            "total": _number(report.total_cost),
            "currency": plan.currency,
            "usable_bytes": report.usable_bytes,
            "cost_per_usable_tb": _number(report.cost_per_usable_tb),
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
            "explanation": _plain(getattr(prediction, "explanation", None)),
        }
    commands = array_commands(plan, report, host)
    fs = report.fs
    return {
        "name": array.name,
        "level": array.level.value,
        "members": list(array.members),
        "data_disks": g.data_disks,
        "usable_bytes": g.usable_bytes,
        "fault_tolerance": g.fault_tolerance,
        "predicted": predicted,
        "spread_score": _number(report.spread.score),
        "warnings": [p.message for p in report.problems if not p.error],
        "commands": [c.shell for c in commands if c.argv],
        # extras
        "ok": report.ok,
        "errors": [p.message for p in report.problems if p.error],
        "problems": [_problem(p) for p in report.problems],
        "spares": list(array.spares),
        "raw_bytes": g.raw_bytes,
        "efficiency": _number(g.efficiency),
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
        "spread": _plain(report.spread),
        "cost": _number(report.cost),
        "steps": [
            {"title": c.title, "command": c.shell or None, "comment": c.comment} for c in commands
        ],
    }


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
    disks = len(plan.disks)
    lines = [
        f"{plan.name}: {len(report.arrays)} array{'s' if len(report.arrays) != 1 else ''} on "
        f"{disks} disk{'s' if disks != 1 else ''} and {len(plan.controllers)} controller"
        f"{'s' if len(plan.controllers) != 1 else ''}"
    ]
    lines += [f"error: {p.message}" for p in report.problems if p.error]
    lines += [f"warning: {p.message}" for p in report.problems if not p.error]
    for a in report.arrays:
        lines += ["", *_array_lines(a)]
    lines.append("")
    cost = report.total_cost
    if cost:
        per_tb = report.cost_per_usable_tb
        per = f", {per_tb:,.0f} {plan.currency} per usable TB" if per_tb else ""
        lines.append(f"cost of new hardware: {cost:,.0f} {plan.currency}{per}")
    lines.append(f"usable in all: {human_size(report.usable_bytes)}")
    return "\n".join(lines)


def _array_lines(report: ArrayReport) -> list[str]:
    array, g = report.array, report.geometry
    level = LEVEL_TITLES.get(array.level.value, array.level.value)
    head = f"{array.name}  {level}, {g.members} disk{'s' if g.members != 1 else ''}"
    if g.data_disks:
        head += f" ({g.data_disks} data)"
    if array.level.value not in ("raid1", "jbod"):
        head += f", {array.chunk_kib} KiB chunk"
    if array.level.nested and g.groups:
        head += f", {g.groups} sets of {g.group_size}"
    lines = [head, "  members: " + (" ".join(array.members) or "none")]
    if array.spares:
        lines.append("  spares: " + " ".join(array.spares))
    if g.usable_bytes:
        failed = "disk" if g.fault_tolerance == 1 else "disks"
        lines.append(
            f"  usable {human_size(g.usable_bytes)} of {human_size(g.raw_bytes)} raw "
            f"({g.efficiency:.0%}), survives {g.fault_tolerance} failed {failed}"
        )
    p = report.prediction
    if p is not None:
        lines.append(
            f"  predicted: read {p.read_mb_s.low:,.0f}-{p.read_mb_s.high:,.0f} MB/s, write "
            f"{p.write_mb_s.low:,.0f}-{p.write_mb_s.high:,.0f} MB/s (limited by {p.bottleneck})"
        )
    spread = report.spread
    lines.append(f"  spread {spread.score}/100: " + " ".join(spread.explanation))
    fs = report.fs
    if fs is not None:
        args = " ".join(fs.mkfs_args())
        lines.append(f"  filesystem: mkfs.{fs.filesystem.value} {args}".rstrip())
    lines += [f"  error: {x.message}" for x in report.problems if x.error]
    lines += [f"  warning: {x.message}" for x in report.problems if not x.error]
    return lines

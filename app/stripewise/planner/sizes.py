"""Disk sizes a plan does not know, and the capacities that follow from them.

`udevadm info --export-db` records no sizes, so a real disk read from a dump joins a plan with
`capacity_bytes = UNKNOWN_SIZE` (0): what plan files write for it (`capacity_bytes = 0`) and what
model.plan's bounds allow for real disks only (a disk to buy always has a size). That 0 is no
size: it is never shown as "0 B" nor added into a capacity. An array with a member of unknown
size has an unknown usable capacity, and so has a plan with such an array; the model's own
figures (`Geometry.usable_bytes`, `PlanReport.usable_bytes`) count it as 0, so whatever shows
or prints a capacity asks here first.
"""

from __future__ import annotations

from collections.abc import Iterable

from stripewise.model.evaluate import ArrayReport, PlanReport
from stripewise.model.plan import Plan, PlanDisk
from stripewise.model.units import human_size

UNKNOWN_SIZE = 0  # PlanDisk.capacity_bytes of a disk whose size was not recorded


def known_size(disk: PlanDisk) -> int | None:
    """The disk's size in bytes, None when it was not recorded."""
    return None if disk.capacity_bytes == UNKNOWN_SIZE else disk.capacity_bytes


def size_text(disk: PlanDisk) -> str:
    """ "18.0 TB", or "size unknown"."""
    return human_size(known_size(disk))


def unknown_sizes(plan: Plan, disk_ids: Iterable[str]) -> tuple[str, ...]:
    """Those of `disk_ids` whose size the plan does not know, in their order."""
    disks = {d.id: d for d in plan.disks}
    return tuple(i for i in dict.fromkeys(disk_ids) if i in disks and known_size(disks[i]) is None)


def members_of_unknown_size(plan: Plan, report: ArrayReport) -> tuple[str, ...]:
    """The array's members of unknown size (spares add no capacity, so they do not count)."""
    return unknown_sizes(plan, report.array.members)


def usable_bytes(plan: Plan, report: ArrayReport) -> int | None:
    """The array's usable bytes; None when a member's size is unknown."""
    return None if members_of_unknown_size(plan, report) else report.geometry.usable_bytes


def raw_bytes(plan: Plan, report: ArrayReport) -> int | None:
    """The members' bytes together; None when a member's size is unknown."""
    return None if members_of_unknown_size(plan, report) else report.geometry.raw_bytes


def plan_usable_bytes(plan: Plan, report: PlanReport) -> int | None:
    """All arrays' usable bytes; None when any array's is unknown."""
    if any(members_of_unknown_size(plan, a) for a in report.arrays):
        return None
    return report.usable_bytes


def cost_per_usable_tb(plan: Plan, report: PlanReport) -> float | None:
    """Cost per usable decimal TB of the arrays that need something bought; None when the cost
    or the usable capacity is unknown."""
    return None if plan_usable_bytes(plan, report) is None else report.cost_per_usable_tb


def unknown_capacity_text(disk_ids: tuple[str, ...]) -> str:
    """ "unknown: no size recorded for sdc, sdd" (a udev dump records none)."""
    return f"unknown: no size recorded for {', '.join(disk_ids)}"

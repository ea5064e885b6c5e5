"""Which disk of this machine a plan's disk is: by WWN, serial or stable name (by-id, by-path),
never by kernel name alone.

A plan names its disks by the kernel names they had where it was made; a recording of another
server has an sdk too, and after a controller move this machine's sdk is another disk. So a
plan disk is this machine's disk only when its recorded identity is found here, once. A disk
recorded without any identity (a plan written by hand) is taken by kernel name only when the
plan was made on this machine (`Plan.host` is its host key), and is said to be matched so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from stripewise.model.plan import Plan, PlanDisk
from stripewise.model.topology import Disk, Inventory
from stripewise.model.wording import count_noun

BY_NAME = "kernel name"  # Here.by of a disk recorded without identity, on its own machine


@dataclass(frozen=True)
class Here:
    """A plan's disk found on this machine, and what it was found by."""

    disk: Disk
    by: str  # "WWN", "serial", "stable name" or BY_NAME

    @property
    def device(self) -> str:
        """What to name it by in a request: a stable link where it has one, else /dev/NAME."""
        link = next(iter((*self.disk.by_id, *self.disk.by_path)), None)
        if link is not None:
            return link if link.startswith("/") else f"/dev/{link}"
        return self.disk.devnode or f"/dev/{self.disk.name}"


def made_here(plan: Plan, machine: Inventory) -> bool:
    return plan.host is not None and plan.host == machine.host.key


def _all_disks(machine: Inventory) -> tuple[Disk, ...]:
    return (*machine.disks, *machine.virtual)


def _links(disk: Disk) -> set[str]:
    return {f"/dev/{link.removeprefix('/dev/')}" for link in (*disk.by_id, *disk.by_path)}


def _only(found: Iterable[Disk]) -> Disk | None:
    """The one disk found; None when none or several are (an identity must pick one)."""
    matches = list({d.name: d for d in found}.values())
    return matches[0] if len(matches) == 1 else None


def find_here(disk: PlanDisk, machine: Inventory, same_host: bool) -> Here | None:
    """This machine's disk for a plan's disk, or None: not here, or a disk still to buy."""
    if disk.hypothetical:
        return None
    disks = _all_disks(machine)
    if disk.wwn:
        wwn = disk.wwn.lower()
        found = _only(d for d in disks if d.wwn and d.wwn.lower() == wwn)
        if found is not None:
            return Here(found, "WWN")
    if disk.serial:
        found = _only(d for d in disks if d.serial and d.serial == disk.serial)
        if found is not None:
            return Here(found, "serial")
    if disk.stable_path:
        found = _only(d for d in disks if disk.stable_path in _links(d))
        if found is not None:
            return Here(found, "stable name")
    if same_host and not (disk.wwn or disk.serial or disk.stable_path):
        found = _only(d for d in disks if d.name == disk.id)
        if found is not None:
            return Here(found, BY_NAME)
    return None


def found_here(plan: Plan, machine: Inventory | None) -> dict[str, Here]:
    """Plan disk id -> this machine's disk, for the plan's disks found here."""
    if machine is None:
        return {}
    same_host = made_here(plan, machine)
    found = {}
    for disk in plan.disks:
        here = find_here(disk, machine, same_host)
        if here is not None:
            found[disk.id] = here
    return found


def not_here_text(missing: list[str], plan: Plan) -> str:
    """Why these plan disks are not taken for this machine's: said once for all of them."""
    listed = ", ".join(missing)
    without = [m for m in missing if (d := plan.disk(m)) and not (d.wwn or d.serial)]
    what = count_noun(len(missing), "disk")
    its, them = ("its", "it") if len(missing) == 1 else ("their", "them")
    if without and len(without) == len(missing):
        return (
            f"{what} not found on this machine ({listed}): the plan records no serial or WWN "
            f"to find {them} by, and a kernel name alone may name another disk here"
        )
    return f"{what} not found on this machine ({listed}): no disk here has {its} serial or WWN"

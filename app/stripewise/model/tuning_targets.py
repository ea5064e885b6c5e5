"""The planner's arrays as things to tune, by their plan names.

A planned array already created on this machine is tuned as its md device (found by the md
name mdadm was given, `host:name`). One not created yet is tuned through the member disks
this machine already has, so readahead and scheduler can be set before the array is built;
its filesystem geometry comes from the plan. Members are found here by WWN, serial or stable
name (`model.device_match`), never by the kernel name they had where the plan was made: the
inventory given is always this machine's own, whatever map is on show.
"""

from __future__ import annotations

from dataclasses import dataclass

from stripewise.model.device_match import found_here
from stripewise.model.plan import Plan, PlannedArray
from stripewise.model.topology import DiskKind, Inventory
from stripewise.model.wording import count_noun


@dataclass(frozen=True)
class PlannedTuning:
    array: PlannedArray
    devices: tuple[str, ...]  # kernel names to tune now
    created_as: str | None  # the md device's kernel name, once created
    absent: int  # members not on this machine (still to buy, or in another box)

    @property
    def label(self) -> str:
        level = self.array.level.value
        if self.created_as:
            return f"{self.array.name}  (planned {level}, created as {self.created_as})"
        members = len(self.array.members)
        here = (
            f"{len(self.devices)} of {count_noun(members, 'disk')} here"
            if self.absent
            else count_noun(members, "disk")
        )
        return f"{self.array.name}  (planned {level}, {here}, not created)"


def created_arrays(inventory: Inventory) -> dict[str, str]:
    """Plan name -> md kernel name, for arrays whose md name (`host:name`) is known."""
    return {
        array.label.split(":")[-1]: array.name
        for array in inventory.arrays
        if array.kind is DiskKind.ARRAY and array.label
    }


def planned_tuning(plan: Plan, machine: Inventory | None) -> list[PlannedTuning]:
    """Each planned array with what tunes it on `machine` (this machine's own inventory)."""
    created = created_arrays(machine) if machine is not None else {}
    present = found_here(plan, machine)
    found = []
    for array in plan.arrays:
        md = created.get(array.name)
        if md is not None:
            found.append(PlannedTuning(array, (md,), md, 0))
            continue
        here = tuple(present[m].disk.name for m in array.members if m in present)
        found.append(PlannedTuning(array, here, None, len(array.members) - len(here)))
    return found

"""What a benchmark can run on, read off the hardware map and the plan.

Mounted filesystems (a test file in the mountpoint), md arrays and loop devices (the raw
device), free whole disks, and the plan's arrays: those already created on this machine point
at their md device, the rest are listed as not created yet so the admin sees why they cannot
run.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from stripewise.model.plan import Plan
from stripewise.model.topology import DiskKind, DiskState, Inventory
from stripewise.model.tuning_targets import created_arrays
from stripewise.model.units import human_size

# Pseudo and runtime filesystems where a test file would measure RAM or nothing at all
_NOT_STORAGE = {
    "proc",
    "sysfs",
    "devtmpfs",
    "devpts",
    "cgroup",
    "cgroup2",
    "securityfs",
    "debugfs",
    "tracefs",
    "configfs",
    "fusectl",
    "mqueue",
    "pstore",
    "bpf",
    "hugetlbfs",
    "autofs",
    "binfmt_misc",
    "efivarfs",
    "squashfs",
    "overlay",
    "nsfs",
    "ramfs",
    "rpc_pipefs",
}


class TargetKind(StrEnum):
    FILESYSTEM = "filesystem"
    ARRAY = "array"
    LOOP = "loop"
    DISK = "disk"
    PLANNED = "planned"


@dataclass(frozen=True)
class BenchTarget:
    label: str  # what the picker shows
    path: str  # a mountpoint or /dev node; empty for a planned array not created yet
    kind: TargetKind
    array_name: str | None = None  # the plan's name, so the run is filed against it
    note: str = ""  # why it cannot run, or what writing to it needs

    @property
    def runnable(self) -> bool:
        return bool(self.path)


def _size(size: int | None) -> str:
    return f", {human_size(size)}" if size else ""


def targets_from(inventory: Inventory | None, plan: Plan | None = None) -> list[BenchTarget]:
    """Filesystems first (the usual case), then arrays, loops, free disks, planned arrays."""
    if inventory is None:
        return _planned(plan, {}) if plan is not None else []
    found: list[BenchTarget] = []
    seen: set[str] = set()

    def mounted(points: tuple[str, ...], fs_type: str | None, device: str) -> None:
        if fs_type in _NOT_STORAGE:
            return
        for point in points:
            if point not in seen and point != "[SWAP]":
                seen.add(point)
                label = f"{point}  ({fs_type or 'filesystem'} on {device})"
                found.append(BenchTarget(label, point, TargetKind.FILESYSTEM))

    for disk in (*inventory.disks, *inventory.virtual):
        mounted(disk.mountpoints, disk.fs_type, disk.name)
        for part in disk.partitions:
            mounted(part.mountpoints, part.fs_type, part.name)
    for array in inventory.arrays:
        mounted(array.mountpoints, None, array.name)
    for array in inventory.arrays:
        if array.kind is not DiskKind.ARRAY:
            continue
        if not array.mountpoints:
            what = f"{array.level or 'array'}, {len(array.members)} members"
            label = f"/dev/{array.name}  ({what}{_size(array.size_bytes)})"
            note = "writing needs the array's UUID typed as confirmation"
            found.append(BenchTarget(label, f"/dev/{array.name}", TargetKind.ARRAY, note=note))
    for disk in inventory.virtual:
        if disk.name.startswith("loop") and not disk.mountpoints and not disk.holders:
            label = f"/dev/{disk.name}  (loop device{_size(disk.size_bytes)})"
            note = "writing needs the backing file's path typed as confirmation"
            found.append(BenchTarget(label, f"/dev/{disk.name}", TargetKind.LOOP, note=note))
    for disk in inventory.disks:
        if disk.state is DiskState.FREE:
            what = " ".join(part for part in (disk.vendor, disk.model) if part) or "disk"
            label = f"/dev/{disk.name}  (free {what}{_size(disk.size_bytes)})"
            note = "writing destroys its contents and needs its serial typed as confirmation"
            found.append(BenchTarget(label, f"/dev/{disk.name}", TargetKind.DISK, note=note))
    if plan is not None:
        found.extend(_planned(plan, created_arrays(inventory)))
    return found


def _planned(plan: Plan, md_by_name: dict[str, str]) -> list[BenchTarget]:
    found = []
    for array in plan.arrays:
        level = array.level.value
        members = len(array.members)
        if array.name in md_by_name:
            device = f"/dev/{md_by_name[array.name]}"
            label = f"{array.name}  (planned {level}, created as {device})"
            found.append(BenchTarget(label, device, TargetKind.PLANNED, array.name))
        else:
            label = f"{array.name}  (planned {level}, {members} disks)"
            note = "not created yet: create it from the Planner first"
            found.append(BenchTarget(label, "", TargetKind.PLANNED, array.name, note))
    return found

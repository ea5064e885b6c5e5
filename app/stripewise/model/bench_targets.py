"""What a benchmark can run on, read off the hardware map and the plan.

Mounted filesystems (a test file in the mountpoint), md arrays and loop devices (the raw
device), free whole disks, and the plan's arrays: those already created on this machine point
at their md device, the rest are listed as not created yet so the admin sees why they cannot
run. A block device of size 0 or of unknown size is never offered (an unattached loop device
reads as 0 bytes): nothing could run on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from stripewise.model.plan import Plan
from stripewise.model.topology import DiskKind, DiskState, Inventory
from stripewise.model.tuning_targets import created_arrays
from stripewise.model.units import human_size
from stripewise.model.wording import count_noun

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
    DIRECTORY = "directory"  # one the admin picked, anywhere
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
    size_bytes: int | None = None  # a block device's capacity; None for a filesystem
    device_id: str | None = None  # serial or WWN: a different disk under the same name differs
    gone: bool = False  # picked, then detached, unmounted or removed

    @property
    def runnable(self) -> bool:
        return bool(self.path) and not self.gone

    @property
    def is_device(self) -> bool:
        return self.path.startswith("/dev/")

    @property
    def identity(self) -> tuple[str, ...]:
        """What stays the same across re-reads of the hardware map while the thing itself
        does: never its place in a list, nor its label (sizes and holders change). A planned
        array is itself before and after it is created."""
        if self.kind is TargetKind.PLANNED:
            return (self.kind.value, self.array_name or "")
        return (self.kind.value, self.path, self.device_id or "")

    def as_gone(self, why: str) -> BenchTarget:
        """This target kept on show after it went away; it cannot run, and says why."""
        return replace(self, label=f"{self.label}  [gone]", note=why, gone=True)


TEST_FILE_NOTE = "a test file is written here, and removed after the run"


def directory_target(path: str) -> BenchTarget:
    return BenchTarget(f"{path}  (directory)", path, TargetKind.DIRECTORY, note=TEST_FILE_NOTE)


def gone_reason(target: BenchTarget) -> str:
    """What became of a picked target that went away, without its path (said beside it)."""
    if target.kind is TargetKind.DIRECTORY:
        return "the directory no longer exists"
    if target.kind is TargetKind.FILESYSTEM:
        return "the filesystem is no longer mounted there"
    if target.kind is TargetKind.PLANNED:
        return "the planned array is no longer on this machine"
    return "the device is gone (detached or replaced)"


def _size(size: int | None) -> str:
    return f", {human_size(size)}" if size else ""


def _has_size(size: int | None) -> bool:
    """A block device worth offering: a known, non-zero capacity."""
    return size is not None and size > 0


def targets_from(
    inventory: Inventory | None, plan: Plan | None = None, bays: Mapping[str, str] | None = None
) -> list[BenchTarget]:
    """Filesystems first (the usual case), then arrays, loops, free disks, planned arrays; a
    free disk in a mapped bay (`bays`: disk name -> bay label) is named by it."""
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
                found.append(BenchTarget(label, point, TargetKind.FILESYSTEM, note=TEST_FILE_NOTE))

    for disk in (*inventory.disks, *inventory.virtual):
        mounted(disk.mountpoints, disk.fs_type, disk.name)
        for part in disk.partitions:
            mounted(part.mountpoints, part.fs_type, part.name)
    for array in inventory.arrays:
        mounted(array.mountpoints, None, array.name)
    for array in inventory.arrays:
        if array.kind is not DiskKind.ARRAY or array.mountpoints:
            continue
        if _has_size(array.size_bytes):
            what = f"{array.level or 'array'}, {count_noun(len(array.members), 'member')}"
            label = f"/dev/{array.name}  ({what}{_size(array.size_bytes)})"
            note = "writing needs the array's UUID typed as confirmation"
            found.append(
                BenchTarget(
                    label,
                    f"/dev/{array.name}",
                    TargetKind.ARRAY,
                    note=note,
                    size_bytes=array.size_bytes,
                    device_id=array.uuid,
                )
            )
    for disk in inventory.virtual:
        if (
            disk.name.startswith("loop")
            and not disk.mountpoints
            and not disk.holders
            and _has_size(disk.size_bytes)
        ):
            label = f"/dev/{disk.name}  (loop{_size(disk.size_bytes)})"
            note = "writing needs the backing file's path typed as confirmation"
            found.append(
                BenchTarget(
                    label,
                    f"/dev/{disk.name}",
                    TargetKind.LOOP,
                    note=note,
                    size_bytes=disk.size_bytes,
                )
            )
    for disk in inventory.disks:
        if disk.state is DiskState.FREE and _has_size(disk.size_bytes):
            what = " ".join(part for part in (disk.vendor, disk.model) if part) or "disk"
            bay = (bays or {}).get(disk.name)
            name = f"bay {bay} ({disk.name})" if bay else f"/dev/{disk.name}"
            label = f"{name}  (free {what}{_size(disk.size_bytes)})"
            note = "writing destroys its contents and needs its serial typed as confirmation"
            found.append(
                BenchTarget(
                    label,
                    f"/dev/{disk.name}",
                    TargetKind.DISK,
                    note=note,
                    size_bytes=disk.size_bytes,
                    device_id=disk.serial or disk.wwn,
                )
            )
    if plan is not None:
        sizes = {array.name: array.size_bytes for array in inventory.arrays}
        found.extend(_planned(plan, created_arrays(inventory), sizes))
    return found


def _planned(
    plan: Plan, md_by_name: dict[str, str], sizes: dict[str, int | None] | None = None
) -> list[BenchTarget]:
    found = []
    for array in plan.arrays:
        level = array.level.value
        md = md_by_name.get(array.name)
        size = (sizes or {}).get(md) if md is not None else None
        if md is None:
            label = f"{array.name}  (planned {level}, {count_noun(len(array.members), 'disk')})"
            note = "not created yet: create it from the Planner first"
            found.append(BenchTarget(label, "", TargetKind.PLANNED, array.name, note))
        elif _has_size(size):
            device = f"/dev/{md}"
            label = f"{array.name}  (planned {level}, created as {device})"
            found.append(
                BenchTarget(label, device, TargetKind.PLANNED, array.name, size_bytes=size)
            )
        else:  # an inactive or half-assembled md reads as 0 bytes
            label = f"{array.name}  (planned {level}, /dev/{md} of no size)"
            note = f"/dev/{md} holds 0 bytes or its size is unknown: assemble it first"
            found.append(BenchTarget(label, "", TargetKind.PLANNED, array.name, note))
    return found

"""Array plans: controllers and disks (real ones from an inventory, or hypothetical ones from
the catalog), and the arrays an admin proposes to build on them.

Plain values only. Evaluation (capacity, prediction, spread) lives in arrays.py, predict.py
and placement.py; reading and writing plan files in stripewise.planner.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum


class RaidLevel(StrEnum):
    RAID0 = "raid0"
    RAID1 = "raid1"
    RAID5 = "raid5"
    RAID6 = "raid6"
    RAID10 = "raid10"
    RAID50 = "raid50"
    RAID60 = "raid60"
    JBOD = "jbod"

    @property
    def nested(self) -> bool:
        return self in (RaidLevel.RAID50, RaidLevel.RAID60)


class Filesystem(StrEnum):
    EXT4 = "ext4"
    XFS = "xfs"


CHUNK_CHOICES_KIB: tuple[int, ...] = tuple(2**n for n in range(2, 12))  # 4 KiB .. 2 MiB
DEFAULT_CHUNK_KIB = 512
DEFAULT_INNER_RATIO = 0.6  # inner-track / outer-track sequential speed when nothing says
BLOCK_CHOICES_KIB: tuple[int, ...] = (1, 2, 4)  # filesystem block sizes mkfs accepts here


@dataclass(frozen=True)
class PlanController:
    """A controller arrays can be spread over. `bus` groups controllers sharing bandwidth."""

    id: str  # PCI address for real hardware, any name for a hypothetical one
    model: str | None = None
    bus: str | None = None  # e.g. "pci0000:00 / 0000:00:08.0"; None: its own bus
    bus_mb_s: float | None = None  # the controller's (or its link's) ceiling, MB/s
    ports: int | None = None
    hypothetical: bool = False
    price: float | None = None


@dataclass(frozen=True)
class PlanDisk:
    """A disk an array may use. Speeds are sequential MB/s at the outer tracks (the start)."""

    id: str  # kernel name for real disks (sdi), any unique name for hypothetical ones
    controller: str
    capacity_bytes: int
    seq_read_mb_s: float | None = None
    seq_write_mb_s: float | None = None
    inner_ratio: float = DEFAULT_INNER_RATIO
    random_iops: float | None = None
    price: float | None = None
    model: str | None = None
    serial: str | None = None
    wwn: str | None = None
    stable_path: str | None = None  # /dev/disk/by-id/... used in generated commands
    slot: str | None = None  # port or bay, for people
    state: str = "free"  # free, system, in_use, array_member, unknown (real disks)
    hypothetical: bool = False
    state_reason: str | None = None  # why it is not free, e.g. "/ on sdi1"

    @property
    def usable(self) -> bool:
        """Disks holding data or the system may not go into a new array. A disk from a dump
        (use unknown) may be planned, with a warning to check it before building."""
        return self.hypothetical or self.state in ("free", "unknown")


@dataclass(frozen=True)
class PlannedArray:
    name: str
    level: RaidLevel
    members: tuple[str, ...] = ()  # disk ids
    chunk_kib: int = DEFAULT_CHUNK_KIB
    group_size: int | None = None  # members per inner RAID 5/6 set of a RAID 50/60
    spares: tuple[str, ...] = ()  # hot spares, disk ids
    filesystem: Filesystem | None = None
    block_kib: int = 4
    mountpoint: str | None = None


@dataclass(frozen=True)
class Plan:
    """What the planner edits. Arrays refer to disks by id; disks to controllers by id."""

    name: str = "Untitled plan"
    controllers: tuple[PlanController, ...] = ()
    disks: tuple[PlanDisk, ...] = ()
    arrays: tuple[PlannedArray, ...] = ()
    host: str | None = None  # the inventory host key when planned on real hardware
    currency: str = "USD"
    notes: str = ""

    def disk(self, disk_id: str) -> PlanDisk | None:
        return next((d for d in self.disks if d.id == disk_id), None)

    def controller(self, controller_id: str) -> PlanController | None:
        return next((c for c in self.controllers if c.id == controller_id), None)

    def array(self, name: str) -> PlannedArray | None:
        return next((a for a in self.arrays if a.name == name), None)

    def assigned(self) -> dict[str, str]:
        """Disk id -> the array that uses it (as member or spare)."""
        return {d: a.name for a in self.arrays for d in (*a.members, *a.spares)}

    def free_disks(self) -> tuple[PlanDisk, ...]:
        taken = self.assigned()
        return tuple(d for d in self.disks if d.id not in taken and d.usable)

    def with_array(self, array: PlannedArray) -> Plan:
        """Replace the array of the same name, or append it."""
        arrays = [a for a in self.arrays if a.name != array.name]
        index = next((i for i, a in enumerate(self.arrays) if a.name == array.name), len(arrays))
        arrays.insert(index, array)
        return replace(self, arrays=tuple(arrays))

    def without_array(self, name: str) -> Plan:
        return replace(self, arrays=tuple(a for a in self.arrays if a.name != name))

    def move_disks(
        self, disk_ids: tuple[str, ...], to_array: str | None, as_spares: bool = False
    ) -> Plan:
        """Take disks out of whatever array holds them and add them to `to_array` as members
        (or hot spares); None puts them back in the free pool. Existing order is kept."""
        moving = set(disk_ids)
        arrays = []
        for array in self.arrays:
            members = tuple(m for m in array.members if m not in moving)
            spares = tuple(s for s in array.spares if s not in moving)
            if array.name == to_array and as_spares:
                spares += tuple(d for d in disk_ids if d not in spares)
            elif array.name == to_array:
                members += tuple(d for d in disk_ids if d not in members)
            arrays.append(replace(array, members=members, spares=spares))
        return replace(self, arrays=tuple(arrays))


@dataclass(frozen=True)
class Problem:
    """Something wrong with an array. Errors block command export; warnings inform."""

    code: str  # too_few_members, size_mismatch, disk_in_use, duplicate_serial, ...
    message: str
    error: bool = True
    disks: tuple[str, ...] = field(default_factory=tuple)

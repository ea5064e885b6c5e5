"""Array geometry: capacity, fault tolerance, stripe layout and filesystem geometry, with the
levels' names and member counts (what makes an array unbuildable is `model.array_problems`).

Pure functions of a Plan. `PlanIndex` turns the plan's tuples into dicts once, so evaluating
every array after each drop in the GUI stays linear in the number of disks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import NamedTuple

from stripewise.model.plan import (
    Filesystem,
    Plan,
    PlanController,
    PlanDisk,
    PlannedArray,
    RaidLevel,
)

MIN_MEMBERS: dict[RaidLevel, int] = {
    RaidLevel.RAID0: 2,
    RaidLevel.RAID1: 2,
    RaidLevel.RAID5: 3,
    RaidLevel.RAID6: 4,
    RaidLevel.RAID10: 4,
    RaidLevel.RAID50: 6,
    RaidLevel.RAID60: 8,
    RaidLevel.JBOD: 1,
}
MIN_GROUP_SIZE: dict[RaidLevel, int] = {RaidLevel.RAID50: 3, RaidLevel.RAID60: 4}
LEVEL_NAMES: dict[RaidLevel, str] = {
    RaidLevel.RAID0: "RAID 0",
    RaidLevel.RAID1: "RAID 1",
    RaidLevel.RAID5: "RAID 5",
    RaidLevel.RAID6: "RAID 6",
    RaidLevel.RAID10: "RAID 10",
    RaidLevel.RAID50: "RAID 50",
    RaidLevel.RAID60: "RAID 60",
    RaidLevel.JBOD: "JBOD (linear)",
}
SIZE_TOLERANCE = 0.01  # disks within 1 % of each other count as the same size
PARITY_DISKS: dict[RaidLevel, int] = {RaidLevel.RAID50: 1, RaidLevel.RAID60: 2}
# Striping without chunk or stripe geometry: mirrors and concatenation.
UNSTRIPED = frozenset({RaidLevel.RAID1, RaidLevel.JBOD})


def sizes_match(a_bytes: int, b_bytes: int) -> bool:
    """Same size for planning: within 1 % of the larger (vendors round differently)."""
    return abs(a_bytes - b_bytes) <= SIZE_TOLERANCE * max(a_bytes, b_bytes)


def normalized(array: PlannedArray) -> PlannedArray:
    """The array with enum-typed level and filesystem: Qt item data and hand-built arrays may
    carry the plain strings ("raid6"), which compare equal but fail identity checks."""
    level = RaidLevel(array.level)
    filesystem = Filesystem(array.filesystem) if array.filesystem is not None else None
    if level is array.level and filesystem is array.filesystem:
        return array
    return replace(array, level=level, filesystem=filesystem)


def own_bus(controller_id: str) -> str:
    """The bus key of a controller that names no shared bus: it shares with nobody."""
    return f"controller {controller_id}"


@dataclass(frozen=True)
class PlanIndex:
    """Lookups by id over one plan, built once per evaluation (Plan.disk() scans a tuple)."""

    plan: Plan
    disks: Mapping[str, PlanDisk]
    controllers: Mapping[str, PlanController]
    assigned: Mapping[str, str]  # disk id -> the (last) array using it
    bus_of: Mapping[str, str]  # controller id -> bus key
    bus_cap_mb_s: Mapping[str, float]  # bus key -> shared ceiling, for named buses only

    @classmethod
    def of(cls, plan: Plan) -> PlanIndex:
        controllers = {c.id: c for c in plan.controllers}
        bus_of = {c.id: c.bus if c.bus else own_bus(c.id) for c in plan.controllers}
        caps: dict[str, float] = {}
        for c in plan.controllers:
            # A named bus carries at least what its fastest controller can move; the upstream
            # link itself is not in the plan, so this is the most we may honestly assume.
            if c.bus and c.bus_mb_s is not None:
                caps[c.bus] = max(caps.get(c.bus, 0.0), c.bus_mb_s)
        return cls(
            plan=plan,
            disks={d.id: d for d in plan.disks},
            controllers=controllers,
            assigned=plan.assigned(),
            bus_of=bus_of,
            bus_cap_mb_s=caps,
        )

    def bus(self, controller_id: str) -> str:
        return self.bus_of.get(controller_id) or own_bus(controller_id)

    def controller_cap_mb_s(self, controller_id: str) -> float | None:
        controller = self.controllers.get(controller_id)
        return controller.bus_mb_s if controller else None

    def is_free(self, disk: PlanDisk) -> bool:
        """Usable and in no array: what swaps and drops may bring in."""
        return disk.usable and disk.id not in self.assigned


@dataclass(frozen=True)
class Geometry:
    """What an array's level and members amount to.

    `groups`/`group_size` are the redundancy sets: RAID 5/6 sets of a RAID 50/60, mirror pairs
    of a RAID 10 (md near-2), one group for every other level. `stripe_kib` is the full data
    stripe of one group (0 for RAID 1 and JBOD, which do not stripe); for RAID 50/60 it is also
    `outer_chunk_kib`, the chunk of the RAID 0 laid over the sets. An array that cannot be
    built as planned (too few members, bad group size, unknown disks) has zero capacity,
    data disks and tolerance.
    """

    level: RaidLevel
    members: int
    groups: int
    group_size: int
    data_disks: int
    smallest_bytes: int | None
    raw_bytes: int
    usable_bytes: int
    efficiency: float
    fault_tolerance: int  # failed disks survived in the worst case
    failures_per_group: int
    chunk_kib: int
    stripe_kib: int
    outer_chunk_kib: int | None
    best_fault_tolerance: int  # failed disks survived when they fall in the best places

    @property
    def valid(self) -> bool:
        return self.data_disks > 0


class _Shape(NamedTuple):
    groups: int
    group_size: int
    data_disks: int
    tolerance: int
    best_tolerance: int
    per_group: int


def _shape(level: RaidLevel, n: int, group_size: int | None) -> _Shape | None:
    """Groups, data disks and tolerance from level and member count; None if unbuildable."""
    if n < MIN_MEMBERS[level]:
        return None
    if level is RaidLevel.RAID0:
        return _Shape(1, n, n, 0, 0, 0)
    if level is RaidLevel.RAID1:
        return _Shape(1, n, 1, n - 1, n - 1, n - 1)
    if level is RaidLevel.RAID5:
        return _Shape(1, n, n - 1, 1, 1, 1)
    if level is RaidLevel.RAID6:
        return _Shape(1, n, n - 2, 2, 2, 2)
    if level is RaidLevel.RAID10:
        # md near-2: members 0+1, 2+3, ... hold the same chunks. Losing both of a pair kills it.
        return None if n % 2 else _Shape(n // 2, 2, n // 2, 1, n // 2, 1)
    if level is RaidLevel.JBOD:
        return _Shape(1, n, n, 0, 0, 0)
    parity = PARITY_DISKS[level]
    if group_size is None or group_size < MIN_GROUP_SIZE[level] or n % group_size:
        return None
    groups = n // group_size
    if groups < 2:
        return None
    return _Shape(
        groups, group_size, groups * (group_size - parity), parity, parity * groups, parity
    )


def geometry(array: PlannedArray, plan: Plan, index: PlanIndex | None = None) -> Geometry:
    """Capacity follows the smallest member (every member counts as that size), except JBOD,
    which concatenates. Spares add nothing. Figures are before md's metadata (a few MiB each).
    """
    index = index or PlanIndex.of(plan)
    array = normalized(array)
    n = len(array.members)
    known = [index.disks[m].capacity_bytes for m in array.members if m in index.disks]
    smallest = min(known) if known else None
    raw = sum(known)
    shape = _shape(array.level, n, array.group_size) if len(known) == n else None
    if shape is None or smallest is None:
        return Geometry(
            level=array.level,
            members=n,
            groups=0,
            group_size=array.group_size or 0,
            data_disks=0,
            smallest_bytes=smallest,
            raw_bytes=raw,
            usable_bytes=0,
            efficiency=0.0,
            fault_tolerance=0,
            failures_per_group=0,
            chunk_kib=array.chunk_kib,
            stripe_kib=0,
            outer_chunk_kib=None,
            best_fault_tolerance=0,
        )
    usable = raw if array.level is RaidLevel.JBOD else shape.data_disks * smallest
    if array.level in UNSTRIPED:
        stripe = 0
    elif array.level.nested:
        stripe = array.chunk_kib * (shape.group_size - PARITY_DISKS[array.level])
    else:
        stripe = array.chunk_kib * shape.data_disks
    return Geometry(
        level=array.level,
        members=n,
        groups=shape.groups,
        group_size=shape.group_size,
        data_disks=shape.data_disks,
        smallest_bytes=smallest,
        raw_bytes=raw,
        usable_bytes=usable,
        efficiency=usable / raw if raw else 0.0,
        fault_tolerance=shape.tolerance,
        failures_per_group=shape.per_group,
        chunk_kib=array.chunk_kib,
        stripe_kib=stripe,
        outer_chunk_kib=stripe if array.level.nested else None,
        best_fault_tolerance=shape.best_tolerance,
    )


@dataclass(frozen=True)
class FsGeometry:
    """What mkfs must be told about the stripe (REFERENCE §3). ext4 counts in fs blocks;
    XFS takes su in KiB and sw in stripe units. None where nothing stripes."""

    filesystem: Filesystem
    block_kib: int
    stride: int | None
    stripe_width: int | None
    su_kib: int | None
    sw: int | None

    def mkfs_args(self) -> tuple[str, ...]:
        block = str(self.block_kib * 1024)
        if self.filesystem == Filesystem.EXT4:
            args: tuple[str, ...] = ("-b", block)
            if self.stride is not None and self.stripe_width is not None:
                args += ("-E", f"stride={self.stride},stripe_width={self.stripe_width}")
            return args
        args = ("-b", f"size={block}")
        if self.su_kib is not None and self.sw is not None:
            args += ("-d", f"su={self.su_kib}k,sw={self.sw}")
        return args


def fs_geometry(array: PlannedArray, geometry: Geometry) -> FsGeometry | None:
    """Stripe unit and width for mkfs; None when the array gets no filesystem.

    Single-level arrays: unit = chunk, width = data disks. RAID 50/60: the filesystem sits on
    the outer RAID 0, whose chunk is the inner sets' full stripe, so unit = outer chunk and
    width = number of sets. That is what md itself publishes (minimum_io_size = outer chunk,
    optimal_io_size = outer chunk x sets) and keeps every full-width write a full stripe of
    every set, so no set has to read-modify-write. RAID 1, JBOD and one stripe unit: none.
    """
    if array.filesystem is None:
        return None
    filesystem = Filesystem(array.filesystem)  # Qt may hand back the plain string
    units = geometry.groups if geometry.level.nested else geometry.data_disks
    unit_kib = geometry.outer_chunk_kib if geometry.level.nested else geometry.chunk_kib
    block = array.block_kib
    if (
        geometry.level in UNSTRIPED
        or not geometry.valid
        or units < 2
        or not unit_kib
        or block <= 0
        or unit_kib % block
    ):
        return FsGeometry(filesystem, block, None, None, None, None)
    stride = unit_kib // block
    return FsGeometry(filesystem, block, stride, stride * units, unit_kib, units)

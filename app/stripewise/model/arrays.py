"""Array geometry: capacity, fault tolerance, stripe layout, filesystem geometry, and the
problems that make a planned array unbuildable or unwise.

Pure functions of a Plan. `PlanIndex` turns the plan's tuples into dicts once, so evaluating
every array after each drop in the GUI stays linear in the number of disks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import NamedTuple

from stripewise.model.plan import (
    BLOCK_CHOICES_KIB,
    CHUNK_CHOICES_KIB,
    Filesystem,
    Plan,
    PlanController,
    PlanDisk,
    PlannedArray,
    Problem,
    RaidLevel,
    hardware_problems,
)
from stripewise.model.units import human_size
from stripewise.model.wording import count_noun

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


_NOT_FREE: dict[str, str] = {
    "system": "{d} holds the running system",
    "in_use": "{d} is in use (mounted, swap, or held by a volume)",
    "array_member": "{d} is a member of an existing md array",
    "unknown": "{d} may be in use: the inventory source does not record mounts",
}


# What mdadm accepts in /dev/md/<name>; the command generator relies on this check.
MD_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")


def check_array(
    array: PlannedArray, plan: Plan, index: PlanIndex | None = None
) -> tuple[Problem, ...]:
    """Everything wrong with one array on its own; plan-wide clashes are plan_problems()."""
    index = index or PlanIndex.of(plan)
    array = normalized(array)
    level = LEVEL_NAMES[array.level]
    problems: list[Problem] = []
    if not MD_NAME.match(array.name):
        problems.append(
            Problem(
                "bad_name",
                f"{array.name!r} cannot name an md array: use letters, digits, '_', '.' and "
                "'-', at most 32, starting with a letter or digit.",
            )
        )
    everyone = (*array.members, *array.spares)
    unknown = tuple(dict.fromkeys(d for d in everyone if d not in index.disks))
    if unknown:
        problems.append(
            Problem("unknown_disk", f"Not in this plan: {', '.join(unknown)}.", disks=unknown)
        )
    repeated = tuple(d for d, count in _counts(everyone).items() if count > 1)
    if repeated:
        problems.append(
            Problem(
                "duplicate_member", f"Listed more than once: {', '.join(repeated)}.", disks=repeated
            )
        )
    n = len(array.members)
    need = MIN_MEMBERS[array.level]
    if n < need:
        problems.append(
            Problem(
                "too_few_members",
                f"{level} needs at least {count_noun(need, 'member')}; {array.name} has {n}.",
            )
        )
    if array.level is RaidLevel.RAID10 and n % 2:
        problems.append(
            Problem(
                "odd_raid10",
                f"{level} pairs its members (md near-2 layout): {_unpaired(n)}; add or remove one.",
            )
        )
    problems += _group_problems(array, level)
    if array.level not in UNSTRIPED and array.chunk_kib not in CHUNK_CHOICES_KIB:
        problems.append(
            Problem(
                "bad_chunk",
                f"Chunk {array.chunk_kib} KiB: md takes a power of "
                f"two from {CHUNK_CHOICES_KIB[0]} to {CHUNK_CHOICES_KIB[-1]} KiB.",
            )
        )
    if array.filesystem is not None and array.block_kib not in BLOCK_CHOICES_KIB:
        choices = ", ".join(str(b) for b in BLOCK_CHOICES_KIB)
        problems.append(
            Problem(
                "bad_block",
                f"Block size {array.block_kib} KiB: {array.filesystem} here takes {choices} KiB.",
            )
        )
    members = [index.disks[m] for m in dict.fromkeys(array.members) if m in index.disks]
    spares = [index.disks[s] for s in dict.fromkeys(array.spares) if s in index.disks]
    problems += _size_problems(array, members, spares)
    problems += _use_unknown((*members, *spares))
    for disk in (*members, *spares):
        if disk.hypothetical or disk.state in ("free", "unknown"):
            continue
        reason = _NOT_FREE.get(disk.state, "{d} is not free (" + disk.state + ")")
        detail = f" ({disk.state_reason})" if disk.state_reason else ""
        problems.append(
            Problem(
                "disk_not_free",
                reason.format(d=disk.id) + detail + ": refused for real hardware.",
                disks=(disk.id,),
            )
        )
    problems += _identity_problems((*members, *spares))
    if spares and array.level in (RaidLevel.RAID0, RaidLevel.JBOD):
        problems.append(
            Problem(
                "useless_spare",
                f"{level} has no redundancy to rebuild: its spares would sit idle.",
                error=False,
                disks=array.spares,
            )
        )
    return tuple(problems)


def _use_unknown(disks: tuple[PlanDisk, ...]) -> list[Problem]:
    """One warning for every disk whose use the source did not record (a recording, a dump):
    the same for each of them, so said once, naming them all."""
    ids = tuple(d.id for d in disks if not d.hypothetical and d.state == "unknown")
    if not ids:
        return []
    if len(ids) == 1:
        said = _NOT_FREE["unknown"].format(d=ids[0]) + ": check it is unused before building."
    else:
        said = (
            f"{len(ids)} disks may be in use ({', '.join(ids)}): the inventory source does not "
            "record mounts: check they are unused before building."
        )
    return [Problem("disk_use_unknown", said, error=False, disks=ids)]


def _unpaired(members: int) -> str:
    """An odd count of RAID 10 members, said with its verb: "1 member has no partner"."""
    if members == 1:
        return "1 member has no partner"
    return f"{count_noun(members, 'member')} leave one without a partner"


def _counts(items: tuple[str, ...]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return counts


def _group_problems(array: PlannedArray, level: str) -> list[Problem]:
    if not array.level.nested:
        return []
    inner = "RAID 5" if array.level is RaidLevel.RAID50 else "RAID 6"
    least = MIN_GROUP_SIZE[array.level]
    size, n = array.group_size, len(array.members)
    if size is None:
        text = f"Set how many members each inner {inner} set of the {level} has."
    elif size < least:
        text = f"Each inner {inner} set needs at least {count_noun(least, 'member')}, not {size}."
    elif n < MIN_MEMBERS[array.level]:
        return []  # too_few_members says it; sets are judged once there are enough members
    elif n % size:
        text = f"{count_noun(n, 'member')} do not split into {inner} sets of {size}."
    elif n // size < 2:
        text = f"One {inner} set of {size} is a plain {inner}: a {level} needs at least two."
    else:
        return []
    return [Problem("group_size", text)]


def _size_problems(
    array: PlannedArray, members: list[PlanDisk], spares: list[PlanDisk]
) -> list[Problem]:
    # a size of 0 is one a udev dump did not record (planner.sizes): compared with none
    members = [d for d in members if d.capacity_bytes]
    spares = [d for d in spares if d.capacity_bytes]
    if not members:
        return []
    problems: list[Problem] = []
    smallest = min(members, key=lambda d: d.capacity_bytes)
    largest = max(d.capacity_bytes for d in members)
    if array.level is not RaidLevel.JBOD and not sizes_match(smallest.capacity_bytes, largest):
        wasted = sum(d.capacity_bytes - smallest.capacity_bytes for d in members)
        problems.append(
            Problem(
                "size_mismatch",
                f"Member sizes differ: usable capacity follows the smallest, {smallest.id} "
                f"({human_size(smallest.capacity_bytes)}); {human_size(wasted)} of the larger "
                "disks goes unused.",
                error=False,
                disks=(smallest.id,),
            )
        )
    for spare in spares:
        if spare.capacity_bytes < smallest.capacity_bytes:
            problems.append(
                Problem(
                    "spare_too_small",
                    f"Spare {spare.id} ({human_size(spare.capacity_bytes)}) is smaller than the "
                    f"smallest member {smallest.id} ({human_size(smallest.capacity_bytes)}): "
                    "md cannot rebuild onto it.",
                    error=False,
                    disks=(spare.id,),
                )
            )
    return problems


def _identity_problems(disks: tuple[PlanDisk, ...]) -> list[Problem]:
    """Two ids with one serial or WWN are one disk seen twice (multipath, stale dump)."""
    problems: list[Problem] = []
    for attribute in ("serial", "wwn"):
        seen: dict[str, list[str]] = {}
        for disk in disks:
            value = getattr(disk, attribute)
            if value:
                seen.setdefault(value, []).append(disk.id)
        for value, ids in seen.items():
            if len(ids) > 1:
                problems.append(
                    Problem(
                        "duplicate_serial",
                        f"{' and '.join(ids)} report the same {attribute} {value}: probably one "
                        "disk seen twice (multipath?); refused.",
                        disks=tuple(ids),
                    )
                )
    return problems


def plan_problems(plan: Plan) -> tuple[Problem, ...]:
    """What is wrong across the plan: its hardware itself (`hardware_problems`: figures out of
    bounds, more disks than a controller has ports), then clashes between arrays (a disk used
    twice, two arrays with one name). The hardware comes first, as `planner.checks` lists it."""
    problems: list[Problem] = list(hardware_problems(plan))
    users: dict[str, list[str]] = {}
    for array in plan.arrays:
        for disk_id in dict.fromkeys((*array.members, *array.spares)):
            users.setdefault(disk_id, []).append(array.name)
    for disk_id, users_of in users.items():
        if len(users_of) > 1:
            problems.append(
                Problem(
                    "disk_in_two_arrays",
                    f"{disk_id} is in {' and '.join(users_of)}: a disk can serve one array.",
                    disks=(disk_id,),
                )
            )
    counts = _counts(tuple(a.name for a in plan.arrays))
    problems += [duplicate_name(name, count) for name, count in counts.items() if count > 1]
    return tuple(problems)


def duplicate_name(name: str, count: int) -> Problem:
    return Problem(
        "duplicate_name", f"{count_noun(count, 'array')} are named {name}: names must differ."
    )

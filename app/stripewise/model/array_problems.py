"""The problems that make a planned array unbuildable or unwise: each array on its own
(`check_array`: members, levels, sizes, identities, disks in use) and across the plan
(`plan_problems`: its hardware, a disk in two arrays, two arrays of one name), and a member
whose SMART health fails or warns (`health_problems`).

Pure functions of a Plan, on the geometry's vocabulary in `model.arrays`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from stripewise.model.arrays import (
    LEVEL_NAMES,
    MIN_GROUP_SIZE,
    MIN_MEMBERS,
    UNSTRIPED,
    PlanIndex,
    normalized,
    sizes_match,
)
from stripewise.model.health import HealthVerdict
from stripewise.model.plan import (
    BLOCK_CHOICES_KIB,
    CHUNK_CHOICES_KIB,
    Plan,
    PlanDisk,
    PlannedArray,
    Problem,
    RaidLevel,
    hardware_problems,
)
from stripewise.model.units import human_size
from stripewise.model.wording import count_noun

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
    if array.spares and array.level in (RaidLevel.RAID0, RaidLevel.JBOD):
        problems.append(  # mdadm: "This level does not support spare devices" (level <= 0)
            Problem(
                "useless_spare",
                f"{level} takes no hot spares (mdadm refuses them): it has no redundancy to "
                "rebuild; remove the spares or choose a level with redundancy.",
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


def health_problems(plan: Plan, health: Mapping[str, HealthVerdict]) -> tuple[Problem, ...]:
    """A disk of an array whose SMART health fails (an error: DOMAIN, a disk with pending
    sectors must not go into a new array) or warns, worn or reallocating (a caution). `health`
    is this machine's, by kernel name: only for a plan of this machine's disks."""
    problems: list[Problem] = []
    for disk_id in dict.fromkeys(d for a in plan.arrays for d in (*a.members, *a.spares)):
        judged = health.get(disk_id)
        if judged is None or not judged.concerning:
            continue
        why = "; ".join(judged.reasons[:3]) + ("; ..." if len(judged.reasons) > 3 else "")
        if judged.failing:
            problems.append(
                Problem(
                    "failing_disk",
                    f"{disk_id} is failing ({why}): replace it before it goes into an array.",
                    disks=(disk_id,),
                )
            )
        else:
            problems.append(
                Problem(
                    "worn_disk",
                    f"{disk_id}'s health warns ({why}): an array is only as sound as its "
                    "weakest member.",
                    error=False,
                    disks=(disk_id,),
                )
            )
    return tuple(problems)

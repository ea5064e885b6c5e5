"""How well an array's members are spread over controllers and buses, and swaps that improve it.

The score (0-100, docs/prediction-model.md) compares the members' layout with the most even one
the plan's suitable disks allow, so 100 means "as good as this hardware gets", not "perfect":

    score = 70 × controller balance + 30 × bus balance − 30 if one controller can take the array
            down although a layout exists where none could

A balance is the share of member pairs that sit apart, relative to the best achievable share:
(P_all − P_same) / (P_all − P_same_best), where P_same counts pairs of members on one controller
(or bus). Pairs are what matter twice over: two members on one link split its bandwidth, and
two members in one failure domain fail together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import NamedTuple

from stripewise.model.arrays import PlanIndex, normalized, sizes_match
from stripewise.model.ceilings import Ceilings, LinkCeiling
from stripewise.model.plan import Plan, PlanDisk, PlannedArray, RaidLevel
from stripewise.model.wording import count_noun

CONTROLLER_WEIGHT = 70.0
BUS_WEIGHT = 30.0
FAILURE_DOMAIN_PENALTY = 30.0  # one controller failure loses the array, and that was avoidable
_EPSILON = 1e-9
_NO_REDUNDANCY = (RaidLevel.RAID0, RaidLevel.JBOD)  # a failure anywhere loses them, by choice
_TOLERANCE: dict[RaidLevel, int] = {
    RaidLevel.RAID0: 0,
    RaidLevel.JBOD: 0,
    RaidLevel.RAID5: 1,
    RaidLevel.RAID6: 2,
}


@dataclass(frozen=True)
class Spread:
    score: int
    per_controller: dict[str, int]
    per_bus: dict[str, int]
    explanation: tuple[str, ...]
    members: int  # members on the plan's disks: what the score was worked out over
    # one controller's failure takes a redundant array down; with a single controller the
    # score is still 100 ("as good as this hardware gets"), so the headline says it
    single_point_of_failure: bool = False

    @property
    def scored(self) -> bool:
        """Fewer than two members have nothing to spread: there is no score to show (the
        number stays 100 for sorting, but "100 / 100" for an empty array says too much)."""
        return self.members >= 2

    def headline(self, *, short: bool = False) -> str:
        """ "spread 85 / 100", or why there is no score yet; a single point of failure said
        in words, or `short` (a card's score bar) as a warning sign."""
        if self.members == 0:
            return "no members yet"
        if self.members == 1:  # a card's bar: its explanation below says "one member"
            return "nothing to spread yet" if short else "one member: nothing to spread yet"
        if self.single_point_of_failure:
            if short:
                return f"\u26a0 spread {self.score} / 100"
            return f"spread {self.score} / 100, single point of failure"
        return f"spread {self.score} / 100"


@dataclass(frozen=True)
class Swap:
    out_disk: str
    in_disk: str
    reason: str


class _Layout(NamedTuple):
    """The numbers behind a score, without the words."""

    score: float  # not clamped below 0, so hill-climbing still sees progress there
    per_controller: dict[str, int]
    per_bus: dict[str, int]
    controller_room: dict[str, int]  # suitable disks per controller (members included)
    controller_balance: float
    bus_balance: float
    exposed: tuple[str, ...]  # what one controller failure would take down, in words
    avoidable: bool


def _pairs(counts: Iterable[int]) -> int:
    return sum(c * (c - 1) // 2 for c in counts)


@lru_cache(maxsize=4096)
def _best_pairs(room: tuple[int, ...], n: int) -> tuple[int, int]:
    """Fewest same-place pairs (and the largest load) when n members fill places of the given
    room as evenly as possible: water-filling, which minimises the sum of squares."""
    load = [0] * len(room)
    for _ in range(n):
        free = [i for i in range(len(room)) if load[i] < room[i]]
        if not free:
            break
        i = min(free, key=lambda j: load[j])
        load[i] += 1
    return _pairs(load), max(load, default=0)


def _balance(counts: dict[str, int], room: dict[str, int], n: int) -> tuple[float, int]:
    """Balance 0..1 against the best layout, and the best layout's largest load."""
    total = n * (n - 1) // 2
    best, best_max = _best_pairs(tuple(sorted(room.values())), n)
    if total - best <= 0:
        return 1.0, best_max
    return max(0.0, min(1.0, (total - _pairs(counts.values())) / (total - best))), best_max


class _Context:
    """What stays fixed while members are swapped: the plan index and the candidate disks."""

    def __init__(self, array: PlannedArray, index: PlanIndex) -> None:
        array = normalized(array)
        self.array = array
        self.index = index
        own = set(array.members) | set(array.spares)
        # Free disks may join; the array's own usable members stay candidates if swapped out.
        self.candidates: tuple[PlanDisk, ...] = tuple(
            d for d in index.plan.disks if d.usable and (d.id in own or d.id not in index.assigned)
        )
        self.free_ids = frozenset(d.id for d in self.candidates if d.id not in own)
        self.spares = own - set(array.members)
        # what a swap may bring in: known free, never a disk of unknown use (manual: "swaps
        # for free disks"); the score still counts those as room, as a drag may use them
        self.incoming = tuple(d for d in self.candidates if d.id in self.free_ids and d.known_free)

    def layout(self, members: Sequence[str]) -> _Layout:
        index = self.index
        disks = [index.disks[m] for m in members if m in index.disks]
        n = len(disks)
        per_controller: dict[str, int] = {}
        per_bus: dict[str, int] = {}
        for d in disks:
            per_controller[d.controller] = per_controller.get(d.controller, 0) + 1
            bus = index.bus(d.controller)
            per_bus[bus] = per_bus.get(bus, 0) + 1
        room = dict(per_controller)
        sizes = {d.capacity_bytes for d in disks}
        chosen = {d.id for d in disks}
        for d in self.candidates:
            if d.id in chosen or d.id in self.spares:
                continue
            if not sizes or any(sizes_match(d.capacity_bytes, s) for s in sizes):
                room[d.controller] = room.get(d.controller, 0) + 1
        bus_room: dict[str, int] = {}
        for controller, count in room.items():
            bus = index.bus(controller)
            bus_room[bus] = bus_room.get(bus, 0) + count
        controller_balance, best_max = _balance(per_controller, room, n)
        bus_balance, _ = _balance(per_bus, bus_room, n)
        exposed, avoidable = _exposure(self.array, disks, per_controller, room, best_max)
        score = CONTROLLER_WEIGHT * controller_balance + BUS_WEIGHT * bus_balance
        if exposed and avoidable:
            score -= FAILURE_DOMAIN_PENALTY
        return _Layout(
            score=min(100.0, score) if n > 1 else 100.0,
            per_controller=per_controller,
            per_bus=per_bus,
            controller_room=room,
            controller_balance=controller_balance,
            bus_balance=bus_balance,
            exposed=exposed,
            avoidable=avoidable,
        )


def _exposure(
    array: PlannedArray,
    disks: list[PlanDisk],
    per_controller: dict[str, int],
    room: dict[str, int],
    best_max: int,
) -> tuple[tuple[str, ...], bool]:
    """Which controllers one failure of would lose the array, and whether a layout of the
    suitable disks exists where no single controller could (approximate for 50/60)."""
    n = len(disks)
    level = array.level
    if n < 2:
        return (), False
    if level is RaidLevel.RAID10:
        found = []
        for a, b in zip(disks[0::2], disks[1::2], strict=False):
            if a.controller == b.controller:
                found.append(f"mirror pair {a.id} + {b.id} on controller {a.controller}")
        return tuple(found), best_max <= n // 2
    if level.nested:
        size = array.group_size or 0
        if size < 2 or n % size:
            return (), False  # no sets yet: check_array reports the group size
        tolerance = 1 if level is RaidLevel.RAID50 else 2
        found = []
        for start in range(0, n, size):
            group: dict[str, int] = {}
            for d in disks[start : start + size]:
                group[d.controller] = group.get(d.controller, 0) + 1
            for controller, count in group.items():
                if count > tolerance:
                    found.append(
                        f"{count_noun(count, 'member')} of set {start // size + 1} on "
                        f"controller {controller}"
                    )
        places = sum(1 for r in room.values() if r > 0)
        groups = max(1, n // size)
        return tuple(found), -(-size // tolerance) <= places and best_max <= groups * tolerance
    tolerance = n - 1 if level is RaidLevel.RAID1 else _TOLERANCE[level]
    found = [
        f"{count} of {count_noun(n, 'member')} on controller {controller}"
        for controller, count in per_controller.items()
        if count > tolerance
    ]
    return tuple(found), best_max <= tolerance


def spread(
    array: PlannedArray,
    plan: Plan,
    index: PlanIndex | None = None,
    ceilings: Ceilings | None = None,
) -> Spread:
    """Score and explain how the members sit on controllers and buses; the hint on a shared
    controller's bandwidth uses its measured ceiling when `ceilings` has one."""
    index = index or PlanIndex.of(plan)
    context = _Context(array, index)
    layout = context.layout(array.members)
    members = list(array.members)
    better = _reachable(context, members, layout.score, any_gain=True) != members
    return Spread(
        score=max(0, round(layout.score)),
        per_controller=_ordered(layout.per_controller, index),
        per_bus=layout.per_bus,
        explanation=_explain(context.array, layout, better, ceilings or Ceilings.of(index)),
        members=sum(layout.per_controller.values()),
        single_point_of_failure=bool(layout.exposed) and array.level not in _NO_REDUNDANCY,
    )


def _ordered(counts: dict[str, int], index: PlanIndex) -> dict[str, int]:
    """Controllers in plan order, unknown ones after."""
    known = {c: counts[c] for c in index.controllers if c in counts}
    return known | {c: v for c, v in counts.items() if c not in known}


def _explain(
    array: PlannedArray, layout: _Layout, better: bool, ceilings: Ceilings
) -> tuple[str, ...]:
    """`better`: whether Spread… has swaps (suggest_spread): the words promise no more."""
    index = ceilings.index
    n = sum(layout.per_controller.values())
    if n == 0:
        return ("No members yet.",)
    if n == 1:
        return ("One member: nothing to spread yet.",)
    lines = []
    used = _ordered(layout.per_controller, index)
    possible = sum(1 for r in layout.controller_room.values() if r > 0)
    where = ", ".join(f"{k} on {c}" for c, k in used.items())
    lines.append(
        f"{count_noun(n, 'member')} on {len(used)} of the "
        f"{count_noun(possible, 'controller')} with suitable disks ({where})."
    )
    if array.level in (RaidLevel.RAID0, RaidLevel.JBOD):
        lines.append(
            f"{'RAID 0' if array.level is RaidLevel.RAID0 else 'JBOD'} has no "
            "redundancy: losing any controller loses the array; spreading still shares "
            "the bandwidth."
        )
    elif layout.exposed:
        tolerates = _tolerance_words(array, n)
        what = "; ".join(layout.exposed)
        which = "one controller failure" if len(layout.exposed) == 1 else "any one of them failing"
        lines.append(f"{what[0].upper()}{what[1:]}: {which} takes the array down ({tolerates}).")
        if array.level is RaidLevel.RAID10:
            lines.append(
                "mdadm pairs members in the order given (1st with 2nd, 3rd with 4th, "
                "...): reorder them or swap in disks from other controllers."
            )
    tightest = _tightest_link(layout, ceilings)
    if tightest is not None:
        where, link, count = tightest
        cap = link.mb_s or 0.0
        whose = f" ({link.measured.citation()})" if link.measured is not None else ""
        shared = (
            f"{count} of {count_noun(n, 'member')} share {where}'s {cap:,.0f} MB/s link{whose}, "
            f"{cap / count:,.0f} MB/s each at most"
            if count > 1
            else f"1 of {count_noun(n, 'member')} has {where}'s {cap:,.0f} MB/s link{whose} "
            "to itself"
        )
        lines.append(f"{shared}; {_what_bounds_reads(array.level, n, count, cap)}.")
    if layout.bus_balance < 1.0 and len(layout.per_bus) > 0:
        # the split only: evening the buses may crowd a controller (the score weighs both)
        split = ", ".join(f"{k} on bus {b}" for b, k in layout.per_bus.items())
        lines.append(f"Members per bus: {split}.")
    if layout.score >= 100.0 - _EPSILON:
        lines.append("As evenly spread as the suitable disks allow.")
    elif better:
        # the GUI's Spread… button sits beside these words; the terminal has no such button
        lines.append("A more even spread is possible with the free disks.")
    else:  # what Spread… answers too: no swap for a free disk raises the score
        lines.append("As evenly spread as the free disks allow.")
    return tuple(lines)


def _tightest_link(layout: _Layout, ceilings: Ceilings) -> tuple[str, LinkCeiling, int] | None:
    """The link that leaves each of its members the least (its ceiling over the members on
    it), among the controllers and the buses they share, as the prediction reads them; None
    when no link has a ceiling or none is shared (each member alone on its links)."""
    found: list[tuple[str, LinkCeiling, int]] = []
    for controller, count in layout.per_controller.items():
        link = ceilings.controller(controller)
        if link.mb_s:
            found.append((f"controller {controller}", link, count))
    for bus, count in layout.per_bus.items():
        shared = ceilings.bus(bus)
        if shared is not None and shared.mb_s:
            found.append((f"bus {bus}", shared, count))
    if not found or all(count == 1 for _where, _link, count in found):
        return None
    return min(found, key=lambda f: (f[1].mb_s or 0.0) / f[2])


def _what_bounds_reads(level: RaidLevel, n: int, count: int, cap: float) -> str:
    """What the shared link means for the array's reads, as model/predict.py reads them: only
    striped levels read every member at once; RAID 1 and linear read one member at a time."""
    share = cap / count
    if level is RaidLevel.RAID1:
        return (
            f"RAID 1 writes every block to each mirror, so it writes at most {share:,.0f} MB/s; "
            "a reader reads one mirror at a time, bounded by that disk and its own links, and "
            "only parallel readers share them"
        )
    if level is RaidLevel.JBOD:
        return (
            "linear reads and writes one member at a time, so a stream is bounded by that disk "
            "and its own links, not by the share (it matters only to streams on several members "
            "at once)"
        )
    return (
        "striping gives every member the same share, so the array reads at most "
        f"{n} x {share:,.0f} = {cap * n / count:,.0f} MB/s"
    )


def _tolerance_words(array: PlannedArray, n: int) -> str:
    if array.level is RaidLevel.RAID10:
        return "it survives one failed disk per mirror pair"
    if array.level.nested:
        per = 1 if array.level is RaidLevel.RAID50 else 2
        return f"each set tolerates {count_noun(per, 'failed disk')}"
    tolerance = n - 1 if array.level is RaidLevel.RAID1 else _TOLERANCE[array.level]
    return f"it tolerates {count_noun(tolerance, 'failed disk')}"


def suggest_spread(
    array: PlannedArray, plan: Plan, index: PlanIndex | None = None
) -> tuple[Swap, ...]:
    """Swaps of members for free disks (never one of unknown use) of matching size (within
    1 %) that raise the score: hill-climbing, best single swap first, until no swap helps.
    Deterministic: ties go to the closest size, then to member order and plan disk order."""
    index = index or PlanIndex.of(plan)
    context = _Context(array, index)
    members = list(array.members)
    current = _reachable(context, members, context.layout(members).score)
    return tuple(
        _swap(old, new, array, index)
        for old, new in zip(array.members, current, strict=True)
        if old != new
    )


def _reachable(
    context: _Context, members: list[str], score: float, *, any_gain: bool = False
) -> list[str]:
    """The members after the swaps that raise the score (the same list when none does): the
    one answer behind both the Spread… swaps and the hint that a better spread exists.
    `any_gain`: stop at the first swap that raises it (the hint needs no more, and a drop
    recomputes every array's)."""
    if score >= 100.0 - _EPSILON:
        return members  # nothing to gain; and evaluating the swaps costs a drop's time
    index = context.index
    current = members.copy()
    incoming = context.incoming
    for _ in range(len(current) * max(1, len(incoming)) + 1):
        best: tuple[float, float, int, str] | None = None
        in_use = set(current)
        for position, member in enumerate(current):
            out = index.disks.get(member)
            if out is None:
                continue
            tried: set[tuple[str, int]] = set()  # disks alike in controller and size score alike
            for disk in incoming:
                alike = (disk.controller, disk.capacity_bytes)
                if disk.id in in_use or alike in tried:
                    continue
                if not sizes_match(disk.capacity_bytes, out.capacity_bytes):
                    continue
                tried.add(alike)
                trial = current.copy()
                trial[position] = disk.id
                trial_score = context.layout(trial).score
                if any_gain and trial_score > score + _EPSILON:
                    return trial
                closeness = -abs(disk.capacity_bytes - out.capacity_bytes)
                if best is None or (trial_score, closeness) > best[:2]:
                    best = (trial_score, closeness, position, disk.id)
        if best is None or best[0] <= score + _EPSILON:
            break
        score, current[best[2]] = best[0], best[3]
    return current


def _swap(old: str, new: str, array: PlannedArray, index: PlanIndex) -> Swap:
    was = index.disks[old].controller
    now = index.disks[new].controller
    on_was = sum(1 for m in array.members if m in index.disks and index.disks[m].controller == was)
    on_now = sum(1 for m in array.members if m in index.disks and index.disks[m].controller == now)
    reason = (
        f"{old} on controller {was} ({count_noun(on_was, 'member')} there) "
        f"→ {new} on controller {now} ({on_now} before)"
    )
    if index.bus(was) != index.bus(now):
        reason += ", on another bus"
    return Swap(out_disk=old, in_disk=new, reason=reason + ".")


def apply_swaps(plan: Plan, array_name: str, swaps: Iterable[Swap]) -> Plan:
    """Replace members in place (member order matters to md), leaving spares alone."""
    array = plan.array(array_name)
    if array is None:
        raise ValueError(f"The plan has no array named {array_name}.")
    members = list(array.members)
    for swap in swaps:
        if swap.out_disk not in members:
            raise ValueError(f"{swap.out_disk} is not a member of {array_name}.")
        if swap.in_disk in members:
            raise ValueError(f"{swap.in_disk} is already a member of {array_name}.")
        members[members.index(swap.out_disk)] = swap.in_disk
    return plan.with_array(replace(array, members=tuple(members)))


def spread_improvers(
    array: PlannedArray, plan: Plan, index: PlanIndex | None = None
) -> frozenset[str]:
    """Free disks (matching the members' sizes) whose addition raises the score, or keeps a
    perfect score perfect, so the GUI can show where the next disk belongs. One evaluation per
    controller: every free disk on a controller changes the layout the same way."""
    index = index or PlanIndex.of(plan)
    context = _Context(array, index)
    members = tuple(array.members)
    current = context.layout(members).score
    sizes = {index.disks[m].capacity_bytes for m in members if m in index.disks}
    by_controller: dict[str, list[str]] = {}
    for disk in context.candidates:
        if disk.id not in context.free_ids:
            continue
        if sizes and not any(sizes_match(disk.capacity_bytes, s) for s in sizes):
            continue
        by_controller.setdefault(disk.controller, []).append(disk.id)
    found: set[str] = set()
    for ids in by_controller.values():
        after = context.layout((*members, ids[0])).score
        perfect = current >= 100.0 - _EPSILON and after >= 100.0 - _EPSILON
        if perfect or after > current + _EPSILON:
            found.update(ids)
    return frozenset(found)

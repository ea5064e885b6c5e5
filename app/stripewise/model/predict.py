"""Sequential single-stream throughput of a planned array, as a range with the bottleneck named.

A deliberately small model (docs/prediction-model.md): disks at their outer and inner tracks,
data disks per level, a parity write factor, and the ceilings of the controllers and buses the
members share. It exists to rank plans and explain them, not to promise numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from stripewise.model.arrays import Geometry, PlanIndex, normalized
from stripewise.model.ceilings import GUESS_ONLY, Basis, Ceilings, LinkCeiling, PredictionBasis
from stripewise.model.plan import Plan, PlannedArray, Problem, RaidLevel
from stripewise.model.wording import count_noun

# Links deliver 70-100 % of their nominal rate: protocol overhead (PCIe TLP headers, PCI bus
# arbitration) and other traffic. The seeds' two 3ware cards sharing one 266 MB/s PCI bus read
# 189-198 MB/s, 71-74 % of nominal.
LINK_EFFICIENCY_LOW = 0.7
# md streams full stripes well but not perfectly: parity computation, stripe-cache pressure and
# partial stripes that need read-modify-write. Full-stripe streaming reaches about 90 % of the
# data disks' rate; partial or unaligned writes fall to about 60 %.
PARITY_WRITE_HIGH = 0.9
PARITY_WRITE_LOW = 0.6
PARITY_LEVELS = frozenset({RaidLevel.RAID5, RaidLevel.RAID6, RaidLevel.RAID50, RaidLevel.RAID60})
BOTTLENECKS = ("disks", "parity", "controller", "bus")  # ties go to the first
_LIMITS = {
    "disks": "the disks",
    "parity": "parity (computation and partial stripes)",
    "controller": "a controller",
    "bus": "a bus",
}


@dataclass(frozen=True)
class Range:
    """Decimal MB/s, low (inner tracks, real-world links) to high (outer tracks, nominal)."""

    low: float
    high: float

    def overlaps(self, low: float, high: float) -> bool:
        return self.low <= high and low <= self.high

    def span(self, dash: str = "-") -> str:
        """`1,200-2,000`, or one figure when both ends round alike (no "1,100-1,100")."""
        low, high = f"{self.low:,.0f}", f"{self.high:,.0f}"
        return high if low == high else f"{low}{dash}{high}"

    def __str__(self) -> str:
        return f"{self.span()} MB/s"


@dataclass(frozen=True)
class Prediction:
    """`bottleneck` is the side (read or write) that keeps furthest below the members' summed
    raw speed; ties name the read side. `basis` says what its controller and bus ceilings
    rest on (measured, catalog or a guess), with the runs of the measured ones."""

    read_mb_s: Range
    write_mb_s: Range
    bottleneck: str
    read_bottleneck: str
    write_bottleneck: str
    explanation: tuple[str, ...]
    basis: PredictionBasis = GUESS_ONLY


class _Member(NamedTuple):
    id: str
    controller: str
    bus: str
    outer_mb_s: float
    inner_mb_s: float


class _Side(NamedTuple):
    range: Range
    bottleneck: str
    lines: tuple[str, ...]


class _Term(NamedTuple):
    name: str
    high: float
    low: float
    text: str


def _mb(value: float) -> str:
    return f"{value:,.0f} MB/s"


def predict(
    array: PlannedArray,
    plan: Plan,
    geometry: Geometry,
    index: PlanIndex | None = None,
    ceilings: Ceilings | None = None,
) -> Prediction | None:
    """None when there is nothing honest to say: no members, an unknown disk or speed, or an
    array that cannot be built as planned. `ceilings` brings measured ceilings of the plan's
    host; without it every link has its plan figure (catalog) or none (guess)."""
    index = index or PlanIndex.of(plan)
    ceilings = ceilings or Ceilings.of(index)
    array = normalized(array)
    disks = [index.disks.get(m) for m in array.members]
    if not disks or not geometry.valid:
        return None
    reads: list[_Member] = []
    writes: list[_Member] = []
    assumed: list[str] = []
    for disk in disks:
        if disk is None or (disk.seq_read_mb_s is None and disk.seq_write_mb_s is None):
            return None
        read = disk.seq_read_mb_s if disk.seq_read_mb_s is not None else disk.seq_write_mb_s
        write = disk.seq_write_mb_s if disk.seq_write_mb_s is not None else disk.seq_read_mb_s
        assert read is not None and write is not None
        if disk.seq_read_mb_s is None or disk.seq_write_mb_s is None:
            assumed.append(disk.id)
        ratio = min(max(disk.inner_ratio, 0.0), 1.0)
        bus = index.bus(disk.controller)
        reads.append(_Member(disk.id, disk.controller, bus, read, read * ratio))
        writes.append(_Member(disk.id, disk.controller, bus, write, write * ratio))

    level = array.level
    n = len(reads)
    if level in (RaidLevel.RAID1, RaidLevel.JBOD):
        read_side = _one_at_a_time("Reads", reads, ceilings)
    else:
        read_side = _striped("Reads", reads, geometry.data_disks, 1.0, False, ceilings)
    if level is RaidLevel.JBOD:
        write_side = _one_at_a_time("Writes", writes, ceilings)
    else:
        # Every member receives its share of data plus parity or mirror copies.
        traffic = n / geometry.data_disks
        write_side = _striped(
            "Writes", writes, geometry.data_disks, traffic, level in PARITY_LEVELS, ceilings
        )

    read_ratio = read_side.range.high / sum(m.outer_mb_s for m in reads)
    write_ratio = write_side.range.high / sum(m.outer_mb_s for m in writes)
    overall = read_side.bottleneck if read_ratio <= write_ratio else write_side.bottleneck
    notes = list(read_side.lines + write_side.lines)
    notes += _level_notes(level, reads, geometry)
    if assumed:
        notes.append(
            f"Only one of read/write speed known for {', '.join(assumed)}: "
            "assumed the same both ways."
        )
    notes.append(
        f"Low end: inner tracks and links at {LINK_EFFICIENCY_LOW:.0%} of nominal (a measured "
        "link at its interval's low end); "
        "high end: outer tracks at full link speed. Single stream, no CPU limit."
    )
    basis = ceilings.basis(m.controller for m in reads)
    notes.append(_basis_note(basis))
    return Prediction(
        read_mb_s=read_side.range,
        write_mb_s=write_side.range,
        bottleneck=overall,
        read_bottleneck=read_side.bottleneck,
        write_bottleneck=write_side.bottleneck,
        explanation=tuple(notes),
        basis=basis,
    )


def _basis_note(basis: PredictionBasis) -> str:
    """What the links' ceilings rest on, in a sentence: a measured one cites its run."""
    if basis.basis is Basis.GUESS:
        return (
            "Ceilings: guess only: no controller or bus ceiling is known (measured or in the "
            "catalog), so the links are assumed not to limit."
        )
    said = "; ".join(_link_said(link) for link in basis.links)
    return f"Ceilings: {said}."


def _link_said(link: LinkCeiling) -> str:
    """ "controller X: measured 2026-11-20, run 412: 640 MB/s": named once, up front."""
    said = link.measured.citation() if link.measured is not None else link.text
    return f"{_link_name(link)} {said}"


def _measured_mark(link: LinkCeiling | None) -> str:
    """ " (measured, run 412)" after a link whose ceiling a scaling test found."""
    if link is None or link.measured is None:
        return ""
    return f" (measured, run {link.measured.run_id})"


def _link_name(link: LinkCeiling) -> str:
    return f"{link.name}:"


def _striped(
    verb: str,
    members: list[_Member],
    data_disks: int,
    traffic: float,
    parity: bool,
    ceilings: Ceilings,
) -> _Side:
    """Striping makes every member deliver the same share, so the slowest member sets the
    pace: data disks x the slowest member, unless a shared link runs out first. A link
    carrying k of n members carries k/n of the array's traffic (x traffic for copies/parity).
    """
    n = len(members)
    outer = min(m.outer_mb_s for m in members)
    inner = min(m.inner_mb_s for m in members)
    disks_high, disks_low = data_disks * outer, data_disks * inner
    disk_text = (
        f"{verb}: {count_noun(data_disks, 'data disk')} × "
        f"{_mb(inner)} (inner tracks) to {_mb(outer)} (outer) = "
        f"{Range(disks_low, disks_high)} from the disks."
    )
    if parity:
        terms = [
            _Term(
                "parity",
                disks_high * PARITY_WRITE_HIGH,
                disks_low * PARITY_WRITE_LOW,
                f"{disk_text[:-1]}; parity RAID writes full stripes at about "
                f"{PARITY_WRITE_HIGH:.0%} of that and partial stripes (read-modify-write) "
                f"at about {PARITY_WRITE_LOW:.0%}.",
            )
        ]
    else:
        terms = [_Term("disks", disks_high, disks_low, disk_text)]
    demand = terms[0].high * traffic / n  # what each member moves when the disks set the pace
    carried = "parity" if parity else "mirror copies"
    extra = f" (writes carry {traffic:.2g}× the data with {carried})" if traffic > 1 else ""
    for kind, key, count, cap in _links(members, ceilings):
        each = cap / count
        high = cap * n / (count * traffic)
        where = f"controller {key}" if kind == "controller" else f"bus {key}"
        where += _measured_mark(
            ceilings.controller(key) if kind == "controller" else ceilings.bus(key)
        )
        whose = "its" if kind == "controller" else "the"
        if count == 1:
            shared = f"has {whose} {_mb(cap)} to itself"
            short = f", less than the {_mb(demand)} it would move" if each < demand else ""
        else:
            shared = f"share {whose} {_mb(cap)}: {_mb(each)} each"
            short = f", less than the {_mb(demand)} each would move" if each < demand else ""
        text = (
            f"{count} of {count_noun(n, 'member')} on {where} {shared}{short}{extra}; "
            f"{verb.lower()} at most {_mb(high)}."
        )
        link = ceilings.controller(key) if kind == "controller" else ceilings.bus(key)
        terms.append(_Term(kind, high, high * _low_share(link), text))
    limit = min(terms, key=lambda t: (t.high, BOTTLENECKS.index(t.name)))
    result = Range(float(min(t.low for t in terms)), float(limit.high))
    lines = [terms[0].text]
    lines += [t.text for t in terms[1:] if t.high < disks_high]
    if limit.name != "disks":
        lines.append(f"{verb} limited by {_LIMITS[limit.name]}: {result}.")
    return _Side(result, limit.name, tuple(lines))


def _links(members: list[_Member], ceilings: Ceilings) -> list[tuple[str, str, int, float]]:
    """(kind, id, members on it, ceiling) for every capped controller and named bus."""
    per_controller: dict[str, int] = {}
    per_bus: dict[str, int] = {}
    for m in members:
        per_controller[m.controller] = per_controller.get(m.controller, 0) + 1
        per_bus[m.bus] = per_bus.get(m.bus, 0) + 1
    links = []
    for controller, count in per_controller.items():
        cap = ceilings.controller_mb_s(controller)
        if cap is not None and cap > 0:
            links.append(("controller", controller, count, cap))
    for bus, count in per_bus.items():
        bus_cap = ceilings.bus_mb_s(bus)
        if bus_cap is not None and bus_cap > 0:
            links.append(("bus", bus, count, bus_cap))
    return links


def _low_share(link: LinkCeiling | None) -> float:
    """The share of its ceiling a link carries at the low end: a nominal figure's
    LINK_EFFICIENCY_LOW; a measured one's own interval, its low end over its mean (the test
    read it through the real link: no derating again)."""
    measured = link.measured if link is not None else None
    if measured is None:
        return LINK_EFFICIENCY_LOW
    if measured.ci95 is None or measured.mb_s <= 0:
        return 1.0
    return min(1.0, max(0.0, measured.ci95[0] / measured.mb_s))


def _one_at_a_time(verb: str, members: list[_Member], ceilings: Ceilings) -> _Side:
    """One member active at a time (RAID 1 single-stream reads, JBOD): it has its controller
    and bus to itself, and the range spans the slowest to the fastest member."""
    best: tuple[float, str] = (0.0, "disks")
    low = float("inf")
    for m in members:
        terms = [("disks", m.outer_mb_s, m.inner_mb_s)]
        controller = ceilings.controller(m.controller)
        if cap := controller.mb_s:
            terms.append(("controller", cap, cap * _low_share(controller)))
        bus = ceilings.bus(m.bus)
        if bus is not None and (bus_cap := bus.mb_s):
            terms.append(("bus", bus_cap, bus_cap * _low_share(bus)))
        name, high, _ = min(terms, key=lambda t: (t[1], BOTTLENECKS.index(t[0])))
        low = min(low, min(t[2] for t in terms))
        if high > best[0]:
            best = (high, name)
    result = Range(float(min(low, best[0])), float(best[0]))
    text = f"{verb}: one member at a time, {result}"
    if best[1] != "disks":
        text += f" (limited by its {best[1]})"
    return _Side(result, best[1], (text + ".",))


def _level_notes(level: RaidLevel, reads: list[_Member], geometry: Geometry) -> list[str]:
    n = len(reads)
    if level is RaidLevel.RAID1:
        return [
            f"RAID 1: a single stream reads one mirror; {count_noun(n, 'parallel reader')} can "
            f"use every mirror (up to {_mb(sum(m.outer_mb_s for m in reads))} together)."
        ]
    if level is RaidLevel.RAID10:
        return [
            f"RAID 10 near layout: one stream reads {_disks_worth(geometry.data_disks)}; the "
            f"far layout (--layout=f2) or parallel streams can approach all {n}."
        ]
    if level is RaidLevel.JBOD:
        return ["JBOD (linear) fills one disk after another: one disk's speed at a time."]
    return []


def _disks_worth(count: int) -> str:
    """ "1 disk's worth", "4 disks' worth": the possessive moves with the plural."""
    possessive = count_noun(count, "disk's", "disks'")
    return f"{possessive} worth"


_UNBUILDABLE = ("too_few_members", "group_size", "odd_raid10", "unknown_disk", "duplicate_member")


def why_unpredicted(
    array: PlannedArray, plan: Plan, geometry: Geometry, problems: tuple[Problem, ...]
) -> str:
    """Why `predict` says nothing for this array, in the words of what is missing: too few
    members is not an unknown speed (issue 29.6)."""
    array = normalized(array)
    if not array.members:
        return "no members yet"
    if not geometry.valid:
        reason = next((p.message for p in problems if p.code in _UNBUILDABLE), None)
        return reason or "the array cannot be built as planned"
    index = PlanIndex.of(plan)
    slow = [
        m
        for m in array.members
        if (d := index.disks.get(m)) is None
        or (d.seq_read_mb_s is None and d.seq_write_mb_s is None)
    ]
    if slow:
        return (
            f"no speed known for {', '.join(slow)} (a model the catalog does not know: give "
            "its speed in the plan file, or plan with catalog disks)"
        )
    return "nothing to go on"

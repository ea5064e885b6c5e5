"""An array's members over a phase, and the one that stands out (guard `member_stands_out`).

The members are the sampled disks that sit side by side at one place under the target: the
devices an md or dm device (LVM over several disks, a multipath map) is built from, role
`member` under it, or the devices of a multi-device btrfs, all `target` at the top. Two or
more at one place make an array; a disk and the one under it (`backing`) are never compared.

Over a phase, each member's await is the mean of its intervals' awaits weighted by the I/Os
each completed (what the kernel's counters over the whole phase would say), its utilisation
and its other figures the mean of its intervals. A member whose await or utilisation is more
than STAND_OUT times the median of the others' is named, judged only from members with at
least MIN_INTERVALS intervals in which I/O completed. The helper judges each phase from its
samples as they go out; the history judges a stored run's phases from the same samples.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

STAND_OUT = 2.0
MIN_INTERVALS = 5
MEMBER_ROLES = ("member", "target")


class Placed(Protocol):
    """Where a sampled disk sits (DiskLayer, DiskRates)."""

    @property
    def role(self) -> str | None: ...
    @property
    def under(self) -> str | None: ...
    @property
    def depth(self) -> int | None: ...


class Rates(Placed, Protocol):
    """One disk's figures over one interval (DiskRates)."""

    @property
    def read_mb_s(self) -> float: ...
    @property
    def write_mb_s(self) -> float: ...
    @property
    def read_iops(self) -> float: ...
    @property
    def write_iops(self) -> float: ...
    @property
    def busy_pct(self) -> float | None: ...
    @property
    def await_ms(self) -> float | None: ...
    @property
    def queue_size(self) -> float | None: ...


def member_groups(places: Mapping[str, Placed]) -> list[tuple[str, ...]]:
    """The arrays among the disks: two or more members side by side at one place."""
    groups: dict[tuple[str | None, int], list[str]] = {}
    for name, place in places.items():
        if place.role in MEMBER_ROLES:
            groups.setdefault((place.under, place.depth or 0), []).append(name)
    return [tuple(names) for names in groups.values() if len(names) > 1]


@dataclass
class MemberFigures:
    """One member's sums over a phase, and its means."""

    name: str
    intervals: int = 0  # intervals sampled
    busy_intervals: int = 0  # intervals in which I/O completed
    _mb_s: float = 0.0
    _iops: float = 0.0
    _busy_pct: float = 0.0
    _busy_count: int = 0
    _queue: float = 0.0
    _queue_count: int = 0
    _waited: float = 0.0  # sum of await x IOPS: the weights of the phase's mean await
    _completed: float = 0.0

    def add(self, rates: Rates) -> None:
        self.intervals += 1
        self._mb_s += rates.read_mb_s + rates.write_mb_s
        iops = rates.read_iops + rates.write_iops
        self._iops += iops
        if rates.busy_pct is not None:
            self._busy_pct += rates.busy_pct
            self._busy_count += 1
        if rates.queue_size is not None:
            self._queue += rates.queue_size
            self._queue_count += 1
        if iops > 0:  # a helper before await was sampled: judged by utilisation alone
            self.busy_intervals += 1
        if rates.await_ms is not None and iops > 0:
            self._waited += rates.await_ms * iops
            self._completed += iops

    @property
    def mb_s(self) -> float:
        return self._mb_s / self.intervals if self.intervals else 0.0

    @property
    def iops(self) -> float:
        return self._iops / self.intervals if self.intervals else 0.0

    @property
    def await_ms(self) -> float | None:
        return self._waited / self._completed if self._completed else None

    @property
    def busy_pct(self) -> float | None:
        return self._busy_pct / self._busy_count if self._busy_count else None

    @property
    def queue_size(self) -> float | None:
        return self._queue / self._queue_count if self._queue_count else None


@dataclass(frozen=True)
class StandOut:
    """A member `ratio` times the median of the others' `figure` (`await` or `utilisation`)."""

    member: str
    figure: str
    ratio: float
    value: float
    others: float

    def describe(self) -> str:
        unit, digits = (" ms", 1) if self.figure == "await" else (" %", 0)
        return (
            f"{self.member}: {self.ratio:.1f}x the others' {self.figure} "
            f"({self.value:.{digits}f}{unit} vs {self.others:.{digits}f}{unit})"
        )


@dataclass
class MemberTally:
    """The members' figures over one phase, fed its samples' disks in turn."""

    groups: list[tuple[str, ...]] | None = None  # from the first sample that places its disks
    members: dict[str, MemberFigures] = field(default_factory=dict)

    def add(self, disks: Mapping[str, Rates]) -> None:
        if self.groups is None and disks:
            self.groups = member_groups(disks)
            for group in self.groups:
                self.members.update({name: MemberFigures(name) for name in group})
        for name, figures in self.members.items():
            rates = disks.get(name)
            if rates is not None:
                figures.add(rates)

    def stand_outs(self) -> list[StandOut]:
        """Each member standing out in its array, by await and by utilisation."""
        found: list[StandOut] = []
        for group in self.groups or []:
            judged = [
                self.members[name]
                for name in group
                if self.members[name].busy_intervals >= MIN_INTERVALS
            ]
            for figure, value_of in (
                ("await", lambda m: m.await_ms),
                ("utilisation", lambda m: m.busy_pct),
            ):
                found += _standing_out(judged, figure, value_of)
        return found

    def describe(self) -> str | None:
        """The stand-outs in one line, a member's await first; None when none stands out."""
        found = self.stand_outs()
        return "; ".join(s.describe() for s in found) if found else None


def _standing_out(
    judged: Iterable[MemberFigures], figure: str, value_of: _ValueOf
) -> list[StandOut]:
    values = {m.name: v for m in judged if (v := value_of(m)) is not None}
    found = []
    for name, value in values.items():
        others = [v for other, v in values.items() if other != name]
        if not others:
            continue
        median = statistics.median(others)
        if median > 0 and value > STAND_OUT * median:
            found.append(StandOut(name, figure, round(value / median, 2), value, median))
    return found


class _ValueOf(Protocol):
    def __call__(self, member: MemberFigures, /) -> float | None: ...


@dataclass(frozen=True)
class _Stored:
    """A disk's figures of one stored sample (series `disks.NAME.FIGURE`), at its place."""

    role: str | None
    under: str | None
    depth: int | None
    read_mb_s: float = 0.0
    write_mb_s: float = 0.0
    read_iops: float = 0.0
    write_iops: float = 0.0
    busy_pct: float | None = None
    await_ms: float | None = None
    queue_size: float | None = None


_STORED_FIGURES = ("read_mb_s", "write_mb_s", "read_iops", "write_iops")
_STORED_OPTIONAL = ("busy_pct", "await_ms", "queue_size")


def stored_stand_outs(
    places: Mapping[str, Placed],
    samples: Iterable[tuple[str, int, Mapping[str, float | None]]],
) -> dict[tuple[str, int], str]:
    """A stored run's stand-out members, said as the helper said them, by (phase, repetition):
    `places` are the disks' places in its context, `samples` its (phase, repetition, series)
    in order. A run stored before await was sampled judges by utilisation alone."""
    tallies: dict[tuple[str, int], MemberTally] = {}
    for phase, repetition, data in samples:
        disks: dict[str, _Stored] = {}
        for name, place in places.items():
            prefix = f"disks.{name}."
            if f"{prefix}read_mb_s" not in data:
                continue
            read_mb_s, write_mb_s, read_iops, write_iops = (
                data.get(prefix + key) or 0.0 for key in _STORED_FIGURES
            )
            busy_pct, await_ms, queue_size = (data.get(prefix + key) for key in _STORED_OPTIONAL)
            disks[name] = _Stored(
                place.role, place.under, place.depth, read_mb_s, write_mb_s, read_iops,
                write_iops, busy_pct, await_ms, queue_size,
            )  # fmt: skip
        tallies.setdefault((phase, repetition), MemberTally()).add(disks)
    return {key: said for key, tally in tallies.items() if (said := tally.describe()) is not None}

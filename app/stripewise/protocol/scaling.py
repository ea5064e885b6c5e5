"""The scaling test across the helper boundary: `bench.scaling`'s arguments and reply, its
events (a step's pass begins, a pass's result, the run's end), and `scaling_result`, the
analysis the client makes of the passes (the last line of `stripewise bench scaling --json`).

Read-only by construction: the verb takes kernel names of whole disks and a size to read from
each; nothing in it can ask for a write (`written_bytes` is always 0).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from stripewise.model.bench import MAX_SIZE, SpecError, parse_size
from stripewise.model.scaling import MAX_DISKS, MAX_REPEAT, ScalingAnalysis
from stripewise.protocol.codec import Refused, WireArgs, WireEvent, WireValue, is_none, wire

# a kernel name: sdb, nvme0n1, loop3, vdc; never a path, never ".."
DEVICE_NAME = re.compile(r"^[a-z][a-z0-9]{0,31}\Z")
MIN_BLOCK = 4096
MAX_BLOCK = 64 * 2**20
END_STATUSES = ("complete", "cancelled", "failed")


def _bytes(key: str, at_most: int = MAX_SIZE) -> Callable[[Any], int]:
    def read(value: Any) -> int:
        if isinstance(value, bool) or value is None:
            raise Refused(f"{key}: required")
        if isinstance(value, str):
            try:
                return parse_size(value, at_most)
            except SpecError as exc:
                raise Refused(f"{key}: {exc}") from None
        if isinstance(value, int):
            return value
        raise Refused(f"{key}: a number of bytes or a size like 1G")

    return read


@dataclass(frozen=True)
class PlannedStep(WireValue):
    disks: tuple[str, ...]
    alone: bool  # one disk's own step (the first disk's is also the one-disk step)


@dataclass(frozen=True)
class ScalingStarted(WireValue):
    """`bench.scaling`'s reply: the run's id, the devices as resolved, and the plan."""

    run: str
    devices: tuple[str, ...]
    steps: tuple[PlannedStep, ...]
    visits: int  # passes in all: steps x repeat
    size: int  # bytes read from each disk at most, per pass
    block_size: int
    repeat: int


@dataclass(frozen=True)
class ScalingArgs(WireArgs):
    """Whole disks by kernel name, read at once in steps (model/scaling.py)."""

    VERB: ClassVar[str] = "bench.scaling"
    REPLY: ClassVar[type[ScalingStarted]] = ScalingStarted
    devices: tuple[str, ...] = field(
        metadata=wire(refusal="devices: a list of kernel names of whole disks, such as sdb")
    )
    size: int = field(metadata=wire(parse=_bytes("size")))  # per disk
    block_size: int = field(default=2**20, metadata=wire(parse=_bytes("block_size", MAX_BLOCK)))
    repeat: int = field(default=3, metadata=wire(bounds=(1, MAX_REPEAT)))
    sample_rate_hz: float = 2.0

    def wire_checked(self) -> Self:
        if not 1 <= len(self.devices) <= MAX_DISKS:
            raise Refused(f"devices: 1 to {MAX_DISKS} disks")
        for name in self.devices:
            if not DEVICE_NAME.match(name):
                raise Refused(f"devices: {name[:40]!r} is not a kernel name such as sdb")
        if len(set(self.devices)) != len(self.devices):
            raise Refused("devices: each disk once")
        if not 1 <= self.size <= MAX_SIZE:
            raise Refused("size: 1 byte to 1 PiB")
        if not MIN_BLOCK <= self.block_size <= MAX_BLOCK or self.block_size & (self.block_size - 1):
            raise Refused("block_size: a power of two from 4 KiB to 64 MiB")
        if self.size < self.block_size:
            raise Refused("size: at least one block")
        if not 1.0 <= self.sample_rate_hz <= 10.0:
            raise Refused("sample_rate_hz: 1 to 10")
        return self


# --- events -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScalingStep(WireEvent):
    """A pass of a step begins; its samples carry `visit` as their `repetition`."""

    EVENT: ClassVar[str] = "scaling_step"
    run: str
    visit: int
    step: int  # index into the reply's steps
    repetition: int  # the step's pass, from 1
    disks: tuple[str, ...]


@dataclass(frozen=True)
class ScalingPass(WireEvent):
    """A pass's result: the window ran from the start until the first disk had read `size`,
    so every disk was busy all of it. `mb_s` is the sum of the disks' rates, each its bytes
    over the time of its last read inside the window (`disk_mb_s`); `error` when it broke."""

    EVENT: ClassVar[str] = "scaling_pass"
    run: str
    visit: int
    step: int
    repetition: int
    disks: tuple[str, ...]
    elapsed_s: float  # the window
    read_bytes: int  # inside the window
    mb_s: float
    disk_mb_s: Mapping[str, float]
    error: str | None = None


@dataclass(frozen=True)
class ScalingEnd(WireEvent):
    """The run's end. `measured_s`: the passes' windows added up (the rest of `elapsed_s` is
    the test's own overhead)."""

    EVENT: ClassVar[str] = "scaling_end"
    run: str
    status: str = field(metadata=wire(choices=END_STATUSES))
    elapsed_s: float
    measured_s: float
    written_bytes: int = 0
    error: str | None = field(default=None, metadata=wire(omit=is_none))


# --- the answer -------------------------------------------------------------------------------
@dataclass(frozen=True)
class MeanInterval(WireValue):
    mean: float
    ci95: tuple[float, ...] | None  # [low, high]; null with one pass


@dataclass(frozen=True)
class StepResult(WireValue):
    disks: tuple[str, ...]
    mb_s: MeanInterval


@dataclass(frozen=True)
class CeilingResult(WireValue):
    mb_s: float
    disks: int


@dataclass(frozen=True)
class OutlierResult(WireValue):
    disk: str
    below_pct: float
    peers: tuple[str, ...]
    slot: str | None = None


@dataclass(frozen=True)
class ScalingResult(WireEvent):
    """What the client makes of the passes (model/scaling.py): docs/scaling.md."""

    EVENT: ClassVar[str] = "scaling_result"
    run: str
    status: str = field(metadata=wire(choices=END_STATUSES))
    name: str  # the controller's id, or the disks named
    steps: tuple[StepResult, ...]
    alone: Mapping[str, MeanInterval]
    ceiling: CeilingResult | None
    would_need_mb_s: float | None
    outliers: tuple[OutlierResult, ...]
    sentence: str
    written_bytes: int
    elapsed_s: float
    measured_s: float
    # the best step's interval narrow enough to place a ceiling (or no interval: one pass,
    # judged by the 5 % rule); false: `ceiling` is null, the passes vary too much (`widest_pct`)
    settled: bool = False
    widest_pct: float | None = None

    @classmethod
    def of(cls, end: ScalingEnd, name: str, analysis: ScalingAnalysis | None) -> ScalingResult:
        """The run's answer; without an analysis (a pass missing) only how it ended."""

        def shown(mean: float, ci95: tuple[float, float] | None) -> MeanInterval:
            if ci95 is None:
                return MeanInterval(round(mean, 1), None)
            # a t interval of a noisy mean can pass 0; no rate is below it (the text's too)
            return MeanInterval(round(mean, 1), (round(max(0.0, ci95[0]), 1), round(ci95[1], 1)))

        if analysis is None:
            said = f"{name}: the test {end.status} before every step was measured"
            return cls(end.run, end.status, name, (), {}, None, None, (), said, 0,
                       end.elapsed_s, end.measured_s)  # fmt: skip
        ceiling = analysis.ceiling
        return cls(
            end.run,
            end.status,
            name,
            tuple(StepResult(s.disks, shown(s.mb_s.mean, s.mb_s.ci95)) for s in analysis.steps),
            {disk: shown(f.mean, f.ci95) for disk, f in analysis.alone.items()},
            None if ceiling is None else CeilingResult(round(ceiling.mb_s, 1), ceiling.disks),
            round(analysis.would_need_mb_s, 1),
            tuple(OutlierResult(o.disk, o.below_pct, o.peers, o.slot) for o in analysis.outliers),
            analysis.sentence(name),
            end.written_bytes,
            end.elapsed_s,
            end.measured_s,
            analysis.settled,
            analysis.widest_pct_shown,
        )


ScalingEvent = ScalingStep | ScalingPass | ScalingEnd
SCALING_EVENTS: tuple[Any, ...] = (ScalingStep, ScalingPass, ScalingEnd)

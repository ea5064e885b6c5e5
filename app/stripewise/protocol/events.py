"""A benchmark's events as typed values, down to its `run_result`.

Each is a `WireEvent`: `to_json` gives the wire's object (`event` first, then the keys
docs/protocol.md lists; `host` only in a group run's events, so one-host runs' wire is
unchanged); `event_from_json` validates one and returns its type, or raises
ProtocolError("bad_event") naming the field. The helper builds these and encodes them;
clients decode them and never read the dicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Self

from stripewise.model.bench import Phase, PhaseResult
from stripewise.model.latency import IntervalLatency, LatencyBuckets, Stall, latency_series
from stripewise.model.run import ResultValue, RunStatus
from stripewise.model.steady_state import KeptRounds, Window
from stripewise.protocol.codec import (
    BAD_EVENT,
    Shape,
    Wire,
    WireEvent,
    describe,
    from_wire,
    is_none,
    wire,
)
from stripewise.protocol.scaling import SCALING_EVENTS, ScalingEvent
from stripewise.protocol.wire import ProtocolError

RUN_STATUSES = ("complete", "cancelled", "failed")
LAYER_ROLES = ("target", "member", "backing")
SINGLE_FIGURES = ("lat_p50_us", "lat_p99_us", "cpu_pct", "kb_s_per_cpu_pct")
_DEPTHS = (0, 64)
# a group run's host label (`HOST:PORT`, `ssh://...` or "total"); None: a one-host run
_HOST = wire(omit=is_none)

# a phase's summary over repetitions: `name` (bonnie++'s) is written for readers, never read
describe(
    PhaseResult,
    Shape(
        order=(
            "phase",
            "name",
            "mb_s",
            "iops",
            "lat_p50_us",
            "lat_p99_us",
            "cpu_pct",
            "kb_s_per_cpu_pct",
            "errors",
            "flags",
            "passes",
            "steady_rounds",
        ),
        # each repetition's single figures, keyed as its own; a steady-state phase's rounds
        # per repetition, left off for every other phase (its earlier shape)
        fields={
            "passes": Wire(choices=SINGLE_FIGURES),
            "steady_rounds": Wire(omit=lambda rounds: not rounds),
        },
    ),
)


@dataclass(frozen=True)
class DiskLayer(WireEvent):
    """Where one sampled disk sits under a benchmark's target. `role`: `target` (the device
    the target is, or whose filesystem holds it; every device of a multi-device btrfs),
    `member` (one an md or dm device is built from: the array itself is not sampled, its
    members stand for it), `backing` (the disk holding a loop device's backing file); a
    partition counts as its whole disk. `under` is the device it sits under (None at the
    top), `depth` the layers above it, sampled or not (0 at the top)."""

    name: str
    role: str = field(metadata=wire(choices=LAYER_ROLES))
    under: str | None = None
    depth: int = field(default=0, metadata=wire(bounds=_DEPTHS))


@dataclass(frozen=True)
class PhaseStarted(WireEvent):
    EVENT: ClassVar[str] = "phase_started"
    run: str
    phase: Phase
    name: str  # bonnie++'s
    repetition: int
    planned_bytes: int
    host: str | None = field(default=None, metadata=_HOST)  # docs/protocol.md


@dataclass(frozen=True)
class DiskRates(WireEvent):
    """One disk's kernel counters over a sample's interval (decimal MB/s), and where the disk
    sits under the target (as `DiskLayer`; role None, and none of it on the wire, from a
    helper that did not say). `await_ms`: the mean ms from submission to completion of the
    reads and writes completed in the interval (None when none completed, or from a helper
    that did not say); `queue_size`: the mean requests in flight (iostat's aqu-sz)."""

    FIGURES: ClassVar[tuple[str, ...]] = (
        "read_mb_s",
        "write_mb_s",
        "read_iops",
        "write_iops",
        "busy_pct",
        "await_ms",
        "queue_size",
    )
    read_mb_s: float
    write_mb_s: float
    read_iops: float
    write_iops: float
    busy_pct: float | None
    role: str | None = field(default=None, metadata=wire(omit=is_none, choices=LAYER_ROLES))
    under: str | None = field(default=None, metadata=wire(omit_with="role"))
    depth: int | None = field(default=None, metadata=wire(omit_with="role", bounds=_DEPTHS))
    await_ms: float | None = field(default=None, metadata=wire(omit=is_none))
    queue_size: float | None = field(default=None, metadata=wire(omit=is_none))

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops

    @property
    def mb_s(self) -> float:
        return self.read_mb_s + self.write_mb_s

    def wire_checked(self) -> Self:
        """A layer without a role is none; with one, its depth is 0 unless said."""
        if self.role is None:
            return replace(self, under=None, depth=None)
        return self if self.depth is not None else replace(self, depth=0)


@dataclass(frozen=True)
class Sample(WireEvent):
    EVENT: ClassVar[str] = "sample"
    run: str
    phase: Phase
    repetition: int
    t_s: float  # since the run started, across phases
    engine_read_mb_s: float
    engine_write_mb_s: float
    engine_read_iops: float
    engine_write_iops: float
    progress: float | None
    eta_s: float | None
    disks: Mapping[str, DiskRates] = field(default_factory=dict)
    cpu: Mapping[str, float] | None = None  # user, system, iowait, idle, steal (percent)
    # the seconds since the phase's previous sample (or its start) this one stands for: the
    # weights of a time-weighted mean (None from a helper that did not say)
    span_s: float | None = None
    # a group run's host label, or "total" for the sum of the hosts' samples of one tick
    host: str | None = field(default=None, metadata=_HOST)
    # the completion latency of the I/Os that ended in the interval, where the engine
    # measures it per interval (absent otherwise, and when none completed)
    latency_us: IntervalLatency | None = field(default=None, metadata=wire(omit=is_none))
    histogram: LatencyBuckets | None = field(default=None, metadata=wire(omit=is_none))

    def series(self) -> dict[str, float | None]:
        """The figures as named series, units in their names, nested ones dotted
        (`disks.sda.read_mb_s`, `cpu.iowait`): the history's shape of a sample. A figure the
        sample lacks (no ETA yet, no busy time) is left out, never stored as 0."""
        data: dict[str, float | None] = {
            "engine_read_mb_s": self.engine_read_mb_s,
            "engine_write_mb_s": self.engine_write_mb_s,
            "engine_read_iops": self.engine_read_iops,
            "engine_write_iops": self.engine_write_iops,
            "progress": self.progress,
            "eta_s": self.eta_s,
        }
        for name, rates in self.disks.items():
            for key in DiskRates.FIGURES:
                data[f"disks.{name}.{key}"] = getattr(rates, key)
        for key, share in (self.cpu or {}).items():
            data[f"cpu.{key}"] = share
        data.update(latency_series(self.latency_us, self.histogram))  # `latency_us.p99` ...
        return {key: value for key, value in data.items() if value is not None}


# the judged window of a steady-state phase (model.steady_state): its mean in the rule's unit
describe(Window, Shape(order=("mean", "excursion_pct", "slope_pct")))
# one repetition's rounds in run_result, named as a phase_result names them
describe(KeptRounds, Shape(order=("repetition", "rounds", "window", "steady")))


@dataclass(frozen=True)
class SteadyRound(WireEvent):
    """`steady_round`: one round of a steady-state write phase ended. `figure`: its MB/s (a
    sequential write) or IOPS (a random write); the window's excursions in percent of its mean
    (None before 5 rounds); `steady`: the window holds the SNIA PTS rule now."""

    EVENT: ClassVar[str] = "steady_round"
    run: str
    phase: Phase
    repetition: int
    round: int
    figure: float
    excursion_pct: float | None
    slope_pct: float | None
    steady: bool
    host: str | None = field(default=None, metadata=_HOST)


@dataclass(frozen=True)
class PhaseFinished(WireEvent):
    """`phase_result`: one repetition of one phase as the engine measured it."""

    EVENT: ClassVar[str] = "phase_result"
    run: str
    phase: Phase
    repetition: int
    elapsed_s: float
    mb_s: float
    iops: float
    read_bytes: int
    write_bytes: int
    lat_p50_us: float | None
    lat_p99_us: float | None
    cpu_pct: float | None
    error: str | None
    flags: tuple[str, ...] = ()  # guards this repetition tripped (docs/protocol.md)
    host: str | None = field(default=None, metadata=_HOST)
    # a steady-state phase's: whether its window became steady, each round's figure (the
    # rule's unit), and the window its mb_s and iops are the means of
    steady: bool | None = field(default=None, metadata=wire(omit=is_none))
    rounds: tuple[float, ...] | None = field(default=None, metadata=wire(omit=is_none))
    window: Window | None = field(default=None, metadata=wire(omit=is_none))
    # intervals whose p99 was over 10x the phase's median interval p99 (model/latency.py);
    # absent where no interval latencies were measured
    stalls: tuple[Stall, ...] | None = field(default=None, metadata=wire(omit=is_none))

    @property
    def kept_rounds(self) -> KeptRounds | None:
        """A steady-state phase's rounds, as its run_result will summarise them."""
        if self.rounds is None or self.window is None:
            return None
        return KeptRounds(self.repetition, self.rounds, self.window, bool(self.steady))


@dataclass(frozen=True)
class RunWarning(WireEvent):
    EVENT: ClassVar[str] = "warning"
    run: str
    code: str
    message: str
    host: str | None = field(default=None, metadata=_HOST)


@dataclass(frozen=True)
class RunError(WireEvent):
    EVENT: ClassVar[str] = "error"
    run: str
    message: str
    host: str | None = field(default=None, metadata=_HOST)  # in a group run: the host that failed


@dataclass(frozen=True)
class RunResult(WireEvent):
    """How a run ended and its phases summarised over repetitions. From the helper the status
    is one of RUN_STATUSES; a client that files a run the helper never reported the end of
    makes one itself (`unfinished_run`): `aborted` or `cancelled`, with `error` saying why."""

    EVENT: ClassVar[str] = "run_result"
    WIRE_SHAPE = Shape(
        order=(
            "run",
            "status",
            "elapsed_s",
            "engine",
            "engine_version",
            "results",
            "host",
            "error",
        )
    )
    run: str
    status: RunStatus = field(metadata=wire(choices=RUN_STATUSES))
    elapsed_s: float
    engine: str
    engine_version: str
    results: tuple[PhaseResult, ...] = field(metadata=wire(absent=()))
    error: str | None = field(default=None, metadata=wire(omit=is_none))
    host: str | None = field(default=None, metadata=_HOST)

    def values(self) -> list[ResultValue]:
        """Every phase's figures in the history's vocabulary, phases in run order."""
        return [value for phase in self.results for value in phase.values()]


Event = (
    PhaseStarted
    | Sample
    | SteadyRound
    | PhaseFinished
    | RunWarning
    | RunError
    | RunResult
    | ScalingEvent
)
EVENT_TYPES: dict[str, Any] = {
    kind.EVENT: kind
    for kind in (
        PhaseStarted, Sample, SteadyRound, PhaseFinished, RunWarning,
        RunError, RunResult, *SCALING_EVENTS
    )
}  # fmt: skip


def event_to_json(event: Event) -> dict[str, Any]:
    """The wire object: `event` first, then the fields (Phase as its value)."""
    return event.to_json()


def event_from_json(data: Mapping[str, Any]) -> Event:
    kind = EVENT_TYPES.get(str(data.get("event")))
    if kind is None:
        raise ProtocolError(BAD_EVENT, f"unknown event {data.get('event')!r}")
    event: Event = from_wire(kind, data, BAD_EVENT)
    return event

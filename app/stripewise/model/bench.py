"""Benchmark specs, phases and results: what both engines run and report, as plain values."""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum
from typing import Protocol

from stripewise.model.rounds_kept import round_values
from stripewise.model.run import ResultValue
from stripewise.model.steady_state import (
    DEFAULT_MAX_ROUNDS,
    MAX_ROUNDS,
    WINDOW,
    KeptRounds,
    SteadyRounds,
)
from stripewise.model.vocabulary import (
    CPU,
    EFFICIENCY,
    IOPS,
    LATENCY_P50,
    LATENCY_P99,
    THROUGHPUT,
    efficiency,
)


class Phase(StrEnum):
    SEQ_WRITE = "seq_write"
    REWRITE = "rewrite"
    SEQ_READ = "seq_read"
    RANDOM_READ = "random_read"
    RANDOM_WRITE = "random_write"
    MIXED = "mixed"

    @property
    def writes(self) -> bool:
        return self in (Phase.SEQ_WRITE, Phase.REWRITE, Phase.RANDOM_WRITE, Phase.MIXED)

    @property
    def reads(self) -> bool:
        return self in (Phase.REWRITE, Phase.SEQ_READ, Phase.RANDOM_READ, Phase.MIXED)

    @property
    def sequential(self) -> bool:
        """Runs with the spec's block size; the others with its random block size."""
        return self in (Phase.SEQ_WRITE, Phase.REWRITE, Phase.SEQ_READ)

    @property
    def runs_in_rounds(self) -> bool:
        """A write-only phase, which a steady-state run repeats in rounds (model.steady_state)."""
        return self in (Phase.SEQ_WRITE, Phase.RANDOM_WRITE)


# The names admins know from bonnie++'s table.
BONNIE_NAMES: dict[Phase, str] = {
    Phase.SEQ_WRITE: "Sequential Output, Block",
    Phase.REWRITE: "Sequential Output, Rewrite",
    Phase.SEQ_READ: "Sequential Input, Block",
    Phase.RANDOM_READ: "Random Seeks (reads)",
    Phase.RANDOM_WRITE: "Random writes",
    Phase.MIXED: "Mixed 70/30 read/write",
}

MIN_BLOCK = 512
MAX_BLOCK = 64 * 2**20
MAX_SIZE = 2**50  # 1 PiB: anything larger is a typo
MAX_BUFFERS = 256 * 2**20  # the engines hold one buffer per I/O in flight
# A CPU latency limit past 10 ms leaves every idle state allowed on any machine we know of
MAX_CPU_LATENCY_US = 10_000
# Matched whole on the stripped text, so linear ("1", 64,000 blanks and "x" cost seconds when
# blanks on both sides of the optional unit could share them). ASCII digits only (\d also
# reads "١G"), and the unit right after the number, as fio and dd write it.
_SIZE = re.compile(r"([0-9]+(?:\.[0-9]+)?)([KMGT]i?B?|B)?", re.IGNORECASE | re.ASCII)


class SpecError(ValueError):
    """A benchmark spec that cannot run; the message names the field."""


class SizeTooLargeError(SpecError):
    """A size that reads as one, past its limit: said as such, never as "not a size"."""


def parse_size(text: str, at_most: int = MAX_SIZE) -> int:
    """`8G`, `512M`, `4k`, `1GiB` -> bytes, at most `at_most` (a block size's is MAX_BLOCK).
    Every unit is binary: K, KB and KiB are all 1024, M, MB and MiB all 2^20. fio (its
    default kb_base=1024) reads K/KB so but KiB as 1000; dd reads K/KiB so but KB as 1000:
    neither agrees on every spelling."""
    match = _SIZE.fullmatch(text.strip())
    shown = repr(text) if len(text) <= 40 else f"{text[:20]!r}... ({len(text)} characters)"
    if match is None:
        if not text.isascii():
            raise SpecError(f"not a size: {shown} (digits 0-9 and a unit such as 8G, 512M)")
        if re.fullmatch(r"[0-9.]+\s+[A-Za-z]+", text.strip(), re.ASCII):
            raise SpecError(f"not a size: {shown} (write the unit right after the number: 8G)")
        raise SpecError(f"not a size: {shown} (use e.g. 8G, 512M, 4k)")
    unit = (match.group(2) or "B").upper()
    scale = {"B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}[unit[0]]
    size = Decimal(match.group(1)) * scale  # exact: a float overflows to infinity on "9"*400
    if size > at_most:
        raise SizeTooLargeError(f"{shown} is too large (at most {_limit_text(at_most)})")
    return int(size)


def _limit_text(size: int) -> str:
    """A limit in the largest binary unit that divides it exactly: 1 PiB, 64 MiB, 512 B."""
    for unit, scale in (("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size // 2**10} KiB" if size % 2**10 == 0 else f"{size} B"


@dataclass(frozen=True)
class BenchSpec:
    """What to measure. Sizes in bytes; `runtime_cap_s` bounds each phase."""

    target: str  # a directory on a mounted filesystem, or a whole block device
    size_bytes: int
    block_bytes: int = 2**20
    direct: bool = True
    phases: tuple[Phase, ...] = (Phase.SEQ_WRITE, Phase.REWRITE, Phase.SEQ_READ, Phase.RANDOM_READ)
    queue_depth: int = 1
    streams: int = 1
    repetitions: int = 1
    runtime_cap_s: float = 600.0
    sample_rate_hz: float = 2.0
    engine: str = "builtin"  # builtin or fio
    random_block_bytes: int = 4096
    # held as the CPU latency limit (PM QoS) while the run lasts; None leaves the system's.
    # 0 keeps idle CPUs polling: a wake-up from a halted CPU can cost more than the I/O
    cpu_latency_us: int | None = None
    # write phases repeat in rounds of `size_bytes` until the SNIA PTS window is steady or
    # `max_rounds` have run; `precondition` fills the target sequentially first
    steady_state: bool = False
    precondition: bool = False
    max_rounds: int = DEFAULT_MAX_ROUNDS
    # each sample carries its interval's latency histogram; None: when sampled at 2 Hz or less
    latency_log: bool | None = None

    @property
    def logs_latency(self) -> bool:
        return self.latency_log if self.latency_log is not None else self.sample_rate_hz <= 2

    def block_bytes_for(self, phase: Phase) -> int:
        return self.block_bytes if phase.sequential else self.random_block_bytes

    @property
    def buffer_bytes(self) -> int:
        """Memory the engines hold for I/Os in flight, at most."""
        return self.streams * self.queue_depth * max(self.block_bytes, self.random_block_bytes)

    def problems(self) -> list[str]:
        """Everything out of bounds, each naming its field; empty when the spec may run."""
        found = []
        if not self.target or not self.target.startswith("/"):
            found.append("target: an absolute path to a directory or a block device")
        if not 1 <= self.size_bytes <= MAX_SIZE:
            found.append("size: from 1 byte to 1 PiB")
        for name, value in (
            ("block_size", self.block_bytes),
            ("random_block_size", self.random_block_bytes),
        ):
            if not MIN_BLOCK <= value <= MAX_BLOCK or value & (value - 1):
                found.append(f"{name}: a power of two from 512 B to 64 MiB")
        if self.size_bytes < self.block_bytes * self.streams:
            found.append("size: at least one block per stream")
        if not self.phases:
            found.append("phases: at least one")
        if len(set(self.phases)) != len(self.phases):
            found.append("phases: each at most once")
        if not 1 <= self.queue_depth <= 256:
            found.append("queue_depth: 1 to 256")
        if not 1 <= self.streams <= 64:
            found.append("streams: 1 to 64")
        if not 1 <= self.repetitions <= 100:
            found.append("repetitions: 1 to 100")
        if not 1 <= self.runtime_cap_s <= 86_400:
            found.append("runtime_cap_s: 1 s to 24 h")
        if not 1 <= self.sample_rate_hz <= 10:
            found.append("sample_rate_hz: 1 to 10")
        if self.buffer_bytes > MAX_BUFFERS:
            found.append(
                "queue_depth: streams x queue depth x block size must stay within 256 MiB of "
                "buffers (one per I/O in flight)"
            )
        if self.engine not in ("builtin", "fio"):
            found.append("engine: builtin or fio")
        if self.cpu_latency_us is not None and not 0 <= self.cpu_latency_us <= MAX_CPU_LATENCY_US:
            found.append(f"cpu_latency_us: 0 to {MAX_CPU_LATENCY_US:,} us, or none")
        if not WINDOW <= self.max_rounds <= MAX_ROUNDS:
            found.append(f"max_rounds: {WINDOW} (one window) to {MAX_ROUNDS}")
        if self.steady_state and not any(p.runs_in_rounds for p in self.phases):
            found.append("steady_state: needs a write phase (seq_write or random_write)")
        if self.precondition and not self.steady_state:
            found.append("precondition: only with steady_state")
        return found


def counted_of(phase: Phase | str, moved: float) -> float:
    """What a phase's figures count of the bytes (or I/Os, or a rate) it moved, reads and
    writes together: all of it, but for rewrite each block once, half of it (`PhaseOutcome`)."""
    return moved / 2 if phase == Phase.REWRITE else moved  # a StrEnum: "rewrite" too


@dataclass(frozen=True)
class PhaseOutcome:
    """One repetition of one phase, as an engine measured it."""

    phase: Phase
    repetition: int
    elapsed_s: float
    read_bytes: int = 0
    write_bytes: int = 0
    read_ops: int = 0
    write_ops: int = 0
    lat_p50_us: float | None = None
    lat_p99_us: float | None = None
    cpu_busy_pct: float | None = None  # system-wide user+system+iowait... see sampler
    error: str | None = None
    flags: tuple[str, ...] = ()  # guards this repetition tripped
    steady: SteadyRounds | None = None  # a steady-state phase's rounds; its figures: the window's

    @property
    def cpu_pct(self) -> float | None:
        return self.cpu_busy_pct

    @property
    def mb_s(self) -> float:
        """Decimal MB/s of everything moved (reads plus writes), except rewrite: there each
        block counts once, as it is rewritten, like bonnie++'s Rewrite column (reading it
        back first is part of the cost, not extra throughput): half of what moved. Not the
        writes alone: fio's mix draws read or write per I/O, so one side may wrap past the
        region's end (30 MiB read and 34 written of a 32 MiB file) while the two always add
        up to twice the region. A steady-state phase's: the mean of its window of rounds."""
        if self.steady is not None:
            return self.steady.window_mb_s
        counted = counted_of(self.phase, self.read_bytes + self.write_bytes)
        return counted / self.elapsed_s / 1e6 if self.elapsed_s > 0 else 0.0

    @property
    def iops(self) -> float:
        """I/Os per second; for rewrite, blocks rewritten per second (see `mb_s`)."""
        if self.steady is not None:
            return self.steady.window_iops
        counted = counted_of(self.phase, self.read_ops + self.write_ops)
        return counted / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def kept_rounds(self) -> KeptRounds | None:
        """A steady-state phase's rounds as reported (rounded as `phase_result` has them)."""
        return None if self.steady is None else self.steady.kept(self.repetition)


@dataclass(frozen=True)
class Spread:
    median: float
    low: float
    high: float
    n: int
    values: tuple[float, ...] = ()  # each repetition's figure, in run order


def spread_of(values: Sequence[float]) -> Spread | None:
    if not values:
        return None
    return Spread(statistics.median(values), min(values), max(values), len(values), tuple(values))


@dataclass(frozen=True)
class PhaseResult:
    """A phase over all repetitions: median with min and max, as the field notes report."""

    phase: Phase
    mb_s: Spread | None
    iops: Spread | None
    lat_p50_us: float | None = None
    lat_p99_us: float | None = None
    cpu_pct: float | None = None
    kb_s_per_cpu_pct: float | None = None  # the RAID notes' efficiency figure
    errors: tuple[str, ...] = field(default_factory=tuple)
    flags: tuple[str, ...] = ()  # guards its figures tripped (docs/protocol.md)
    # each repetition's single figures, keyed as on the wire (SINGLE_FIGURES): a verdict on
    # CPU, latency or efficiency is tested on these, as one on MB/s is on `mb_s.values`
    passes: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    # a steady-state phase's rounds, per repetition that ended well: parts of one run of the
    # phase, never repetitions (kept apart from its figures: model.rounds_kept)
    steady_rounds: tuple[KeptRounds, ...] = ()

    @property
    def name(self) -> str:
        return BONNIE_NAMES[self.phase]

    def values(self) -> list[ResultValue]:
        """This phase in the history's vocabulary (`model.vocabulary.MEASURED`, shared with
        imports): MB/s and IOPS with their spread over repetitions, then the single figures
        with their passes' (each repetition's latency, CPU and efficiency);
        a steady-state phase's rounds last, under its phase qualified by repetition
        (`model.rounds_kept`)."""
        phase, errors = self.phase.value, self.errors
        values = [
            ResultValue(phase, q.metric, q.unit, s.median, s.low, s.high, s.n, s.values, self.flags)
            if s is not None
            # no repetition ended well: the phase's MB/s and IOPS are kept missing, with why
            else ResultValue(phase, q.metric, q.unit, None, repetitions=0, flags=self.flags)
            for q, s in ((THROUGHPUT, self.mb_s), (IOPS, self.iops))
            if s is not None or errors
        ]
        singles = (
            (LATENCY_P50, "lat_p50_us", self.lat_p50_us),
            (LATENCY_P99, "lat_p99_us", self.lat_p99_us),
            (CPU, "cpu_pct", self.cpu_pct),
            (EFFICIENCY, "kb_s_per_cpu_pct", self.kb_s_per_cpu_pct),
        )
        for q, key, figure in singles:
            passes = self.passes.get(key, ())
            values.append(
                ResultValue(
                    phase, q.metric, q.unit, figure, *_spread(figure, passes), passes, self.flags
                )
            )
        if errors:  # on each figure: why it is missing, or of fewer repetitions
            values = [replace(value, errors=errors) for value in values]
        values += [value for kept in self.steady_rounds for value in round_values(phase, kept)]
        return values


def _spread(
    figure: float | None, passes: tuple[float, ...]
) -> tuple[float | None, float | None, int]:
    """A single figure's min, max and repetitions: those of its passes; no repetition for a
    figure nothing measured (a group's total latency, a failed phase's CPU)."""
    if passes:
        return min(passes), max(passes), len(passes)
    return None, None, 0 if figure is None else 1


class PhaseFigures(Protocol):
    """What a summary takes of one repetition: an engine's outcome, or the phase_result
    event a client received (a client summarises a run the helper never finished)."""

    @property
    def phase(self) -> Phase: ...
    @property
    def error(self) -> str | None: ...
    @property
    def mb_s(self) -> float: ...
    @property
    def iops(self) -> float: ...
    @property
    def lat_p50_us(self) -> float | None: ...
    @property
    def lat_p99_us(self) -> float | None: ...
    @property
    def cpu_pct(self) -> float | None: ...
    @property
    def flags(self) -> tuple[str, ...]: ...
    @property
    def kept_rounds(self) -> KeptRounds | None: ...


def summarize(phase: Phase, outcomes: Sequence[PhaseFigures]) -> PhaseResult:
    good = [o for o in outcomes if o.phase is phase and o.error is None]
    errors = tuple(o.error for o in outcomes if o.phase is phase and o.error)
    latencies50 = [o.lat_p50_us for o in good if o.lat_p50_us is not None]
    latencies99 = [o.lat_p99_us for o in good if o.lat_p99_us is not None]
    cpus = [o.cpu_pct for o in good if o.cpu_pct is not None]
    mb = spread_of([o.mb_s for o in good])
    cpu = statistics.median(cpus) if cpus else None
    # each pass's own KB/s per CPU %, then their median: a ratio of two medians would pair
    # one pass's throughput with another's CPU
    each = [e for o in good if (e := efficiency(o.mb_s, o.cpu_pct)) is not None]
    per_cpu = statistics.median(each) if each else None
    passes = {
        "lat_p50_us": tuple(latencies50),
        "lat_p99_us": tuple(latencies99),
        "cpu_pct": tuple(cpus),
        "kb_s_per_cpu_pct": tuple(each),
    }
    return PhaseResult(
        phase=phase,
        mb_s=mb,
        iops=spread_of([o.iops for o in good]),
        lat_p50_us=statistics.median(latencies50) if latencies50 else None,
        lat_p99_us=statistics.median(latencies99) if latencies99 else None,
        cpu_pct=cpu,
        kb_s_per_cpu_pct=per_cpu,
        errors=errors,
        # any repetition's guard holds for the phase: its figures mix that repetition in
        flags=tuple(dict.fromkeys(f for o in outcomes if o.phase is phase for f in o.flags)),
        passes={key: figures for key, figures in passes.items() if figures},
        steady_rounds=tuple(kept for o in good if (kept := o.kept_rounds) is not None),
    )


def phase_summaries(outcomes: Sequence[PhaseFigures]) -> tuple[PhaseResult, ...]:
    """Each phase that ran, summarised over its repetitions, in the order phases first ran:
    the helper's run_result, and a client's for a run the helper never finished."""
    phases = dict.fromkeys(outcome.phase for outcome in outcomes)
    return tuple(summarize(phase, outcomes) for phase in phases)

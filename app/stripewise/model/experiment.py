"""An experiment's design: what it varies, over which values, on which target, judged by what.

An experiment varies one or two parameters over listed values and runs the same benchmark at
every combination (a point). A parameter is either a kernel tunable of the target's block
devices or of writeback (`model.tunables`: applied through the helper's journaled verbs and put
back after each point), or a workload parameter of the benchmark itself (block size, queue depth,
streams: a different spec, nothing written to the machine).

The starting settings (the tunables' values before the experiment, the benchmark's own workload)
are a point too, the baseline: every other point is judged against it.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from stripewise.model.bench import (
    MAX_BLOCK,
    BenchSpec,
    Phase,
    PhaseResult,
    SizeTooLargeError,
    SpecError,
    parse_size,
)
from stripewise.model.metric_words import lowered, metric_words
from stripewise.model.setting_labels import PHASE_LABELS
from stripewise.model.tunables import (
    PAGE_BYTES,
    TUNABLES,
    DeviceLimits,
    Scope,
    TuningError,
    tunable,
    validate,
)

Value = int | str  # a tunable's value (a number, or a scheduler's name) or a workload figure
Values = tuple[tuple[str, Value], ...]  # (parameter, value) in the design's order of parameters

MAX_PARAMETERS = 2  # a grid of two is a heat map; three would need a design of its own
MAX_VALUES = 32  # per parameter; a grid is at most 32 x 32 points
MAX_SEARCH_DEPTH = 256  # BenchSpec's own bound on queue depth


class ExperimentError(ValueError):
    """A design that cannot run; the message names the parameter or value."""


class Kind(StrEnum):
    TUNABLE = "tunable"  # written to the machine by the helper, put back after each point
    WORKLOAD = "workload"  # a field of the benchmark's spec


class Metric(StrEnum):
    """A figure of one phase that an experiment optimises; latency and CPU are minimised."""

    MB_S = "mb_s"
    IOPS = "iops"
    LAT_P50_US = "lat_p50_us"
    LAT_P99_US = "lat_p99_us"
    CPU_PCT = "cpu_pct"
    KB_S_PER_CPU_PCT = "kb_s_per_cpu_pct"

    @property
    def unit(self) -> str:
        return _METRIC_UNITS[self]

    @property
    def minimised(self) -> bool:
        return self in (Metric.LAT_P50_US, Metric.LAT_P99_US, Metric.CPU_PCT)


_METRIC_UNITS = {
    Metric.MB_S: "MB/s",
    Metric.IOPS: "IOPS",
    Metric.LAT_P50_US: "us",
    Metric.LAT_P99_US: "us",
    Metric.CPU_PCT: "%",
    Metric.KB_S_PER_CPU_PCT: "KB/s per CPU %",
}

# each metric's figure in the history's vocabulary, named as the comparison names it
_RESULT_METRICS = {
    Metric.MB_S: "throughput",
    Metric.IOPS: "iops",
    Metric.LAT_P50_US: "latency_p50",
    Metric.LAT_P99_US: "latency_p99",
    Metric.CPU_PCT: "cpu",
    Metric.KB_S_PER_CPU_PCT: "efficiency",
}

# workload parameters: the spec's field each sets, as the Benchmark page names them
WORKLOAD = ("block_size", "queue_depth", "streams")
# knobs whose values are no scale: the least aggressive is the one the machine had
UNORDERED = ("scheduler", "rq_affinity", "nomerges")


# figures per I/O: an I/O of another size is other work (model/compare_caveats.PER_IO)
PER_IO_METRICS = (Metric.IOPS, Metric.LAT_P50_US, Metric.LAT_P99_US)


@dataclass(frozen=True)
class Objective:
    phase: Phase
    metric: Metric

    @property
    def label(self) -> str:
        return f"{self.phase.value}:{self.metric.value}"

    @property
    def words(self) -> str:
        """As a card says it: "Sequential read throughput", not `seq_read:mb_s`."""
        return f"{PHASE_LABELS[self.phase]} {lowered(metric_words(_RESULT_METRICS[self.metric]))}"

    @classmethod
    def parse(cls, text: str, phases: Sequence[Phase]) -> Objective:
        """`seq_read:mb_s`, `random_read:lat_p99_us`; the phase must be one the spec runs."""
        phase_name, _colon, metric_name = text.partition(":")
        try:
            phase = Phase(phase_name.strip())
        except ValueError:
            raise ExperimentError(f"metric: unknown phase {phase_name!r}") from None
        if phase not in phases:
            raise ExperimentError(f"metric: {phase.value} is not among the phases run")
        try:
            metric = Metric(metric_name.strip() or Metric.MB_S.value)
        except ValueError:
            known = ", ".join(m.value for m in Metric)
            raise ExperimentError(f"metric: unknown {metric_name!r} (known: {known})") from None
        return cls(phase, metric)


@dataclass(frozen=True)
class Parameter:
    """One varied parameter and its values, in the order given."""

    name: str  # a tunable's key (read_ahead_kb, vm.dirty_ratio) or a workload name
    values: tuple[Value, ...]

    @property
    def kind(self) -> Kind:
        return Kind.WORKLOAD if self.name in WORKLOAD else Kind.TUNABLE

    @property
    def unit(self) -> str:
        if self.name == "block_size":
            return "bytes"
        if self.name in WORKLOAD:
            return "I/Os" if self.name == "queue_depth" else "streams"
        return tunable(self.name).unit

    @property
    def scope(self) -> Scope | None:
        return None if self.kind is Kind.WORKLOAD else tunable(self.name).scope


def parse_vary(text: str) -> Parameter:
    """`read_ahead_kb=128,512,4096` or `block_size=4k,64k,1M`: the name checked, each value
    read (sizes for block_size), duplicates refused. Whether a value suits the target's own
    devices is checked by `check_values` once they are known."""
    name, equals, listed = text.partition("=")
    name = name.strip()
    if not equals or not listed.strip():
        raise ExperimentError(f"--vary {text!r}: write NAME=V1,V2,...")
    if name not in WORKLOAD:
        try:
            name = tunable(name).key
        except TuningError as exc:
            known = ", ".join((*WORKLOAD, *TUNABLES))
            raise ExperimentError(f"--vary: unknown parameter {name!r} (known: {known})") from exc
    words = [w.strip() for w in listed.split(",")]
    if any(not w for w in words):
        raise ExperimentError(f"--vary {name}: an empty value in {listed!r}")
    if len(words) > MAX_VALUES:
        raise ExperimentError(f"--vary {name}: at most {MAX_VALUES} values, not {len(words)}")
    values = tuple(
        _workload_value(name, w) if name in WORKLOAD else _tunable_word(w) for w in words
    )
    if len(set(values)) != len(values):
        raise ExperimentError(f"--vary {name}: a value is listed twice")
    return Parameter(name, values)


def parse_range(text: str) -> tuple[int, int]:
    """`queue_depth=1..128` for a latency target: the bounds of the search."""
    name, _equals, bounds = text.partition("=")
    low, dots, high = bounds.partition("..")
    if name.strip() not in ("queue_depth", "streams") or not dots:
        raise ExperimentError("a latency target searches queue_depth=LO..HI or streams=LO..HI")
    try:
        lo, hi = int(low), int(high)
    except ValueError:
        raise ExperimentError(f"--vary {text!r}: LO and HI are whole numbers") from None
    top = MAX_SEARCH_DEPTH if name.strip() == "queue_depth" else 64
    if not 1 <= lo < hi <= top:
        raise ExperimentError(f"--vary {name.strip()}: 1 <= LO < HI <= {top}, not {lo}..{hi}")
    return lo, hi


def _tunable_word(word: str) -> Value:
    return int(word) if word.lstrip("-").isdigit() and word.isascii() else word


def _workload_value(name: str, word: str) -> int:
    try:
        number = parse_size(word, MAX_BLOCK) if name == "block_size" else int(word)
    except SizeTooLargeError as exc:
        raise ExperimentError(f"--vary {name}: {exc}") from None
    except (SpecError, ValueError):
        # LO..HI is a latency target's search, not a list of values
        search = " (LO..HI searches with --latency-target-us)" if ".." in word else ""
        raise ExperimentError(f"--vary {name}: {word!r} is not a number{search}") from None
    return number


def check_values(parameter: Parameter, limits: Mapping[str, DeviceLimits]) -> Parameter:
    """Each value of a tunable against its range and every target device's limits
    (`limits`: device -> its limits; empty for a global knob); the values as written."""
    if parameter.kind is Kind.WORKLOAD:
        return parameter
    checked: list[Value] = []
    for value in parameter.values:
        written: Value = value
        try:
            for device_limits in limits.values() or (None,):
                written = validate(parameter.name, value, device_limits)
        except TuningError as exc:
            raise ExperimentError(f"--vary {exc}") from None
        page_kib = PAGE_BYTES // 1024
        if parameter.name == "read_ahead_kb" and isinstance(written, int) and written % page_kib:
            # the kernel keeps whole pages: the point would measure another value than its name
            kept = written - written % page_kib
            raise ExperimentError(
                f"--vary read_ahead_kb: {written} is not a whole number of {page_kib} KiB "
                f"pages (the kernel would keep {kept})"
            )
        checked.append(written)
    return replace(parameter, values=tuple(checked))


def problem_on_hosts(
    vary: Sequence[str], metric: str | None, latency_target_us: float | None
) -> tuple[str, str] | None:
    """What an experiment over a host group cannot do: the field (`vary`, `metric`,
    `latency_target`) and one line naming the problem; None when it can. A tunable needs the
    helper, which runs on this machine only; the hosts' total carries throughput and IOPS but
    no latency (a sum of latencies means nothing)."""
    for text in vary:
        name = text.partition("=")[0].strip()
        if name not in WORKLOAD:
            return "vary", (
                f"{name}: over hosts only workload parameters vary (block_size, queue_depth, "
                "streams); a tunable needs the helper, which runs on this machine"
            )
    if metric is not None and metric.partition(":")[2].strip() not in (Metric.MB_S, Metric.IOPS):
        return "metric", "over hosts the total is throughput (mb_s) or IOPS (iops)"
    if latency_target_us is not None:
        return "latency_target", (
            "a latency target needs a p99, and the hosts' total carries none: search on "
            "this machine"
        )
    return None


def apply_workload(spec: BenchSpec, values: Values) -> BenchSpec:
    """The spec of a point: its workload values in place of the spec's own."""
    for name, value in values:
        if name == "block_size":
            spec = replace(spec, block_bytes=int(value), random_block_bytes=int(value))
        elif name == "queue_depth":
            spec = replace(spec, queue_depth=int(value))
        elif name == "streams":
            spec = replace(spec, streams=int(value))
    return spec


def workload_of(spec: BenchSpec, name: str, judged: Phase) -> int:
    """The spec's own value of a workload parameter: the baseline's. A block size is the one
    the judged phase runs with (a random phase's is the random block size), so the starting
    settings are the workload as it was."""
    if name == "block_size":
        return spec.block_bytes_for(judged)
    return spec.queue_depth if name == "queue_depth" else spec.streams


@dataclass(frozen=True)
class Design:
    """What an experiment runs. `devices`: the target's block devices whose tunables it
    varies (per-device knobs are written to each; md knobs to the md arrays among them)."""

    target: str
    spec: BenchSpec
    parameters: tuple[Parameter, ...]
    objective: Objective
    devices: tuple[str, ...] = ()
    half_width_pct: float = 5.0
    max_passes: int = 9
    latency_target_us: float | None = None
    search: tuple[int, int] | None = None  # LO..HI of the latency target's search

    def problems(self) -> list[str]:
        """Everything that stops it, each naming the parameter; empty when it may run."""
        found = []
        if not 1 <= len(self.parameters) <= MAX_PARAMETERS and self.search is None:
            found.append(f"vary one or two parameters, not {len(self.parameters)}")
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            found.append("a parameter is varied twice")
        if not 0.5 <= self.half_width_pct <= 50:
            found.append("half-width: 0.5 to 50 %")
        if not 3 <= self.max_passes <= 50:
            found.append("max passes: 3 to 50")
        if self.latency_target_us is not None and self.latency_target_us <= 0:
            found.append("latency target: a positive number of us")
        if (self.latency_target_us is None) != (self.search is None):
            found.append("a latency target needs --vary queue_depth=LO..HI, and the other way")
        if "block_size" in names and self.objective.metric in PER_IO_METRICS:
            # an I/O of 1 MiB and one of 4 KiB are not the same work (history compare calls
            # such figures not comparable): a block size is judged by MB/s, CPU or efficiency
            found.append(
                f"metric: {self.objective.metric.value} counts I/Os of different sizes in a "
                "block_size sweep: judge it by mb_s, cpu_pct or kb_s_per_cpu_pct"
            )
        if "read_ahead_kb" in names and self.spec.direct:
            # read-ahead fills the page cache ahead of buffered reads; O_DIRECT skips that cache
            found.append(
                "read_ahead_kb acts only on reads through the page cache: with direct I/O every "
                "value reads the same; run it buffered (--buffered, or Direct I/O unchecked)"
            )
        tuned = [p for p in self.parameters if p.kind is Kind.TUNABLE]
        if tuned and any(p.scope is not Scope.GLOBAL for p in tuned) and not self.devices:
            found.append("the target has no block device whose tunables could be varied")
        for values in self.points():
            problems = apply_workload(self.spec, values).problems()
            if problems:
                found.append(f"the point {label(values)}: {problems[0]}")  # as typed: 3k
                break
        return found

    def points(self) -> list[Values]:
        """Every combination of the values, the first parameter varying slowest."""
        names = [p.name for p in self.parameters]
        grid = itertools.product(*(p.values for p in self.parameters))
        return [tuple(zip(names, combo, strict=True)) for combo in grid]


def label(values: Values) -> str:
    """`read_ahead_kb=512, queue_depth=8`."""
    return ", ".join(f"{name}={shown_value(name, value)}" for name, value in values)


def shown_value(name: str, value: Value) -> str:
    if name == "block_size" and isinstance(value, int):
        for unit, scale in (("M", 2**20), ("k", 2**10)):
            if value >= scale and value % scale == 0:
                return f"{value // scale}{unit}"
    return str(value)


def aggressiveness(name: str, value: Value, baseline: Value | None) -> tuple[int, float]:
    """How far a value goes, to pick the least aggressive among equals: for a scale (read-ahead,
    queue depth, dirty limits, sizes) the smaller; for a knob whose values are no scale (the
    scheduler, rq_affinity, nomerges) the machine's own value first, then the others as listed."""
    if name in UNORDERED or not isinstance(value, int):
        return (0 if value == baseline else 1, 0.0)  # ties keep the order the values were listed
    return (0, float(value))


def not_started(why: str) -> str:
    """What an experiment says when its first benchmark is refused before any I/O: the CLI's
    one line (exit 2) and the Experiment page's, alike."""
    return f"the benchmark did not start: {why}; nothing was applied"


def guards_of(results: Sequence[PhaseResult], objective: Objective) -> tuple[str, ...]:
    """The guards the judged phase's figures tripped in one run (model.guards names)."""
    phase = next((r for r in results if r.phase is objective.phase), None)
    return () if phase is None else tuple(phase.flags)


def measured(results: Sequence[PhaseResult], objective: Objective) -> tuple[float, float | None]:
    """A point's pass: the objective's figure in one run's results (the mean over its passes,
    one with an experiment's runs) and that phase's p99 latency (us) when measured. ValueError
    when the run did not measure it."""
    phase = next((r for r in results if r.phase is objective.phase), None)
    if phase is None:
        raise ValueError(f"the run measured no {objective.phase.value}")
    metric = objective.metric
    spread = {Metric.MB_S: phase.mb_s, Metric.IOPS: phase.iops}.get(metric)
    if spread is not None:
        passes = spread.values or (spread.median,)
    else:
        passes = phase.passes.get(metric.value, ())
        single = getattr(phase, metric.value)
        passes = passes or (() if single is None else (single,))
    if not passes:
        raise ValueError(f"the run measured no {objective.label}")
    p99 = phase.passes.get("lat_p99_us") or (
        () if phase.lat_p99_us is None else (phase.lat_p99_us,)
    )
    return statistics.fmean(passes), statistics.fmean(p99) if p99 else None

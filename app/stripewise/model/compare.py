"""Runs side by side: figure by figure with the change, and what differed around them.

A change smaller than either run's own spread (over repetitions, or over its samples) is
reported as noise, not as a gain or a loss: that is the habit the field notes lacked.
`compare_runs` takes 2 to 8 runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stripewise.model.bench import SpecError, parse_size
from stripewise.model.run import ResultValue, RunDetail

METRICS = ("throughput", "iops", "cpu", "latency_p50", "latency_p99", "efficiency")
LOWER_IS_BETTER = {"cpu", "latency_p50", "latency_p99"}
PHASE_ORDER = ("seq_write", "rewrite", "seq_read", "random_read", "random_write", "mixed")
# Bookkeeping that differs between any two runs and says nothing about the measurement
_IGNORED_CONTEXT = ("recorder", "fill_pct", "free_bytes", "python", "test_file")
UNMEASURED_NOISE_PCT = 5.0  # without repetitions there is no spread: smaller changes are noise


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Dotted keys of a run context; lists of named entries by name: disks[sda].tuning.x."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            yield from flatten(inner, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        for position, inner in enumerate(value):
            label = inner.get("name", position) if isinstance(inner, Mapping) else position
            yield from flatten(inner, f"{prefix}[{label}]")
    else:
        yield prefix, value


# ---------------------------------------------------------------------------------------------
# Two to eight runs: per-metric rows against a baseline, what differed, and a parameter sweep.
# ---------------------------------------------------------------------------------------------

MIN_RUNS, MAX_RUNS = 2, 8
# A trend needs three points: with two runs the results table already is the whole comparison.
MIN_SWEEP_RUNS = 3
CONTEXT_GROUPS = (
    "array",
    "disks",
    "tuning",
    "filesystem",
    "kernel",
    "machine",
    "engine",
    "workload",
    "other",
)
# Bookkeeping beyond _IGNORED_CONTEXT, by first key segment: the host key repeats `host`; an
# import's file, line and digest, fio's status reports and disk_util say where figures came
# from, not what they were measured on.
_IGNORED_HEADS = frozenset(
    ("host_key", "import", "line", "lines", "time", "run_began", "status_reports", "disk_util")
)
_IGNORED_KEYS = frozenset(("spec.sample_rate_hz",))  # how often it was sampled
_FILESYSTEM_KEYS = (
    "filesystem",
    "mount_options",
    "mountpoint",
    "source",
    "target",
    "target_kind",
    "device",
    "mounted_at",
)
_MACHINE_KEYS = ("host", "cpu_model", "cpu_count", "ram_bytes")
_ENGINE_KEYS = ("engine", "engine_version")
_GEOMETRY = ("array.chunk_kib", "array.level", "array.members", "array.raid_disks")
# mount options the kernel fills in from the array's geometry (xfs sunit/swidth, ext4 stripe)
_GEOMETRY_OPTIONS = ("sunit=", "swidth=", "stripe=")
_DISK_KNOB = re.compile(r"disks\[[^\]]*\]\.tuning\.(\w+)")
_SWEEP_KNOBS = ("read_ahead_kb", "nr_requests", "max_sectors_kb", "wbt_lat_usec")
# parameter -> (label, unit, divisor from the stored unit to the shown one)
_SWEEP_LABELS: dict[str, tuple[str, str, float]] = {
    "array.chunk_kib": ("chunk size", "KiB", 1),
    "array.stripe_cache_size": ("stripe_cache_size", "pages", 1),
    "dirty.dirty_ratio_pct": ("vm.dirty_ratio", "%", 1),
    "dirty.dirty_background_ratio_pct": ("vm.dirty_background_ratio", "%", 1),
    "dirty.dirty_bytes": ("vm.dirty_bytes", "MiB", 2**20),
    "dirty.dirty_background_bytes": ("vm.dirty_background_bytes", "MiB", 2**20),
    "dirty.dirty_expire_centisecs": ("vm.dirty_expire_centisecs", "cs", 1),
    "dirty.dirty_writeback_centisecs": ("vm.dirty_writeback_centisecs", "cs", 1),
    "spec.size": ("file size", "GiB", 2**30),
    "spec.block_size": ("block size", "KiB", 2**10),
    "spec.queue_depth": ("queue depth", "", 1),
    "spec.iodepth": ("queue depth", "", 1),
    "spec.streams": ("streams", "", 1),
    "spec.numjobs": ("streams", "", 1),
}
_KNOB_LABELS = {
    "read_ahead_kb": ("read-ahead", "KiB"),
    "nr_requests": ("nr_requests", ""),
    "max_sectors_kb": ("max_sectors_kb", "KiB"),
    "wbt_lat_usec": ("wbt_lat_usec", "us"),
}
_BYTE_SIZES = ("spec.size", "spec.block_size")
_MIXED = object()  # a disk knob that differs between the disks of one run


@dataclass(frozen=True)
class Spread:
    """A figure's own variation: min..max over repetitions, or over batch means of samples."""

    low: float
    high: float
    source: str  # "repetitions" or "samples"

    @property
    def width(self) -> float:
        return self.high - self.low


@dataclass(frozen=True)
class MetricRow:
    phase: str
    metric: str
    unit: str
    values: tuple[float | None, ...]  # per run, in Comparison.runs order
    spreads: tuple[Spread | None, ...]
    changes_pct: tuple[float | None, ...]  # None for the baseline and missing figures
    verdicts: tuple[str, ...]  # better / worse / noise / "" (baseline, nothing to compare)


@dataclass(frozen=True)
class ContextDifference:
    key: str  # dotted: disks[sda].tuning.read_ahead_kb, array.chunk_kib
    group: str  # one of CONTEXT_GROUPS
    values: tuple[Any, ...]  # per run; None where a run lacks the key


@dataclass(frozen=True)
class Sweep:
    """The one numeric parameter the runs differ in, per run, in `unit`."""

    key: str
    label: str
    unit: str
    values: tuple[float, ...]


@dataclass(frozen=True)
class Comparison:
    runs: tuple[RunDetail, ...]
    baseline_index: int
    rows: tuple[MetricRow, ...]
    context: tuple[ContextDifference, ...]
    sweep: Sweep | None

    @property
    def baseline(self) -> RunDetail:
        return self.runs[self.baseline_index]


def compare_runs(
    runs: Sequence[RunDetail],
    baseline_id: int | None = None,
    sample_spreads: Mapping[int, Mapping[tuple[str, str], Spread]] | None = None,
) -> Comparison:
    """2 to 8 runs against a baseline: `baseline_id`, else the one run marked as baseline,
    else the first. `sample_spreads` (by run id) stand in for runs without repetitions."""
    if not MIN_RUNS <= len(runs) <= MAX_RUNS:
        raise ValueError(f"compare {MIN_RUNS} to {MAX_RUNS} runs, not {len(runs)}")
    chosen = tuple(runs)
    base = _baseline_index(chosen, baseline_id)
    contexts = [_comparable_context(run) for run in chosen]
    differences = _differences(contexts)
    return Comparison(
        runs=chosen,
        baseline_index=base,
        rows=tuple(_metric_rows(chosen, base, sample_spreads or {})),
        context=tuple(differences),
        sweep=_sweep(contexts, differences),
    )


def is_lower_better(metric: str) -> bool:
    """Latency and CPU: less is better. `kb_s_per_cpu_pct` is an efficiency, more is better."""
    if metric in LOWER_IS_BETTER or "latency" in metric:
        return True
    return metric.endswith("_cpu_pct") and "_per_" not in metric


def _baseline_index(runs: tuple[RunDetail, ...], baseline_id: int | None) -> int:
    ids = [run.summary.id for run in runs]
    if baseline_id is not None:
        if baseline_id not in ids:
            raise ValueError(f"baseline run {baseline_id} is not among the compared runs")
        return ids.index(baseline_id)
    marked = [i for i, run in enumerate(runs) if run.summary.baseline]
    return marked[0] if len(marked) == 1 else 0


# --- results ---------------------------------------------------------------------------------


def _metric_rows(
    runs: tuple[RunDetail, ...],
    base: int,
    sample_spreads: Mapping[int, Mapping[tuple[str, str], Spread]],
) -> list[MetricRow]:
    indexes = [{(r.phase, r.metric): r for r in run.results} for run in runs]
    rows = []
    for key in _ordered_keys(runs):
        found = [index.get(key) for index in indexes]
        values = tuple(r.value if r is not None else None for r in found)
        spreads = tuple(
            _spread_of(r, sample_spreads.get(run.summary.id, {}).get(key))
            for r, run in zip(found, runs, strict=True)
        )
        unit = next((r.unit for r in found if r is not None), "")
        changes, verdicts = _verdicts(key[1], values, spreads, base)
        rows.append(MetricRow(key[0], key[1], unit, values, spreads, changes, verdicts))
    return rows


def _ordered_keys(runs: Sequence[RunDetail]) -> list[tuple[str, str]]:
    """Bonnie++'s phase order and METRICS first; unknown ones after, as first seen."""
    seen: dict[tuple[str, str], None] = {}
    for run in runs:
        seen.update(dict.fromkeys((r.phase, r.metric) for r in run.results))
    phases = list(dict.fromkeys(phase for phase, _ in seen))
    metrics = list(dict.fromkeys(metric for _, metric in seen))

    def rank(key: tuple[str, str]) -> tuple[int, int, int, int]:
        phase, metric = key
        known_phase = PHASE_ORDER.index(phase) if phase in PHASE_ORDER else len(PHASE_ORDER)
        known_metric = METRICS.index(metric) if metric in METRICS else len(METRICS)
        return known_phase, phases.index(phase), known_metric, metrics.index(metric)

    return sorted(seen, key=rank)


def _spread_of(result: ResultValue | None, from_samples: Spread | None) -> Spread | None:
    """Repetitions when there were several, else the samples' batch means, else nothing."""
    if result is None or result.value is None:
        return None
    if result.repetitions > 1 and result.min_value is not None and result.max_value is not None:
        return Spread(result.min_value, result.max_value, "repetitions")
    return from_samples


def _verdicts(
    metric: str, values: tuple[float | None, ...], spreads: tuple[Spread | None, ...], base: int
) -> tuple[tuple[float | None, ...], tuple[str, ...]]:
    changes: list[float | None] = []
    verdicts: list[str] = []
    reference, reference_spread = values[base], spreads[base]
    for i, (value, spread) in enumerate(zip(values, spreads, strict=True)):
        if i == base or value is None or reference is None or reference == 0:
            changes.append(None)
            verdicts.append("")
            continue
        change = 100.0 * (value - reference) / abs(reference)
        changes.append(change)
        verdicts.append(_verdict(metric, value, reference, change, (spread, reference_spread)))
    return tuple(changes), tuple(verdicts)


def _verdict(
    metric: str, value: float, reference: float, change: float, spreads: tuple[Spread | None, ...]
) -> str:
    """Beyond noise only when the difference exceeds the larger of the two runs' spreads; a
    zero-width spread (one pass, an import's min = max) says nothing, so the % rule applies."""
    width = max((s.width for s in spreads if s is not None), default=0.0)
    noise = abs(value - reference) <= width if width > 0 else abs(change) < UNMEASURED_NOISE_PCT
    if noise:
        return "noise"
    improved = change < 0 if is_lower_better(metric) else change > 0
    return "better" if improved else "worse"


# --- spreads and series from samples ---------------------------------------------------------


def batch_spread(values: Sequence[float], batches: int = 5) -> Spread | None:
    """Batch means: min..max of the means of `batches` consecutive equal slices.

    Consecutive samples are correlated, so their own min..max overstates the noise and their
    standard error understates it; means of long slices behave like independent passes. The
    leading remainder is dropped (a phase's first samples are its ramp-up). None under two
    values per batch."""
    size = len(values) // batches if batches > 0 else 0
    if size < 2:
        return None
    usable = list(values)[len(values) - size * batches :]
    means = [sum(usable[i * size : (i + 1) * size]) / size for i in range(batches)]
    return Spread(min(means), max(means), "samples")


ENGINE_KEYS = ("engine_read_mb_s", "engine_write_mb_s", "engine_read_iops", "engine_write_iops")
Series = dict[str, tuple[tuple[float, ...], tuple[float, ...]]]  # phase -> (s since start, MB/s)


@dataclass(frozen=True)
class EngineDigest:
    spreads: dict[tuple[str, str], Spread]  # (phase, "throughput" | "iops") -> batch means
    series: Series  # each phase's first repetition, aligned at its start


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def engine_digest(
    samples: Iterable[tuple[float, str, int, Mapping[str, float | None]]],
) -> EngineDigest:
    """One pass over (t_s, phase, repetition, data) in time order: batch-mean spreads of the
    engine's MB/s and IOPS per phase (every repetition), and the MB/s of each phase's first
    repetition against seconds since it began. Rates are counted as the phase's result counts
    them (PhaseOutcome.mb_s): rewrite its writes only, everything else reads plus writes."""
    values: dict[tuple[str, str], list[float]] = {}
    starts: dict[str, tuple[float, int]] = {}
    points: dict[str, tuple[list[float], list[float]]] = {}
    for t_s, phase, repetition, data in samples:
        if phase in ("", "None"):
            continue
        read_mb, write_mb, read_ops, write_ops = (_number(data.get(k)) for k in ENGINE_KEYS)
        if phase == "rewrite":
            read_mb = read_ops = None
        mb_s = (
            None if read_mb is None and write_mb is None else (read_mb or 0.0) + (write_mb or 0.0)
        )
        iops = (
            None
            if read_ops is None and write_ops is None
            else (read_ops or 0.0) + (write_ops or 0.0)
        )
        if mb_s is None and iops is None:
            continue
        if mb_s is not None:
            values.setdefault((phase, "throughput"), []).append(mb_s)
            start = starts.setdefault(phase, (t_s, repetition))
            if repetition == start[1]:
                xs, ys = points.setdefault(phase, ([], []))
                xs.append(t_s - start[0])
                ys.append(mb_s)
        if iops is not None:
            values.setdefault((phase, "iops"), []).append(iops)
    spreads = {key: batch_spread(found) for key, found in values.items()}
    return EngineDigest(
        {key: spread for key, spread in spreads.items() if spread is not None},
        {phase: (tuple(xs), tuple(ys)) for phase, (xs, ys) in points.items()},
    )


# --- context ---------------------------------------------------------------------------------


def _comparable_context(run: RunDetail) -> dict[str, Any]:
    """Flattened context without bookkeeping, the run's spec under `spec`, plus the derived
    `workload.file_size_vs_ram`."""
    context = dict(run.context)
    if "spec" not in context and run.spec:
        context["spec"] = run.spec
    flat = {key: value for key, value in flatten(context) if not is_bookkeeping(key)}
    ratio = _file_size_vs_ram(flat)
    if ratio is not None:
        flat["workload.file_size_vs_ram"] = ratio
    return flat


def is_bookkeeping(key: str) -> bool:
    """Keys that differ between any two runs and say nothing about the measurement."""
    head = re.split(r"[.\[]", key, maxsplit=1)[0]
    return key.startswith(_IGNORED_CONTEXT) or head in _IGNORED_HEADS or key in _IGNORED_KEYS


def _bytes(value: Any) -> float | None:
    """Sizes as the spec holds them: bytes (measured runs), or text such as `8G` (fio's
    options in an imported run)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(parse_size(value))
        except SpecError:
            return None
    return None


def _file_size_vs_ram(flat: Mapping[str, Any]) -> float | None:
    """Test file size over RAM: under 2 the page cache can answer part of the reads."""
    size = _bytes(flat.get("spec.size"))
    ram = _bytes(flat.get("ram_bytes"))
    if size is None or not ram:
        return None
    return round(size / ram, 2)


def context_group(key: str) -> str:
    """Which CONTEXT_GROUPS entry a dotted context key belongs to."""
    head = key.split(".", 1)[0].split("[", 1)[0]
    if ".tuning." in key or head == "dirty" or key == "array.stripe_cache_size":
        return "tuning"
    if head in ("array", "disks"):
        return head
    if head in _FILESYSTEM_KEYS or head in ("fill_pct", "free_bytes"):
        return "filesystem"
    if head == "kernel":
        return "kernel"
    if head in _MACHINE_KEYS:
        return "machine"
    if head in _ENGINE_KEYS:
        return "engine"
    if head in ("spec", "workload"):
        return "workload"
    return "other"


def _differences(contexts: Sequence[Mapping[str, Any]]) -> list[ContextDifference]:
    keys = {key for context in contexts for key in context}
    found = []
    for key in keys:
        values = tuple(context.get(key) for context in contexts)
        if any(value != values[0] for value in values[1:]):
            found.append(ContextDifference(key, context_group(key), values))
    return sorted(found, key=lambda d: (CONTEXT_GROUPS.index(d.group), d.key))


# --- sweep -----------------------------------------------------------------------------------


def _parameter(key: str) -> str | None:
    """The sweep parameter a context key sets; per-disk knobs count once for all disks."""
    knob = _DISK_KNOB.fullmatch(key)
    if knob is not None:
        return f"disks[*].tuning.{knob.group(1)}" if knob.group(1) in _SWEEP_KNOBS else None
    if key.startswith("array.tuning.") and key.rsplit(".", 1)[1] in _SWEEP_KNOBS:
        return key
    return key if key in _SWEEP_LABELS else None


def _consequences(differing: set[str], contexts: Sequence[Mapping[str, Any]]) -> set[str]:
    """Differences that follow from another one: not a second parameter.

    The kernel sizes an md array's queue (read-ahead, max_sectors) from its geometry, mkfs
    writes the geometry into xfs/ext4 mount options, and the file-size ratio follows the size
    or the RAM."""
    derived = {"workload.file_size_vs_ram"}
    if differing & set(_GEOMETRY):
        derived |= {key for key in differing if key.startswith("array.tuning.")}
        options = [_without_geometry(context.get("mount_options")) for context in contexts]
        if all(option == options[0] for option in options):
            derived.add("mount_options")
    return derived


def _without_geometry(options: Any) -> Any:
    if not isinstance(options, str):
        return options
    return ",".join(o for o in options.split(",") if not o.startswith(_GEOMETRY_OPTIONS))


def _sweep(
    contexts: Sequence[Mapping[str, Any]], differences: Sequence[ContextDifference]
) -> Sweep | None:
    """The runs form a sweep when everything that differs (bookkeeping and consequences
    aside) is one numeric parameter, known in every run, over at least MIN_SWEEP_RUNS runs."""
    if len(contexts) < MIN_SWEEP_RUNS:
        return None
    differing = {d.key for d in differences}
    remaining = differing - _consequences(differing, contexts)
    parameters = {_parameter(key) for key in remaining}
    if len(parameters) != 1 or None in parameters:
        return None
    parameter = str(parameters.pop())
    values = [_parameter_value(context, parameter) for context in contexts]
    if any(not isinstance(v, float) for v in values):
        return None
    label, unit, divisor = _sweep_label(parameter)
    return Sweep(parameter, label, unit, tuple(float(v) / divisor for v in values))


def _parameter_value(context: Mapping[str, Any], parameter: str) -> Any:
    """The parameter's number in one run; _MIXED when its disks disagree, None if unknown."""
    if parameter.startswith("disks[*].tuning."):
        knob = parameter.rsplit(".", 1)[1]
        found = {
            v for k, v in context.items() if (m := _DISK_KNOB.fullmatch(k)) and m.group(1) == knob
        }
        if len(found) != 1:
            return _MIXED if found else None
        value: Any = found.pop()
    else:
        value = context.get(parameter)
    number = _bytes(value) if parameter in _BYTE_SIZES else value
    if isinstance(number, bool) or not isinstance(number, int | float):
        return None
    return float(number)


def _sweep_label(parameter: str) -> tuple[str, str, float]:
    if parameter in _SWEEP_LABELS:
        return _SWEEP_LABELS[parameter]
    knob = parameter.rsplit(".", 1)[1]
    label, unit = _KNOB_LABELS.get(knob, (knob, ""))
    if parameter.startswith("array.tuning."):
        label = f"array {label}"
    return label, unit, 1

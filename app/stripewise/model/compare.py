"""Runs side by side: figure by figure with the change, and what differed around them.

A change is called better or worse only when Welch's t over the two runs' passes supports it
at `verdict.CONFIDENCE` after Holm's correction for every figure of the comparison
(`model.verdict`); with fewer than `verdict.MIN_PASSES` passes a side it is "can't tell".
`compare_runs` takes 2 to 8 runs.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from stripewise.model.bench import BenchSpec, SpecError, parse_size
from stripewise.model.compare_caveats import not_comparable
from stripewise.model.phase_series import Series as Series
from stripewise.model.phase_series import engine_series as engine_series
from stripewise.model.run import ResultValue
from stripewise.model.run_context import JsonObject
from stripewise.model.run_detail import RunDetail
from stripewise.model.verdict import MIN_PASSES, Evidence, cant_tell, holm, welch
from stripewise.model.vocabulary import PHASES, is_lower_better

METRICS = ("throughput", "iops", "cpu", "latency_p50", "latency_p99", "efficiency")
PHASE_ORDER = PHASES  # bonnie++'s order, as reports list them
UNKNOWN = "unknown"  # the verdict word when the passes cannot tell (see MetricRow.verdict_text)
# Bookkeeping that differs between any two runs and says nothing about the measurement
_IGNORED_CONTEXT = ("recorder", "fill_pct", "free_bytes", "python", "test_file")


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
    (
        "host_key",
        "import",
        "line",
        "lines",
        "time",
        "run_began",
        "status_reports",
        "disk_util",
        "latency_histograms",
    )
)
_IGNORED_KEYS = frozenset(("spec.sample_rate_hz",))  # how often it was sampled
# Tuning kept outside the disks' `tuning`: the array's stripe cache, the CPU latency limit a
# run held
_TUNING_KEYS = frozenset(("array.stripe_cache_size", "spec.cpu_latency_us"))
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
_MACHINE_KEYS = ("host", "cpu_model", "cpu_count", "ram_bytes", "cpu_idle")
_ENGINE_KEYS = ("engine", "engine_version")
_GEOMETRY = ("array.chunk_kib", "array.level", "array.members", "array.raid_disks")
# mount options the kernel fills in from the array's geometry (xfs sunit/swidth, ext4 stripe)
_GEOMETRY_OPTIONS = ("sunit=", "swidth=", "stripe=")
# a queue knob of one disk or of the array: the disks' and the array's read_ahead_kb are one
# parameter, set on whichever devices the admin tuned
_DEVICE_KNOB = re.compile(r"(?:disks\[(?P<disk>[^\]]*)\]|array)\.tuning\.(?P<knob>\w+)")
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
    "spec.cpu_latency_us": ("CPU wake-up limit", "us", 1),
}
_KNOB_LABELS = {
    "read_ahead_kb": ("read-ahead", "KiB"),
    "nr_requests": ("nr_requests", ""),
    "max_sectors_kb": ("max_sectors_kb", "KiB"),
    "wbt_lat_usec": ("wbt_lat_usec", "us"),
}
_BYTE_SIZES = ("spec.size", "spec.block_size")


@dataclass(frozen=True)
class Spread:
    """A figure's own variation: min..max over its passes (two or more)."""

    low: float
    high: float
    source: str = "repetitions"

    @property
    def width(self) -> float:
        return self.high - self.low


@dataclass(frozen=True)
class MetricRow:
    phase: str
    metric: str
    unit: str
    values: tuple[float | None, ...]  # per run, in Comparison.runs order: medians over passes
    spreads: tuple[Spread | None, ...]
    changes_pct: tuple[float | None, ...]  # of the medians; None for the baseline and missing
    verdicts: tuple[str, ...]  # better / worse / noise / unknown / "" (baseline, nothing)
    passes: tuple[tuple[float, ...], ...] = ()  # per run: each pass's figure, when recorded
    pass_counts: tuple[int, ...] = ()  # per run: passes behind the figure, 0 = not recorded
    evidence: tuple[Evidence | None, ...] = ()  # per run: Welch against the baseline, Holm's p
    means: tuple[float | None, ...] = ()  # per run: the mean of its passes, when recorded
    # per run: the change of what is shown (`shown_values`): the means' change where tested
    shown_changes_pct: tuple[float | None, ...] = ()
    caveats: tuple[str, ...] = ()  # per run: why it is not judged ("" when it is)

    @property
    def shown_values(self) -> tuple[float | None, ...]:
        """What a comparison shows: the mean of the passes, the statistic the verdict tests;
        the stored median where the passes were not recorded."""
        return tuple(
            value if (mean := self.mean(i)) is None else mean for i, value in enumerate(self.values)
        )

    def statistic(self, index: int) -> str:
        """What `shown_values[index]` is: `mean` (of the passes; a lone figure is its own),
        `median` (passes not recorded), "" (missing)."""
        if self.values[index] is None:
            return ""
        if self.mean(index) is not None:
            return "mean"
        return "median" if self.pass_counts and self.pass_counts[index] == 0 else "mean"

    def mean(self, index: int) -> float | None:
        return self.means[index] if self.means else None

    def caveat(self, index: int) -> str:
        return self.caveats[index] if self.caveats else ""

    def verdict_text(self, index: int, baseline: int) -> str:
        """What the verdict says to a reader: `better`, `noise`, `can't tell: 1 pass each`,
        or why the figure is not compared."""
        if self.caveat(index):
            return self.caveat(index)
        verdict, evidence = self.verdicts[index], self.evidence[index]
        if verdict == "noise" and evidence is not None and evidence.held_alone:
            return "noise after Holm's correction (its own interval leaves out 0)"
        if verdict != UNKNOWN:
            return verdict
        counts = (self.pass_counts[baseline], self.pass_counts[index])
        if min(counts) >= MIN_PASSES:
            return "can't tell: the passes do not vary"
        return cant_tell(*counts)


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
    no_sweep: str = ""  # why the runs form no sweep, in words, when they do not

    @property
    def baseline(self) -> RunDetail:
        return self.runs[self.baseline_index]


def compare_runs(runs: Sequence[RunDetail], baseline_id: int | None = None) -> Comparison:
    """2 to 8 runs against a baseline: `baseline_id`, else the one run marked as baseline,
    else the first."""
    if not MIN_RUNS <= len(runs) <= MAX_RUNS:
        raise ValueError(f"compare {MIN_RUNS} to {MAX_RUNS} runs, not {len(runs)}")
    chosen = tuple(runs)
    base = _baseline_index(chosen, baseline_id)
    contexts = [_comparable_context(run) for run in chosen]
    differences = _differences(contexts)
    sweep = _sweep(contexts, differences)
    return Comparison(
        runs=chosen,
        baseline_index=base,
        rows=tuple(_metric_rows(chosen, base, contexts)),
        context=tuple(differences),
        sweep=sweep if isinstance(sweep, Sweep) else None,
        no_sweep=sweep if isinstance(sweep, str) else "",
    )


def count_tested(comparison: Comparison) -> int:
    """How many figure-against-baseline tests the comparison's verdicts were corrected for."""
    return sum(e is not None for row in comparison.rows for e in row.evidence)


def short_of_passes(comparison: Comparison) -> dict[int, int]:
    """Measured runs (by index) whose too few passes left a figure at "can't tell", with
    their pass count: running them again with MIN_PASSES passes would give a verdict."""
    short: dict[int, int] = {}
    base = comparison.baseline_index
    for row in comparison.rows:
        for i, verdict in enumerate(row.verdicts):
            if verdict != UNKNOWN or row.caveat(i):  # more passes would not make it comparable
                continue
            for j in (base, i):
                count = row.pass_counts[j]
                if 0 < count < MIN_PASSES and comparison.runs[j].source == "measured":
                    short[j] = min(count, short.get(j, count))
    return dict(sorted(short.items()))


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
    runs: tuple[RunDetail, ...], base: int, contexts: Sequence[Mapping[str, Any]]
) -> list[MetricRow]:
    indexes = [{(r.phase, r.metric): r for r in run.results} for run in runs]
    rows = []
    for key in _ordered_keys(runs):
        found = [index.get(key) for index in indexes]
        values = tuple(r.value if r is not None else None for r in found)
        passes = tuple(r.passes if r is not None else () for r in found)
        counts = tuple(_pass_count(r, run) for r, run in zip(found, runs, strict=True))
        unit = next((r.unit for r in found if r is not None), "")
        changes = _changes(values, base)
        caveats = not_comparable(key[0], key[1], contexts, base)
        # a figure the runs' parameters make incomparable is not tested: not in Holm's family
        evidence = tuple(
            welch(passes[base], passes[i])
            if change is not None and not caveats[i] and min(counts[base], counts[i]) >= MIN_PASSES
            else None
            for i, change in enumerate(changes)
        )
        spreads = tuple(_spread_of(r) for r in found)
        means = tuple(
            statistics.fmean(p) if p and value is not None else None
            for p, value in zip(passes, values, strict=True)
        )
        row = MetricRow(
            key[0], key[1], unit, values, spreads, changes, (), passes, counts, evidence, means
        )
        rows.append(
            replace(row, shown_changes_pct=_changes(row.shown_values, base), caveats=caveats)
        )
    return _judged(rows)


def _judged(rows: list[MetricRow]) -> list[MetricRow]:
    """Holm over every test of the comparison, then each cell's verdict from its test."""
    tested = [(r, i) for r, row in enumerate(rows) for i, e in enumerate(row.evidence) if e]
    adjusted = holm([e for r, i in tested if (e := rows[r].evidence[i]) is not None])
    evidence = [list(row.evidence) for row in rows]
    for (r, i), judged in zip(tested, adjusted, strict=True):
        evidence[r][i] = judged
    return [
        replace(
            row,
            evidence=tuple(found),
            verdicts=tuple(
                _verdict(row.metric, change, e)
                for change, e in zip(row.changes_pct, found, strict=True)
            ),
        )
        for row, found in zip(rows, evidence, strict=True)
    ]


def _pass_count(result: ResultValue | None, run: RunDetail) -> int:
    """Passes behind a figure: its recorded passes; a single figure of a one-pass run (or of
    an import) is one; 0 when the run made several but kept none for this figure (results
    filed before passes were stored)."""
    if result is None or result.value is None:
        return 0
    if result.passes:
        return len(result.passes)
    made = run.spec.repetitions if run.source == "measured" and run.spec is not None else None
    if result.repetitions > 1 or (made is not None and made > 1):
        return 0
    return 1


def _changes(values: tuple[float | None, ...], base: int) -> tuple[float | None, ...]:
    reference = values[base]
    return tuple(
        None
        if i == base or value is None or reference is None or reference == 0
        else 100.0 * (value - reference) / abs(reference)
        for i, value in enumerate(values)
    )


def _verdict(metric: str, change: float | None, evidence: Evidence | None) -> str:
    if change is None:
        return ""
    if evidence is None:
        return UNKNOWN
    if not evidence.significant:
        return "noise"
    improved = evidence.change_pct < 0 if is_lower_better(metric) else evidence.change_pct > 0
    return "better" if improved else "worse"


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


def _spread_of(result: ResultValue | None) -> Spread | None:
    """min..max over two or more passes; nothing for one pass or a missing figure."""
    if result is None or result.value is None or result.repetitions < 2:
        return None
    low = min(result.passes) if result.passes else result.min_value
    high = max(result.passes) if result.passes else result.max_value
    return None if low is None or high is None else Spread(low, high)


# --- context ---------------------------------------------------------------------------------


def _comparable_context(run: RunDetail) -> dict[str, Any]:
    """Flattened context without bookkeeping, the run's spec under `spec`, plus the derived
    `workload.file_size_vs_ram`."""
    context = run.context.to_json()
    spec = spec_settings(run.spec) if run.spec is not None else run.options
    if "spec" not in context and spec:  # a context of before schema 0006 repeats its spec
        context["spec"] = spec
    flat = {key: value for key, value in flatten(context) if not is_bookkeeping(key)}
    ratio = _file_size_vs_ram(flat)
    if ratio is not None:
        flat["workload.file_size_vs_ram"] = ratio
    return flat


def spec_settings(spec: BenchSpec) -> JsonObject:
    """A measured run's spec as the comparison names its settings (`spec.block_size`...):
    the keys of the spec the helper echoes (docs/history.md), sizes in bytes."""
    settings: JsonObject = {
        "target": spec.target,
        "size": spec.size_bytes,
        "block_size": spec.block_bytes,
        "random_block_size": spec.random_block_bytes,
        "direct": spec.direct,
        "phases": [phase.value for phase in spec.phases],
        "queue_depth": spec.queue_depth,
        "streams": spec.streams,
        "repetitions": spec.repetitions,
        "runtime_cap_s": spec.runtime_cap_s,
        "sample_rate_hz": spec.sample_rate_hz,
        "engine": spec.engine,
    }
    if spec.cpu_latency_us is not None:
        settings["cpu_latency_us"] = spec.cpu_latency_us
    return settings


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
    if ".tuning." in key or head == "dirty" or key in _TUNING_KEYS:
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
    """The parameter a differing context key sets: a device's queue knob by its name (one
    parameter whichever disks or array it was set on), any other tuning value (`dirty.*`,
    stripe_cache_size), the array's chunk, any spec parameter; None for what is no parameter
    (a filesystem, a kernel, a controller)."""
    knob = _DEVICE_KNOB.fullmatch(key)
    if knob is not None:
        return f"tuning.{knob['knob']}"
    if context_group(key) == "tuning" or key.startswith("spec.") or key in _SWEEP_LABELS:
        return key
    return None


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
) -> Sweep | str:
    """The runs form a sweep when everything that differs (bookkeeping and consequences
    aside) is one numeric parameter, known in every run, over at least MIN_SWEEP_RUNS runs;
    otherwise why not, in words."""
    if len(contexts) < MIN_SWEEP_RUNS:
        return f"a trend needs {MIN_SWEEP_RUNS} runs or more"
    differing = {d.key for d in differences}
    remaining = sorted(differing - _consequences(differing, contexts))
    if not remaining:
        return "the runs differ in no parameter"
    parameters = {key: _parameter(key) for key in remaining}
    others = [key for key, parameter in parameters.items() if parameter is None]
    if others:
        return f"the runs also differ in {', '.join(others)}"
    if len(set(parameters.values())) > 1:
        return f"more than one parameter differs: {', '.join(remaining)}"
    found = _representative(remaining, contexts)
    if found is None:
        return f"the disks of one run have different {remaining[0].rsplit('.', 1)[1]}"
    key, raw = found
    values = [_number(value, key) for value in raw]
    numbers = [v for v in values if v is not None]
    if len(numbers) < len(values):
        return f"{key} is not a number in every run"
    label, unit, divisor = _sweep_label(key, raw)
    return Sweep(key, label, unit, tuple(v / divisor for v in numbers))


def _representative(
    keys: Sequence[str], contexts: Sequence[Mapping[str, Any]]
) -> tuple[str, list[Any]] | None:
    """The key that stands for the parameter, and its value in each run: the only key; for a
    queue knob set on several devices the array's, else `disks[*]` when each run's tuned
    disks agree (None when they do not)."""
    chosen = keys[0] if len(keys) == 1 else next((k for k in keys if k.startswith("array.")), None)
    if chosen is not None:
        return chosen, [context.get(chosen) for context in contexts]
    per_run = [{_freeze(context.get(key)) for key in keys} for context in contexts]
    if any(len(values) > 1 for values in per_run):
        return None
    return f"disks[*].tuning.{keys[0].rsplit('.', 1)[1]}", [c.get(keys[0]) for c in contexts]


def _freeze(value: Any) -> Any:
    return repr(value) if isinstance(value, list | dict) else value


def _number(value: Any, key: str) -> float | None:
    """A parameter's number: numbers as they are, numeric text (imports keep fio's options as
    text), sizes such as `8G` for the spec's sizes, in bytes."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return _bytes(value) if key.startswith("spec.") else None
    return None


def _sweep_label(key: str, values: Sequence[Any]) -> tuple[str, str, float]:
    """What the axis says, its unit, and the divisor from the stored unit to the shown one."""
    if key in _SWEEP_LABELS:
        return _SWEEP_LABELS[key]
    knob = _DEVICE_KNOB.fullmatch(key)
    if knob is None and key.startswith("spec."):  # an import's own option, e.g. fio's bs=4k
        sized = any(isinstance(v, str) and _number(v, "") is None for v in values)
        name = key.removeprefix("spec.")
        return (name, "KiB", 2**10) if sized else (name, "", 1)
    name = key.rsplit(".", 1)[1]
    label, unit = _KNOB_LABELS.get(name, (name, ""))
    if knob is None:  # dirty.* and the like not in _SWEEP_LABELS
        return label, unit, 1
    if knob["disk"] not in (None, "*"):
        label = f"{knob['disk']} {label}"
    elif key.startswith("array."):
        label = f"array {label}"
    return label, unit, 1


def phase_order(phases: Iterable[str]) -> list[str]:
    """bonnie++'s order (PHASE_ORDER), then any other phase as first seen: how every table
    and chart of a comparison lists them."""
    found = list(dict.fromkeys(phases))
    return [p for p in PHASE_ORDER if p in found] + [p for p in found if p not in PHASE_ORDER]

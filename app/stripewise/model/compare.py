"""Runs side by side: figure by figure with the change, and what differed around them.

A change is called better or worse only when Welch's t over the two runs' passes supports it
at `verdict.CONFIDENCE` after Holm's correction for every figure of the comparison
(`model.verdict`); with fewer than `verdict.MIN_PASSES` passes a side it is "can't tell".
`compare_runs` takes 2 to 8 runs.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from stripewise.model.compare_caveats import not_comparable
from stripewise.model.compare_context import ContextDifference, comparable_context, differences
from stripewise.model.compare_labels import telling_apart
from stripewise.model.compare_sweep import Sweep, sweep
from stripewise.model.phase_series import Series as Series
from stripewise.model.phase_series import engine_series as engine_series
from stripewise.model.phase_stop import stopped
from stripewise.model.run import ResultValue
from stripewise.model.run_detail import RunDetail
from stripewise.model.verdict import MIN_PASSES, Evidence, cant_tell, holm, welch
from stripewise.model.vocabulary import PER_PROCESS, PHASES, is_lower_better, is_round_figure

METRICS = (
    "throughput",
    "iops",
    "cpu",
    "process_cpu",
    "latency_p50",
    "latency_p99",
    "efficiency",
    "process_efficiency",
)
PHASE_ORDER = PHASES  # bonnie++'s order, as reports list them
UNKNOWN = "unknown"  # the verdict word when the passes cannot tell (see MetricRow.verdict_text)

# ---------------------------------------------------------------------------------------------
# Two to eight runs: per-metric rows against a baseline, what differed, and a parameter sweep.
# ---------------------------------------------------------------------------------------------

MIN_RUNS, MAX_RUNS = 2, 8
# what gives an imported run its passes, since it cannot be run again (docs/importing.md)
IMPORTED_PASSES = (
    f"an imported run cannot be run again: import the output of bonnie++ -x {MIN_PASSES}, "
    f"whose {MIN_PASSES} lines are one run's passes"
)


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
    # per run: `cancelled` or `failed` when the phase's repetitions did not all end well
    # (model.phase_stop), said where its figure is missing; "" else
    stops: tuple[str, ...] = ()

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

    def stopped(self, index: int) -> str:
        """`cancelled` or `failed`: how the run's phase ended when it did not end well."""
        return self.stops[index] if self.stops else ""

    def missing_text(self, index: int, otherwise: str) -> str:
        """What stands for a figure the run does not have: why (`cancelled`), or `otherwise`."""
        return self.stopped(index) or otherwise

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
        counts = (self.pass_counts[index], self.pass_counts[baseline])
        if min(counts) >= MIN_PASSES:
            return "can't tell: the passes do not vary"
        return cant_tell(*counts)  # this run's passes here, the baseline's there


@dataclass(frozen=True)
class Comparison:
    runs: tuple[RunDetail, ...]
    baseline_index: int
    rows: tuple[MetricRow, ...]
    context: tuple[ContextDifference, ...]
    sweep: Sweep | None
    no_sweep: str = ""  # why the runs form no sweep, in words, when they do not
    # per run, what tells it from the runs of its name ("" where its name alone does):
    # every front end heads a run with its name and this
    told_apart: tuple[str, ...] = ()

    @property
    def baseline(self) -> RunDetail:
        return self.runs[self.baseline_index]

    def run_label(self, index: int, full: bool = False) -> str:
        """`#id name`; runs of one name by `#id` and what tells them apart (`full`: both)."""
        run = self.runs[index].summary
        told = self.told_apart[index] if index < len(self.told_apart) else ""
        if full and told:
            return f"#{run.id} {run.name} ({told})"
        return f"#{run.id} {told or run.name}"


def compare_runs(runs: Sequence[RunDetail], baseline_id: int | None = None) -> Comparison:
    """2 to 8 runs against a baseline: `baseline_id`, else the one run marked as baseline,
    else the first."""
    if not MIN_RUNS <= len(runs) <= MAX_RUNS:
        raise ValueError(f"compare {MIN_RUNS} to {MAX_RUNS} runs, not {len(runs)}")
    chosen = tuple(runs)
    base = _baseline_index(chosen, baseline_id)
    contexts = [comparable_context(run) for run in chosen]
    differing = differences(contexts)
    found = sweep(contexts, differing)
    names = [run.summary.name for run in chosen]
    return Comparison(
        runs=chosen,
        baseline_index=base,
        rows=tuple(_metric_rows(chosen, base, contexts)),
        context=tuple(differing),
        sweep=found if isinstance(found, Sweep) else None,
        no_sweep=found if isinstance(found, str) else "",
        told_apart=tuple(telling_apart(names, differing)),
    )


def count_tested(comparison: Comparison) -> int:
    """How many figure-against-baseline tests the comparison's verdicts were corrected for."""
    return sum(e is not None for row in comparison.rows for e in row.evidence)


def short_of_passes(comparison: Comparison, source: str = "measured") -> dict[int, int]:
    """Runs of `source` (by index) whose too few passes left a figure at "can't tell", with
    their pass count: a measured one run again with MIN_PASSES passes would give a verdict;
    an imported one cannot be run again (IMPORTED_PASSES says what can be done)."""
    short: dict[int, int] = {}
    base = comparison.baseline_index
    for row in comparison.rows:
        for i, verdict in enumerate(row.verdicts):
            if verdict != UNKNOWN or row.caveat(i):  # more passes would not make it comparable
                continue
            for j in (base, i):
                count = row.pass_counts[j]
                if 0 < count < MIN_PASSES and comparison.runs[j].source == source:
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
    indexes = [{(r.phase, r.metric): r for r in compared_results(run)} for run in runs]
    # each run's phases that did not end well: said on every figure of the phase, also one
    # the run filed no row for (a run stored before the phase's MB/s was kept missing)
    errors = [{r.phase: r.errors for r in run.results if r.errors} for run in runs]
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
        stops = tuple(stopped(found.get(key[0], ())) for found in errors)
        rows.append(
            replace(
                row,
                shown_changes_pct=_changes(row.shown_values, base),
                caveats=caveats,
                stops=stops,
            )
        )
    return _judged(rows)


def compared_results(run: RunDetail) -> tuple[ResultValue, ...]:
    """The run's figures as a comparison lines them up: an import's CPU and efficiency under
    their per-process names (`vocabulary.PER_PROCESS`), never in one row with a measured
    run's share of all CPUs."""
    if run.source != "imported":
        return run.results
    return tuple(
        replace(r, metric=own.metric, unit=own.unit)
        if (own := PER_PROCESS.get(r.metric)) is not None
        else r
        for r in run.results
    )


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
        # a steady-state run's rounds are parts of one run, never passes to test: not compared
        figures = (r for r in compared_results(run) if not is_round_figure(r.metric))
        seen.update(dict.fromkeys((r.phase, r.metric) for r in figures))
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


def phase_order(phases: Iterable[str]) -> list[str]:
    """bonnie++'s order (PHASE_ORDER), then any other phase as first seen: how every table
    and chart of a comparison lists them."""
    found = list(dict.fromkeys(phases))
    return [p for p in PHASE_ORDER if p in found] + [p for p in found if p not in PHASE_ORDER]

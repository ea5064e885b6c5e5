"""Two runs side by side: figure by figure with the change, and what differed around them.

A change smaller than either run's own spread over repetitions is reported as noise, not as a
gain or a loss: that is the habit the field notes lacked.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from stripewise.model.run import ResultValue, RunDetail

METRICS = ("throughput", "iops", "cpu", "latency_p50", "latency_p99", "efficiency")
LOWER_IS_BETTER = {"cpu", "latency_p50", "latency_p99"}
PHASE_ORDER = ("seq_write", "rewrite", "seq_read", "random_read", "random_write", "mixed")
# Bookkeeping that differs between any two runs and says nothing about the measurement
_IGNORED_CONTEXT = ("recorder", "fill_pct", "free_bytes", "python", "test_file")
UNMEASURED_NOISE_PCT = 5.0  # without repetitions there is no spread: smaller changes are noise


@dataclass(frozen=True)
class ComparedFigure:
    phase: str
    metric: str
    unit: str
    before: float | None
    after: float | None
    within_noise: bool  # inside the larger min-max spread, or small when no spread is known

    @property
    def change_pct(self) -> float | None:
        if self.before in (None, 0) or self.after is None:
            return None
        assert self.before is not None
        return 100.0 * (self.after - self.before) / self.before

    @property
    def verdict(self) -> str:
        """better / worse / noise / '' (no figure to compare)."""
        change = self.change_pct
        if change is None:
            return ""
        if self.within_noise or abs(change) < 0.5:
            return "noise"
        improved = change < 0 if self.metric in LOWER_IS_BETTER else change > 0
        return "better" if improved else "worse"


def _spread(value: ResultValue) -> float:
    if value.min_value is None or value.max_value is None:
        return 0.0
    return value.max_value - value.min_value


def compare_results(before: RunDetail, after: RunDetail) -> list[ComparedFigure]:
    """Every (phase, metric) either run has, in bonnie++'s phase order."""
    index_a = {(v.phase, v.metric): v for v in before.results}
    index_b = {(v.phase, v.metric): v for v in after.results}
    keys = set(index_a) | set(index_b)
    order = {phase: i for i, phase in enumerate(PHASE_ORDER)}
    figures = []
    for phase, metric in sorted(
        keys,
        key=lambda k: (order.get(k[0], 99), k[0], METRICS.index(k[1]) if k[1] in METRICS else 99),
    ):
        a, b = index_a.get((phase, metric)), index_b.get((phase, metric))
        either = a if a is not None else b
        unit = either.unit if either is not None else ""
        noise = False
        if a is not None and b is not None and a.value is not None and b.value is not None:
            spread = max(_spread(a), _spread(b))
            if spread > 0:
                noise = abs(b.value - a.value) <= spread
            elif a.value:
                noise = abs(b.value - a.value) / abs(a.value) * 100 < UNMEASURED_NOISE_PCT
        figures.append(
            ComparedFigure(
                phase,
                metric,
                unit,
                a.value if a else None,
                b.value if b else None,
                noise,
            )
        )
    return figures


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


def context_changes(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> list[tuple[str, Any, Any]]:
    """Dotted keys whose values differ (tuning, filesystem, spec...), in a stable order."""
    a = {k: v for k, v in flatten(before) if not k.startswith(_IGNORED_CONTEXT)}
    b = {k: v for k, v in flatten(after) if not k.startswith(_IGNORED_CONTEXT)}
    return [
        (key, a.get(key), b.get(key)) for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)
    ]

"""What an experiment found: every point's figure with its interval, the drift of the starting
settings, and the recommendation, judged with the statistics a comparison uses
(`model.verdict`: Welch's t, Holm's correction).

The recommendation is the least aggressive value that cannot be told apart from the best at
95 % after Holm's correction over the points, provided it beats the starting settings after
Holm's correction over the points too; else "no value beats what you have" when every interval
is narrow and the starting settings cannot be told from the best; else "can't tell". A drift of
the starting settings larger than the largest effect found makes it "can't tell" as well, as
does a guard saying a point's figures are not the storage's (reads served from cache); a guard
that only cautions (CPU-bound, a buffered file under twice the RAM) is said with the answer.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from stripewise.model.experiment import Objective, Value, Values, aggressiveness, label
from stripewise.model.guards import Severity, guard
from stripewise.model.verdict import CONFIDENCE, MIN_PASSES, Evidence, holm, t_quantile, welch
from stripewise.model.wording import count_noun


class Verdict(StrEnum):
    BETTER = "better"
    NO_BETTER = "no_better"
    CANT_TELL = "cant_tell"

    @property
    def words(self) -> str:
        """As every view says it (`can't tell`, not the stored `cant_tell`)."""
        return _VERDICT_WORDS[self]


_VERDICT_WORDS = {
    Verdict.BETTER: "better",
    Verdict.NO_BETTER: "no value beats what you have",
    Verdict.CANT_TELL: "can't tell",
}


@dataclass(frozen=True)
class Point:
    """One combination of values with the passes measured there, in run order."""

    values: Values
    passes: tuple[float, ...] = ()
    runs: tuple[int, ...] = ()  # history ids of its runs, when saved
    p99_us: tuple[float, ...] = ()  # the objective phase's p99 latency of each pass, when known
    baseline: bool = False  # the starting settings
    guards: tuple[str, ...] = ()  # the guards (model.guards) its passes tripped, each once

    def with_pass(
        self, figure: float, p99_us: float | None, run: int | None, guards: Sequence[str] = ()
    ) -> Point:
        """This point with one more pass: its figure, p99, run and the guards it tripped."""
        return replace(
            self,
            passes=(*self.passes, figure),
            runs=self.runs if run is None else (*self.runs, run),
            p99_us=self.p99_us if p99_us is None else (*self.p99_us, p99_us),
            guards=tuple(dict.fromkeys((*self.guards, *guards))),
        )

    @property
    def label(self) -> str:
        return label(self.values)

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.passes) if self.passes else None

    @property
    def ci95(self) -> tuple[float, float] | None:
        """The mean's CONFIDENCE interval (Student's t over the passes); None under 2 passes.
        Its low end stops at 0: a rate is never below it (3 noisy passes' t reaches below)."""
        return not_below_zero(interval(self.passes))

    @property
    def half_width_pct(self) -> float | None:
        """The interval's half width against the mean, as Student's t gives it (unclipped:
        the stopping rule judges the spread of the passes, not what is shown)."""
        ci, mean = interval(self.passes), self.mean
        if ci is None or not mean:
            return None
        return 100.0 * (ci[1] - ci[0]) / 2 / abs(mean)

    def narrow(self, target_pct: float) -> bool:
        width = self.half_width_pct
        return len(self.passes) >= MIN_PASSES and width is not None and width <= target_pct

    @property
    def p99_mean(self) -> float | None:
        return statistics.fmean(self.p99_us) if self.p99_us else None

    @property
    def p99_ci95(self) -> tuple[float, float] | None:
        """The mean p99's interval, its low end at 0 at the least (no latency is below)."""
        return not_below_zero(interval(self.p99_us))


def not_below_zero(ci: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if ci is None else (max(0.0, ci[0]), ci[1])


def interval(values: Sequence[float]) -> tuple[float, float] | None:
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    half = t_quantile(0.5 + CONFIDENCE / 2, len(values) - 1) * statistics.stdev(values)
    half /= math.sqrt(len(values))
    return (mean - half, mean + half)


@dataclass(frozen=True)
class Recommendation:
    values: Values  # what to keep: the recommended values, or the starting ones
    verdict: Verdict
    reason: str
    change_pct: float | None = None  # of `values` (better) or of the best point, vs the start
    ci95_pct: tuple[float, float] | None = None
    # the point `change_pct` is of: `values` when better, the best point otherwise (a "can't
    # tell" keeps the starting values, and its change is not theirs)
    change_of: Values | None = None


@dataclass(frozen=True)
class ExperimentResult:
    objective: Objective
    unit: str
    points: tuple[Point, ...]
    drift: Drift | None
    recommendation: Recommendation
    restored: bool = True
    experiment: int | None = None  # its id in the history, when saved
    half_width_pct: float = 5.0
    max_passes: int = 9
    extra: Mapping[str, Any] = field(default_factory=dict)  # a latency target's answer

    @property
    def drift_pct(self) -> float | None:
        return None if self.drift is None else self.drift.pct

    @property
    def baseline(self) -> Point | None:
        return next((p for p in self.points if p.baseline), None)


@dataclass(frozen=True)
class Drift:
    """The starting settings' change from their first measurement to their last, in % of the
    first, with the half-width of its CONFIDENCE interval: the least-squares line through their
    passes in run order (less noisy than the two end passes alone)."""

    pct: float
    half_width_pct: float | None  # None with two passes: a line through two points has no noise

    @property
    def beyond_noise(self) -> bool:
        return self.half_width_pct is not None and abs(self.pct) > self.half_width_pct


def drift(baseline_passes: Sequence[float]) -> Drift | None:
    n = len(baseline_passes)
    if n < 2:
        return None
    xs = range(n)
    x_mean, y_mean = (n - 1) / 2, statistics.fmean(baseline_passes)
    sxx = sum((x - x_mean) ** 2 for x in xs)
    slope = sum((x - x_mean) * (y - y_mean) for x, y in zip(xs, baseline_passes, strict=True)) / sxx
    start = y_mean - slope * x_mean
    if start == 0:
        return None
    scale = 100.0 * (n - 1) / abs(start)
    if n < 3:
        return Drift(slope * scale, None)
    residuals = [y - (start + slope * x) for x, y in zip(xs, baseline_passes, strict=True)]
    slope_se = math.sqrt(sum(r * r for r in residuals) / (n - 2) / sxx)
    return Drift(slope * scale, t_quantile(0.5 + CONFIDENCE / 2, n - 2) * slope_se * scale)


def _order_key(point: Point, baseline: Values) -> tuple[tuple[int, float], ...]:
    starting = dict(baseline)
    return tuple(aggressiveness(n, v, starting.get(n)) for n, v in point.values)


def recommend(
    points: Sequence[Point],
    minimised: bool,
    target_pct: float,
    found_drift: Drift | None,
) -> Recommendation:
    """The answer for `points` (one of them the baseline), as the module's docstring says."""
    base = next((p for p in points if p.baseline), None)
    if base is None:
        raise ValueError("an experiment's points include its starting settings")
    sign = -1.0 if minimised else 1.0
    measured = [p for p in points if len(p.passes) >= MIN_PASSES]
    if base not in measured or len(measured) < 2:
        return Recommendation(base.values, Verdict.CANT_TELL, _too_few(points))
    best = max(measured, key=lambda p: sign * (p.mean or 0.0))
    tied = _tied_with(best, measured)
    against_start = _against(base, [p for p in measured if p is not base])
    beats = {
        p.values: ev
        for p, ev in against_start.items()
        if ev.significant and sign * ev.change_pct > 0
    }
    best_change = against_start.get(best)
    effects = [abs(ev.change_pct) for ev in against_start.values()]
    drift_pct = None if found_drift is None else found_drift.pct
    if (
        found_drift is not None
        and found_drift.beyond_noise
        and abs(found_drift.pct) > max(effects, default=0.0)
    ):
        return Recommendation(
            base.values,
            Verdict.CANT_TELL,
            f"the starting settings drifted {found_drift.pct:+.1f} % between the first and last "
            f"measurement, beyond noise and more than any effect found "
            f"(at most {max(effects, default=0.0):.1f} %)",
            *_change(best_change, best),
        )
    candidates = [p for p in tied if p.values in beats]
    evidence = _evidence_words(measured, drift_pct)
    if candidates:
        pick = min(candidates, key=lambda p: (_order_key(p, base.values), points.index(p)))
        ev = beats[pick.values]
        least = " (the least aggressive of those as good as the best)" if pick is not best else ""
        return Recommendation(
            pick.values,
            Verdict.BETTER,
            f"{pick.label}{least}: {ev.interval_text()} against the starting settings "
            f"({base.label}), after Holm's correction over "
            f"{count_noun(len(against_start), 'point')}; " + evidence,
            ev.change_pct,
            (ev.low_pct, ev.high_pct),
            pick.values,
        )
    narrow = all(p.narrow(target_pct) for p in measured)
    if base in tied and narrow:
        return Recommendation(
            base.values,
            Verdict.NO_BETTER,
            f"no value beats what you have: the best, {best.label}, cannot be told apart "
            f"from the starting settings ({base.label}); " + evidence,
            *_change(best_change, best),
        )
    why = (
        f"the best, {best.label}, differs from the starting settings, but not beyond noise "
        f"after allowing for {len(against_start)} points tested"
        if base not in tied
        else f"not every interval came within \u00b1 {target_pct:g} %"
    )
    return Recommendation(
        base.values, Verdict.CANT_TELL, f"{why}; {evidence}", *_change(best_change, best)
    )


def with_guards(rec: Recommendation, points: Sequence[Point]) -> Recommendation:
    """The answer as the guards leave it: figures a guard says are not the storage's (reads
    served from cache) judge nothing, so "can't tell", keeping the starting values; a guard
    that cautions is said after the reason."""
    tripped: dict[str, list[str]] = {}
    for point in points:
        for name in point.guards:
            tripped.setdefault(name, []).append(point.label)
    if not tripped:
        return rec
    said = "; ".join(f"{guard(n).title} at {', '.join(at)}" for n, at in tripped.items())
    invalid = [guard(n) for n in tripped if guard(n).severity is Severity.INVALID]
    if not invalid:
        return replace(rec, reason=f"{rec.reason}; caution, guards tripped: {said}")
    start = next((p.values for p in points if p.baseline), rec.values)
    return replace(
        rec,
        values=start,
        verdict=Verdict.CANT_TELL,
        reason=f"can't tell: the figures are not the storage's alone ({said}): "
        f"{invalid[0].meaning}",
    )


def _too_few(points: Sequence[Point]) -> str:
    fewest = min((len(p.passes) for p in points), default=0)
    return f"can't tell: a point has {fewest} passes, a verdict needs {MIN_PASSES}"


def _tied_with(best: Point, measured: Sequence[Point]) -> list[Point]:
    """The points that cannot be told apart from the best (Welch, Holm over the others)."""
    others = [p for p in measured if p is not best]
    tested = _against(best, others)
    return [best] + [p for p in others if p not in tested or not tested[p].significant]


def _against(reference: Point, others: Sequence[Point]) -> dict[Point, Evidence]:
    """Each point's change against `reference`, Holm-adjusted over the points tested."""
    found = {p: ev for p in others if (ev := welch(reference.passes, p.passes)) is not None}
    adjusted = holm(list(found.values()))
    return dict(zip(found, adjusted, strict=True))


def _change(
    ev: Evidence | None, point: Point
) -> tuple[float | None, tuple[float, float] | None, Values | None]:
    if ev is None:
        return None, None, None
    return ev.change_pct, (ev.low_pct, ev.high_pct), point.values


def _evidence_words(measured: Sequence[Point], drift_pct: float | None) -> str:
    passes = sum(len(p.passes) for p in measured)
    drift_words = "drift not measured" if drift_pct is None else f"drift {drift_pct:+.1f} %"
    return f"evidence: {len(measured)} points, {passes} passes, {drift_words}"


def values_key(values: Values) -> tuple[tuple[str, str], ...]:
    """A point's values as text, for maps keyed by point across a JSON round trip."""
    return tuple((name, str(value)) for name, value in values)


def same_values(a: Values, b: Mapping[str, Value]) -> bool:
    return values_key(a) == values_key(tuple(b.items()))

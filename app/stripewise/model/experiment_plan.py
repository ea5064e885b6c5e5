"""The order an experiment visits its points in, sans I/O: a driver (the CLI, the GUI's
runner) asks `next_visit()`, runs that point's benchmark, and tells `record()` what it measured.

A sweep (`SweepPlan`) runs in rounds. The first starts with the starting settings, then every
other point in a random order; the next rounds visit every point, the starting settings among
them, in a new random order, until each has MIN_PASSES passes (interleaved and randomised, so
slow drift of a busy machine spreads over all points instead of favouring one). Then, while
any point's interval is wider than the asked half-width, every point gets another pass each
round, up to the cap: stopping each point on its own, as soon as its interval happens to look
narrow, would favour points that looked good by chance (in simulation it called "better" in
6 % of experiments without an effect, against under 3 % when they go on together). The last
visit measures the starting settings again: their drift from the first to the last is reported
(`experiment_result.drift`).

A latency target (`LatencySearch`) cannot interleave: each probe decides the next. It
bisects the queue depth (or streams) between LO and HI for the largest whose p99 latency's
interval lies under the target, each probe given passes until its p99 interval is narrow,
is clearly on one side of the target, or reaches the cap.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from stripewise.model.experiment import Design, Values, label, workload_of
from stripewise.model.experiment_result import (
    ExperimentResult,
    Point,
    Recommendation,
    Verdict,
    drift,
    interval,
    recommend,
    with_guards,
)
from stripewise.model.units import interval_text
from stripewise.model.verdict import MIN_PASSES, welch
from stripewise.model.wording import count_noun


class Plan(Protocol):
    design: Design
    points: list[Point]
    visits: int  # recorded or failed so far

    def next_visit(self) -> Values | None: ...
    def record(
        self,
        values: Values,
        figure: float,
        p99_us: float | None,
        run: int | None,
        guards: Sequence[str] = (),
    ) -> None: ...
    def fail(self, values: Values, message: str) -> None: ...
    def planned_visits(self) -> tuple[int, int]: ...
    def result(self, *, restored: bool, experiment: int | None = None) -> ExperimentResult: ...


class SweepPlan:
    def __init__(self, design: Design, baseline: Values, rng: random.Random) -> None:
        self.design = design
        self.rng = rng
        grid = design.points()
        self.points = [Point(values, baseline=values == baseline) for values in grid]
        if not any(p.baseline for p in self.points):
            self.points.insert(0, Point(baseline, baseline=True))
        self.failed: dict[Values, str] = {}
        self.visits = 0
        others = [p.values for p in self.points if not p.baseline]
        self._queue: list[Values] = [baseline, *self._shuffled(others)]
        self._rounds = 1
        self._closed = False  # the last measurement of the starting settings is queued

    def _shuffled(self, values: list[Values]) -> list[Values]:
        self.rng.shuffle(values)
        return values

    def _point(self, values: Values) -> Point:
        return next(p for p in self.points if p.values == values)

    @property
    def baseline(self) -> Point:
        return next(p for p in self.points if p.baseline)

    def _live(self) -> list[Point]:
        return [p for p in self.points if p.values not in self.failed]

    def next_visit(self) -> Values | None:
        while not self._queue:
            if not self._next_round():
                return None
        return self._queue.pop(0)

    def _next_round(self) -> bool:
        if self.baseline.values in self.failed:
            return False
        live = self._live()
        if self._rounds < MIN_PASSES:
            wanted = [p.values for p in live]
        else:
            target, cap = self.design.half_width_pct, self.design.max_passes
            wide = any(not p.narrow(target) for p in live)
            wanted = [p.values for p in live if wide and len(p.passes) < cap]
        if wanted:
            self._rounds += 1
            self._queue = self._shuffled(wanted)
            return True
        if not self._closed and self.baseline.values not in self.failed:
            self._closed = True
            self._queue = [self.baseline.values]
            return True
        return False

    def record(
        self,
        values: Values,
        figure: float,
        p99_us: float | None,
        run: int | None,
        guards: Sequence[str] = (),
    ) -> None:
        point = self._point(values)
        self.points[self.points.index(point)] = point.with_pass(figure, p99_us, run, guards)
        self.visits += 1

    def fail(self, values: Values, message: str) -> None:
        """A point whose benchmark failed is not visited again; the rest go on, unless it is
        the starting settings: with nothing to judge against, the experiment ends there."""
        self.failed[values] = message
        self._queue = (
            [] if values == self.baseline.values else [v for v in self._queue if v != values]
        )
        self.visits += 1

    def planned_visits(self) -> tuple[int, int]:
        """(at least, at most) visits in all, for progress and an ETA."""
        n = len(self._live())
        return n * MIN_PASSES + 1, n * self.design.max_passes + 1

    def result(self, *, restored: bool, experiment: int | None = None) -> ExperimentResult:
        objective = self.design.objective
        found_drift = drift(self.baseline.passes)
        if self.baseline.values in self.failed:  # nothing to judge the points against
            recommendation = Recommendation(
                self.baseline.values, Verdict.CANT_TELL, "can't tell: the starting settings failed"
            )
        else:
            recommendation = recommend(
                self._live(), objective.metric.minimised, self.design.half_width_pct, found_drift
            )
            recommendation = with_guards(recommendation, self._live())
        if self.failed:
            failed = "; ".join(f"{label(v)} failed: {m}" for v, m in self.failed.items())
            recommendation = replace(recommendation, reason=f"{recommendation.reason}; {failed}")
        return ExperimentResult(
            objective,
            objective.metric.unit,
            tuple(self.points),
            found_drift,
            recommendation,
            restored=restored,
            experiment=experiment,
            half_width_pct=self.design.half_width_pct,
            max_passes=self.design.max_passes,
            extra={"failed": {label(v): m for v, m in self.failed.items()}},
        )


class LatencySearch:
    """The largest depth in LO..HI whose p99 latency stays under the target (assumed to grow
    with depth, as queueing makes it), by bisection; then that depth against the starting
    settings (the benchmark's own depth), so that "better" means what it means for a sweep."""

    def __init__(self, design: Design, name: str) -> None:
        assert design.search is not None and design.latency_target_us is not None
        self.design = design
        self.name = name
        self.target_us = design.latency_target_us
        self.lo, self.hi = design.search
        self.start = self._values(workload_of(design.spec, name, design.objective.phase))
        self.fits: int | None = None  # the largest depth known to fit
        self.misses: int | None = None  # the smallest depth known not to
        self.points: list[Point] = []
        self.probes: list[int] = []  # the depths the bisection tried, in order
        self.failed: dict[Values, str] = {}
        self.visits = 0
        self._probe: int | None = self.lo

    def _values(self, depth: int) -> Values:
        return ((self.name, depth),)

    def _point(self, values: Values) -> Point:
        found = next((p for p in self.points if p.values == values), None)
        return found or Point(values, baseline=values == self.start)

    def next_visit(self) -> Values | None:
        if self._probe is not None:
            return self._values(self._probe)
        return self._comparison_visit()

    def _comparison_visit(self) -> Values | None:
        """After the search, the starting settings get passes as a sweep's point does
        (MIN_PASSES, then more while their interval is wide, up to the cap): the verdict
        compares them with the answer. The answer keeps the passes that placed its p99."""
        if self.fits is None or self._values(self.fits) == self.start:
            return None
        start = self._point(self.start)
        if self.start in self.failed or self._values(self.fits) in self.failed:
            return None
        wide = not start.narrow(self.design.half_width_pct)
        if len(start.passes) < MIN_PASSES or (wide and len(start.passes) < self.design.max_passes):
            return self.start
        return None

    def record(
        self,
        values: Values,
        figure: float,
        p99_us: float | None,
        run: int | None,
        guards: Sequence[str] = (),
    ) -> None:
        depth = int(values[0][1])
        found = self._point(values)
        updated = found.with_pass(figure, p99_us, run, guards)
        if found in self.points:
            self.points[self.points.index(found)] = updated
        else:
            self.points.append(updated)
        self.visits += 1
        if depth != self._probe:  # a pass of the comparison after the search
            return
        if depth not in self.probes:
            self.probes.append(depth)
        side = self._side(updated)
        if side is not None:
            self._decide(depth, side)

    def _side(self, point: Point) -> bool | None:
        """True: fits under the target; False: does not; None: needs another pass."""
        if len(point.passes) < MIN_PASSES or not point.p99_us:
            return None if len(point.passes) < MIN_PASSES else False
        p99 = point.p99_ci95
        if p99 is not None and p99[1] < self.target_us:
            return True
        if p99 is not None and p99[0] > self.target_us:
            return False
        if len(point.passes) >= self.design.max_passes:
            return False  # not shown to fit: a depth is kept only when its interval is under
        return None

    def _decide(self, depth: int, fits: bool) -> None:
        if fits:
            self.fits = depth
        else:
            self.misses = depth
        if not fits and depth == self.lo:
            self._probe = None  # even the smallest does not fit
        elif fits and depth == self.hi:
            self._probe = None
        elif self.fits is not None and self.misses is None:
            self._probe = self.hi
        elif self.fits is not None and self.misses is not None and self.misses - self.fits > 1:
            self._probe = (self.fits + self.misses) // 2
        else:
            self._probe = None

    def fail(self, values: Values, message: str) -> None:
        self.failed[values] = message
        self.visits += 1
        depth = int(values[0][1])
        if depth == self._probe:
            if depth not in self.probes:
                self.probes.append(depth)
            self._decide(depth, False)

    def planned_visits(self) -> tuple[int, int]:
        """(at least, at most) visits in all. The least: this probe's MIN_PASSES (the search
        may end there: even LO misses), or the comparison's; the most: every probe (LO, HI,
        then halving the gap: ceil(log2(HI - LO)) more) and the starting settings at the cap."""
        probe = self.next_visit()
        still = 0 if probe is None else max(0, MIN_PASSES - len(self._point(probe).passes))
        steps = 2 + (self.hi - self.lo - 1).bit_length()
        at_least = self.visits + still
        return at_least, max(at_least, (steps + 1) * self.design.max_passes)

    def result(self, *, restored: bool, experiment: int | None = None) -> ExperimentResult:
        objective = self.design.objective
        answer = None if self.fits is None else self._point(self._values(self.fits))
        if answer is None or not answer.passes:
            recommendation = self._none_fits()
        else:
            recommendation = self._judged(answer)
        recommendation = with_guards(recommendation, self.points)
        if self.failed:
            failed = "; ".join(f"{label(v)} failed: {m}" for v, m in self.failed.items())
            recommendation = replace(recommendation, reason=f"{recommendation.reason}; {failed}")
        if answer is not None and not answer.passes:
            answer = None
        ci = None if answer is None else answer.ci95
        p99_ci = None if answer is None else answer.p99_ci95
        extra = {
            "latency_target": {
                "target_us": self.target_us,
                "parameter": self.name,
                "value": None if answer is None else self.fits,
                "iops": None if answer is None else answer.mean,
                "iops_ci95": None if ci is None else list(ci),
                "p99_us": None if answer is None else answer.p99_mean,
                "p99_ci95": None if p99_ci is None else list(p99_ci),
                "probes": list(self.probes),
            },
            "failed": {label(v): m for v, m in self.failed.items()},
        }
        return ExperimentResult(
            objective,
            objective.metric.unit,
            tuple(self.points),
            None,
            recommendation,
            restored=restored,
            experiment=experiment,
            half_width_pct=self.design.half_width_pct,
            max_passes=self.design.max_passes,
            extra=extra,
        )

    @property
    def _target_text(self) -> str:
        return f"{self.target_us:,g} \u00b5s"

    def _none_fits(self) -> Recommendation:
        """Not even LO keeps under the target: no value meets it, the starting settings stay."""
        lowest = next((p for p in self.points if p.values == self._values(self.lo)), None)
        shown = "" if lowest is None or lowest.p99_mean is None else f" ({_p99_text(lowest)})"
        return Recommendation(
            self.start,
            Verdict.NO_BETTER,
            f"no value meets the target: no {self.name} from {self.lo} to {self.hi} keeps p99 "
            f"latency under {self._target_text}{shown}; the starting settings "
            f"({label(self.start)}) are kept; {self._evidence()}",
        )

    def _judged(self, answer: Point) -> Recommendation:
        """The deepest that fits, judged against the starting settings as a sweep judges its
        points (Welch, Holm, the half-width): "better" only when its figure beats theirs."""
        unit = self.design.objective.metric.unit
        ci = answer.ci95
        spread = f" ({interval_text(*ci, 0)}, 95 %)" if ci else ""
        deepest = "the deepest queue" if self.name == "queue_depth" else f"the most {self.name}"
        bound = "the top of the search" if self.fits == self.hi else f"{self.misses} does not"
        found = (
            f"{self.name} {self.fits}: {deepest} whose p99 stays under {self._target_text}: "
            f"{answer.mean or 0:,.0f} {unit}{spread}, {_p99_text(answer)}; {bound}"
        )
        if answer.values == self.start:
            return Recommendation(
                self.start,
                Verdict.NO_BETTER,
                f"{found}; it is the starting settings: no value beats what you have; "
                + self._evidence(),
            )
        start = self._point(self.start)
        rec = recommend(
            [start, answer],
            self.design.objective.metric.minimised,
            self.design.half_width_pct,
            None,
        )
        versus = f"against the starting settings ({label(self.start)})"
        # the answer's own change, even where the starting settings measured best
        if (change := welch(start.passes, answer.passes)) is not None:
            versus = f"{change.interval_text()} {unit} {versus}"
        if rec.verdict is Verdict.BETTER:
            said = f"better: {versus}"
        elif rec.verdict is Verdict.NO_BETTER:
            said = f"no value beats what you have: {versus}"
        elif change is not None and all(
            p.narrow(self.design.half_width_pct) for p in (start, answer)
        ):
            said = f"can't tell: {versus}, not beyond noise"
        else:
            width = self.design.half_width_pct
            said = f"can't tell: {versus}; not every interval came within \u00b1 {width:g} %"
        return replace(rec, reason=f"{found}; {said}; {self._evidence()}")

    def _evidence(self) -> str:
        probes = count_noun(len(self.probes), "probe")
        return f"{probes}, {count_noun(self.visits, 'pass')}"


def _p99_text(point: Point) -> str:
    p99 = point.p99_ci95
    mean = f"p99 {point.p99_mean or 0:,.0f} \u00b5s"
    return mean + (f" ({interval_text(*p99, 0)} \u00b5s, 95 %)" if p99 else "")


__all__ = ["LatencySearch", "Plan", "SweepPlan", "interval"]

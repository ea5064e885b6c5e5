"""The scaling test of a set of disks, without I/O: its plan of steps and what its passes say.

Each disk is read alone, then the first 2, 4 ... N of them at once (N always last). The first
disk alone IS the one-disk step: it is measured once and reported in both places. A step is
visited `repeat` times, every step once per round, the rounds alternating forward and back
(ABBA) so that a drift over the run (a warming disk, a neighbour's load) weighs on every step
alike instead of on the last ones.

The analysis: each step's aggregate MB/s as a mean with its 95 % interval; the ceiling, the
largest step mean, reached at the smallest step that cannot be told apart from it (Welch's t
over the passes, Holm over the steps: model/verdict.py); none when the last step is still
clearly above the one before it AND reads about the sum of its disks alone (the link was never
filled: without the second condition, 8 disks on a link that 5 fill would "still grow" from
the 4-disk step and no ceiling would ever be found with 1, 2, 4, 8). A difference under MATERIAL_PCT
counts as none however sure the test is of it; without the passes to tell (one pass each, or
passes that never differ, as RAM does), a step within CLOSE_PCT of the best counts as the
best, and growth at N means more than CLOSE_PCT. An outlier is a disk whose mean
alone is more than OUTLIER_PCT below the median of its identical peers (same model and size
where known; every other disk of the set otherwise).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from stripewise.model.experiment_result import interval
from stripewise.model.verdict import CONFIDENCE, holm, welch

OUTLIER_PCT = 15.0  # the issue's: a disk this far below its peers' median is named
CLOSE_PCT = 5.0  # without evidence, steps within this of each other count as the same
# with evidence, a difference this small is no difference however sure: a link's ceiling
# wobbles by less, and 0.3 % more with 4 disks than with 2 is not "still growing"
MATERIAL_PCT = 2.0
# the last step short of its disks' own sum by more than this: a shared path caps it, even
# when it is still above the step before (8 disks on a link that 5 fill: 1, 2, 4, 8 grows)
SHORT_PCT = 10.0
# the best step's 95 % interval wider than this (half-width, % of its mean): the passes vary
# too much to say where the link tops out; more passes or a longer read (--size) narrow it
SETTLED_PCT = 10.0
# what the refusal advises, in the CLI's options (the dialog names its own fields instead)
MORE_PASSES_ADVICE = "read more per pass (--size) or repeat more (--repeat)"
MAX_DISKS = 64
MAX_REPEAT = 20


class ScalingError(ValueError):
    """A plan that cannot be made (no disks, a disk twice); the message says which."""


@dataclass(frozen=True)
class Step:
    """Disks read at once; `alone` for a disk's own step (the first one's is also 1 disk)."""

    disks: tuple[str, ...]
    alone: bool


@dataclass(frozen=True)
class Visit:
    """One pass of one step, in the order the run takes them (`number` from 1)."""

    number: int
    step: int  # index into the plan's steps
    repetition: int  # the step's pass, from 1


@dataclass(frozen=True)
class ScalingPlan:
    disks: tuple[str, ...]
    steps: tuple[Step, ...]
    visits: tuple[Visit, ...]

    @property
    def together(self) -> tuple[int, ...]:
        """The steps of 1, 2, 4 ... N disks at once, as step indexes (the first disk's own
        step stands for one disk)."""
        return (0, *(i for i, step in enumerate(self.steps) if not step.alone))


def together_counts(count: int) -> tuple[int, ...]:
    """1, 2, 4 ... and `count` last: 1, 2, 4, 5 for five disks."""
    counts, size = [], 1
    while size < count:
        counts.append(size)
        size *= 2
    return (*counts, count)


def plan_scaling(disks: Sequence[str], repeat: int) -> ScalingPlan:
    if not disks:
        raise ScalingError("name at least one disk")
    if len(set(disks)) != len(disks):
        twice = next(d for d in disks if list(disks).count(d) > 1)
        raise ScalingError(f"{twice} is named twice")
    if len(disks) > MAX_DISKS:
        raise ScalingError(f"at most {MAX_DISKS} disks at once")
    if not 1 <= repeat <= MAX_REPEAT:
        raise ScalingError(f"repeat: 1 to {MAX_REPEAT} passes per step")
    names = tuple(disks)
    steps = [Step((name,), alone=True) for name in names]
    steps += [Step(names[:count], alone=False) for count in together_counts(len(names))[1:]]
    visits: list[Visit] = []
    order = list(range(len(steps)))
    for repetition in range(1, repeat + 1):
        for step in order if repetition % 2 else reversed(order):
            visits.append(Visit(len(visits) + 1, step, repetition))
    return ScalingPlan(names, tuple(steps), tuple(visits))


# --- the analysis ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """A mean over passes with its 95 % interval (None with fewer than two passes)."""

    mean: float
    ci95: tuple[float, float] | None
    passes: tuple[float, ...]


def figure(passes: Sequence[float]) -> Figure:
    return Figure(statistics.fmean(passes), interval(passes), tuple(passes))


@dataclass(frozen=True)
class StepFigure:
    disks: tuple[str, ...]
    mb_s: Figure


@dataclass(frozen=True)
class Ceiling:
    mb_s: float  # the largest step mean
    disks: int  # the smallest step that cannot be told apart from it


@dataclass(frozen=True)
class Outlier:
    disk: str
    below_pct: float  # under its peers' median alone
    peers: tuple[str, ...]
    slot: str | None = None


@dataclass(frozen=True)
class DiskIdentity:
    """What makes disks identical peers, and where one sits (any may be unknown)."""

    model: str | None = None
    size_bytes: int | None = None
    slot: str | None = None

    @property
    def key(self) -> tuple[str, int] | None:
        if self.model is None or self.size_bytes is None:
            return None
        return self.model, self.size_bytes


@dataclass(frozen=True)
class ScalingAnalysis:
    steps: tuple[StepFigure, ...]  # 1, 2, 4 ... N disks at once
    alone: Mapping[str, Figure]
    ceiling: Ceiling | None
    would_need_mb_s: float  # N x the median disk alone
    outliers: tuple[Outlier, ...] = field(default=())
    widest_pct: float | None = None  # the best step's interval, half-width in % of its mean

    @property
    def widest_pct_shown(self) -> float | None:
        """`widest_pct` to one decimal, never at or under SETTLED_PCT when over it: a refused
        10.04 reads 10.1, not "10.0", which the rule would have taken."""
        if self.widest_pct is None:
            return None
        shown = round(self.widest_pct, 1)
        if self.widest_pct > SETTLED_PCT:
            return max(shown, SETTLED_PCT + 0.1)
        return shown

    @property
    def one_pass(self) -> bool:
        """The best step was read once: no interval, so CLOSE_PCT judges instead of noise."""
        return len(_best(self.steps).passes) < 2

    @property
    def settled(self) -> bool:
        """Nothing in the passes stops placing a ceiling: the best step measured narrowly
        enough (SETTLED_PCT), or read once (no interval to judge: the one-pass rule)."""
        return _settled(self.widest_pct, self.one_pass)

    def sentence(self, name: str) -> str:
        """ "hba0 tops out at 1,640 MB/s with 5 disks; 8 disks would need 2,560"."""
        count = len(self.steps[-1].disks)
        need = f"{count} disks would need {self.would_need_mb_s:,.0f}"
        if count == 1:
            return f"{name}: one disk, {self.steps[0].mb_s.mean:,.0f} MB/s: nothing to scale"
        if not self.settled:
            shown = self.widest_pct_shown
            widest = "" if shown is None else f" (the best step is \u00b1 {shown:.1f} %)"
            return (
                f"{name}: can't place a ceiling, the passes vary too much{widest}: "
                f"{MORE_PASSES_ADVICE}"
            )
        # the answer of one pass has no interval behind it: it says so
        once = "one pass per step: no interval" if self.one_pass else ""
        if self.ceiling is None:
            top = f"{self.steps[-1].mb_s.mean:,.0f} MB/s" + (f", {once}" if once else "")
            return f"{name} still grew at {count} disks ({top}): no ceiling; {need}"
        noun = "disk" if self.ceiling.disks == 1 else "disks"
        return (
            f"{name} tops out at {self.ceiling.mb_s:,.0f} MB/s with {self.ceiling.disks} "
            f"{noun}{f' ({once})' if once else ''}; {need}"
        )


def analyse(
    plan: ScalingPlan,
    passes: Mapping[int, Sequence[float]],
    identities: Mapping[str, DiskIdentity] | None = None,
) -> ScalingAnalysis:
    """`passes`: each step's aggregate MB/s per pass (step index -> figures); every step
    needs one at least. `identities` tell peers apart and name slots."""
    missing = [i for i in range(len(plan.steps)) if not passes.get(i)]
    if missing:
        raise ScalingError(f"no pass of step {missing[0] + 1} was measured")
    steps = tuple(
        StepFigure(plan.steps[i].disks if i else plan.disks[:1], figure(passes[i]))
        for i in plan.together
    )
    alone = {plan.disks[i]: figure(passes[i]) for i in range(len(plan.disks))}
    median_alone = statistics.median(f.mean for f in alone.values())
    best = _best(steps)
    widest = _widest([best])
    settled = _settled(widest, len(best.passes) < 2)
    return ScalingAnalysis(
        steps,
        alone,
        _ceiling(steps, alone) if settled else None,
        len(plan.disks) * median_alone,
        _outliers(alone, identities or {}),
        widest,
    )


def _best(steps: Sequence[StepFigure]) -> Figure:
    return max((s.mb_s for s in steps), key=lambda f: f.mean)


def _settled(widest_pct: float | None, one_pass: bool) -> bool:
    if widest_pct is None:
        return one_pass  # one pass: no interval to refuse it, CLOSE_PCT judges the steps
    return widest_pct <= SETTLED_PCT


def _widest(figures: Sequence[Figure]) -> float | None:
    """The widest half-width among the figures, in % of each one's mean; None when any has
    no interval (a single pass) or no mean."""
    widths = []
    for found in figures:
        if found.ci95 is None or found.mean <= 0:
            return None
        widths.append(100.0 * (found.ci95[1] - found.ci95[0]) / 2 / found.mean)
    return max(widths, default=None)


def _same(best: Figure, other: Figure, evidence_p: float | None) -> bool:
    """`other` reaches `best`: within MATERIAL_PCT, or not told apart by its passes measured
    narrowly (within SETTLED_PCT), or, without evidence, within CLOSE_PCT."""
    if other.mean >= best.mean * (1 - MATERIAL_PCT / 100):
        return True
    if evidence_p is not None:
        # not told apart only because its own passes vary too much: that is no sign it
        # reached the best (1 disk at 8,000 MB/s, 3,200..12,800, beside 4 at 11,400)
        width = _widest([other])
        return evidence_p > 1.0 - CONFIDENCE and (width is None or width <= SETTLED_PCT)
    return other.mean >= best.mean * (1 - CLOSE_PCT / 100)


def _still_growing(steps: Sequence[StepFigure], alone: Mapping[str, Figure]) -> bool:
    """The last step is clearly above the one before it, and its disks together read about
    what they read alone (within SHORT_PCT): the disks set the pace, not a shared link."""
    last, before = steps[-1].mb_s, steps[-2].mb_s
    growth = welch(before.passes, last.passes)
    if growth is not None:
        grew = growth.significant and growth.change_pct > MATERIAL_PCT
    else:
        grew = last.mean > before.mean * (1 + CLOSE_PCT / 100)
    their_sum = sum(alone[disk].mean for disk in steps[-1].disks)
    return grew and last.mean >= their_sum * (1 - SHORT_PCT / 100)


def _ceiling(steps: Sequence[StepFigure], alone: Mapping[str, Figure]) -> Ceiling | None:
    if len(steps) < 2 or _still_growing(steps, alone):
        return None
    best_index = max(range(len(steps)), key=lambda i: steps[i].mb_s.mean)
    best = steps[best_index].mb_s
    others = [i for i in range(len(steps)) if i != best_index]
    tested = [welch(best.passes, steps[i].mb_s.passes) for i in others]
    told = [e for e in tested if e is not None]
    adjusted = iter(holm(told)) if told else iter(())
    p_of: dict[int, float | None] = {}
    for i, evidence in zip(others, tested, strict=True):
        p_of[i] = next(adjusted).p_adjusted if evidence is not None else None
    reached = min((i for i in others if _same(best, steps[i].mb_s, p_of[i])), default=best_index)
    reached = min(reached, best_index)
    return Ceiling(best.mean, len(steps[reached].disks))


def _outliers(
    alone: Mapping[str, Figure], identities: Mapping[str, DiskIdentity]
) -> tuple[Outlier, ...]:
    found = []
    for disk, own in alone.items():
        key = identities.get(disk, DiskIdentity()).key
        peers = tuple(
            other
            for other in alone
            if other != disk and (key is None or identities.get(other, DiskIdentity()).key == key)
        )
        if key is not None and not peers:  # no identical peer: the whole set stands in
            peers = tuple(other for other in alone if other != disk)
        if not peers:
            continue
        median = statistics.median(alone[p].mean for p in peers)
        if median <= 0:
            continue
        below = 100.0 * (median - own.mean) / median
        pooled = [v for p in peers for v in alone[p].passes]
        beyond = welch(pooled, own.passes)  # below the peers by more than their noise
        if below > OUTLIER_PCT and beyond is not None and beyond.significant:
            slot = identities.get(disk, DiskIdentity()).slot
            found.append(Outlier(disk, round(below, 1), peers, slot))
    return tuple(found)

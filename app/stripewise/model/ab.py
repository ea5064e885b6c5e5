"""A/B: the same benchmark with a preset applied and without, alternated, judged by the passes.

Rounds alternate the order (with, without, then without, with...) so slow drift (a warming
disk, a filling filesystem) does not favour one side. Each side's passes are tested as a
comparison's are (`model.verdict`: Welch's t, Holm over the phases). Like the Phoronix Test
Suite growing its run count when the deviation is high, the runner adds rounds until every
phase's interval is within `TARGET_HALF_WIDTH_PCT` or a cap of rounds is reached.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stripewise.model.verdict import CONFIDENCE, MIN_PASSES, Evidence, cant_tell, holm, welch
from stripewise.model.wording import count_noun

TARGET_HALF_WIDTH_PCT = 5.0  # narrow enough: the change is known to within ± 5 %
MIN_ROUNDS = MIN_PASSES  # one pass a side per round, at least; a verdict needs MIN_PASSES
ROUND_CAP = 9  # three times the first rounds: when noise is this wide, more rarely helps

PhasePasses = Mapping[str, Sequence[float]]  # one benchmark: phase -> MB/s of each pass


def round_order(round_index: int) -> tuple[bool, bool]:
    """True = with the preset: with/without in even rounds, without/with in odd ones."""
    return (True, False) if round_index % 2 == 0 else (False, True)


def order(rounds: int) -> list[bool]:
    """The sides of `rounds` rounds, in the order they run."""
    return [side for index in range(rounds) for side in round_order(index)]


def _passes(with_preset: int, without: int) -> str:
    """ "3 passes each", "1 pass each", or "3 and 2 passes" (the two together are plural)."""
    if with_preset == without:
        return f"{count_noun(with_preset, 'pass')} each"
    return f"{with_preset} and {without} passes"


@dataclass(frozen=True)
class ABFigure:
    phase: str
    with_preset: tuple[float, ...]  # MB/s of every pass with the preset, in run order
    without: tuple[float, ...]
    evidence: Evidence | None = None  # without -> with, Holm-adjusted over the A/B's phases

    @property
    def median_with(self) -> float:
        return statistics.median(self.with_preset)

    @property
    def median_without(self) -> float:
        return statistics.median(self.without)

    @property
    def change_pct(self) -> float:
        """The tested change of the means; the medians' when nothing could be tested."""
        if self.evidence is not None:
            return self.evidence.change_pct
        base = self.median_without
        return 100.0 * (self.median_with - base) / base if base else 0.0

    @property
    def verdict(self) -> str:
        if self.evidence is None:
            with_preset, without = len(self.with_preset), len(self.without)
            return cant_tell(with_preset, without, here="with the preset", there="without")
        if not self.evidence.significant:
            return "within noise"
        faster = self.evidence.change_pct > 0
        return "faster with the preset" if faster else "slower with the preset"

    def narrow(self, target_pct: float = TARGET_HALF_WIDTH_PCT) -> bool:
        """Its interval is within ± target_pct: more rounds would add little."""
        return self.evidence is not None and self.evidence.half_width_pct <= target_pct

    def sentence(self) -> str:
        ranges = (
            f"{min(self.with_preset):,.0f}-{max(self.with_preset):,.0f} MB/s with, "
            f"{min(self.without):,.0f}-{max(self.without):,.0f} MB/s without, "
            f"{_passes(len(self.with_preset), len(self.without))}"
        )
        if self.evidence is None:
            return f"{self.phase}: {self.change_pct:+.1f} %, {self.verdict} ({ranges})"
        said = f"{self.phase}: {self.evidence.interval_text()}, {self.verdict} ({ranges})"
        if self.verdict == "within noise":
            return f"{said}; this preset makes no difference you can rely on here"
        return said


def ab_figures(
    with_runs: Sequence[PhasePasses], without_runs: Sequence[PhasePasses]
) -> list[ABFigure]:
    """Per phase both sides measured, every pass of every run pooled by side, each tested
    (Welch's t, without -> with) and Holm-adjusted over the phases."""
    first = with_runs[0] if with_runs else {}
    phases = [p for p in first if without_runs and all(p in r for r in without_runs)]
    pooled = [
        (
            phase,
            tuple(v for run in with_runs for v in run.get(phase, ())),
            tuple(v for run in without_runs for v in run.get(phase, ())),
        )
        for phase in phases
    ]
    tested = {
        phase: found
        for phase, with_preset, without in pooled
        if min(len(with_preset), len(without)) >= MIN_PASSES
        and (found := welch(without, with_preset, CONFIDENCE)) is not None
    }
    adjusted = dict(zip(tested, holm(list(tested.values())), strict=True))
    return [
        ABFigure(phase, with_preset, without, adjusted.get(phase))
        for phase, with_preset, without in pooled
    ]


@dataclass(frozen=True)
class ABOutcome:
    """What an A/B found, and how many rounds it took to find it."""

    figures: tuple[ABFigure, ...]
    rounds: int
    round_cap: int
    target_pct: float = TARGET_HALF_WIDTH_PCT

    @property
    def narrow(self) -> bool:
        return all_narrow(self.figures, self.target_pct)

    def summary(self, label: str) -> str:
        """`A/B of X: 3 rounds (6 benchmarks); every interval within ± 5 %:`"""
        benchmarks = count_noun(2 * self.rounds, "benchmark")
        ran = f"A/B of {label}: {count_noun(self.rounds, 'round')} ({benchmarks})"
        target = f"\u00b1 {self.target_pct:g} %"
        if self.narrow:
            return f"{ran}; every interval within {target}:"
        widest = max(
            (f.evidence.half_width_pct for f in self.figures if f.evidence is not None),
            default=None,
        )
        still = f" (the widest is \u00b1 {widest:.1f} %)" if widest is not None else ""
        return f"{ran}, the cap; not every interval came within {target}{still}:"


def all_narrow(figures: Sequence[ABFigure], target_pct: float = TARGET_HALF_WIDTH_PCT) -> bool:
    return bool(figures) and all(f.narrow(target_pct) for f in figures)


def needs_more_rounds(
    figures: Sequence[ABFigure],
    rounds: int,
    round_cap: int,
    target_pct: float = TARGET_HALF_WIDTH_PCT,
) -> bool:
    """Another round, while an interval is wider than the target and the cap allows one."""
    return rounds < round_cap and not all_narrow(figures, target_pct)

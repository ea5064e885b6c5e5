"""A/B: the same benchmark with a preset applied and without, alternated, judged against noise.

Rounds alternate the order (with, without, then without, with...) so slow drift (a warming
disk, a filling filesystem) does not favour one side. A difference counts only when the two
sides' ranges do not overlap: otherwise it is within noise, and the result says so plainly.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


def order(rounds: int) -> list[bool]:
    """True = with the preset. with/without, without/with, ... for `rounds` rounds."""
    sequence: list[bool] = []
    for round_index in range(rounds):
        pair = [True, False] if round_index % 2 == 0 else [False, True]
        sequence.extend(pair)
    return sequence


@dataclass(frozen=True)
class ABFigure:
    phase: str
    with_preset: tuple[float, ...]  # MB/s of each run
    without: tuple[float, ...]

    @property
    def median_with(self) -> float:
        return statistics.median(self.with_preset)

    @property
    def median_without(self) -> float:
        return statistics.median(self.without)

    @property
    def change_pct(self) -> float:
        base = self.median_without
        return 100.0 * (self.median_with - base) / base if base else 0.0

    @property
    def noise_pct(self) -> float:
        """The larger side's spread (max - min) as a share of its median."""
        spreads = [
            (max(v) - min(v)) / statistics.median(v) * 100
            for v in (self.with_preset, self.without)
            if v and statistics.median(v)
        ]
        return max(spreads, default=0.0)

    @property
    def overlaps(self) -> bool:
        return min(self.with_preset) <= max(self.without) and min(self.without) <= max(
            self.with_preset
        )

    @property
    def verdict(self) -> str:
        if len(self.with_preset) < 2 or len(self.without) < 2:
            return "not enough runs to judge"
        if self.overlaps:
            return "within noise"
        return "faster with the preset" if self.change_pct > 0 else "slower with the preset"

    def sentence(self) -> str:
        ranges = (
            f"{min(self.with_preset):,.0f}-{max(self.with_preset):,.0f} MB/s with, "
            f"{min(self.without):,.0f}-{max(self.without):,.0f} MB/s without"
        )
        if self.verdict == "within noise":
            return (
                f"{self.phase}: {self.change_pct:+.1f} % is within noise: the runs overlap "
                f"({ranges}); this preset makes no difference you can rely on here"
            )
        return f"{self.phase}: {self.change_pct:+.1f} %, {self.verdict} ({ranges})"


def ab_figures(
    with_runs: Sequence[Mapping[str, float]], without_runs: Sequence[Mapping[str, float]]
) -> list[ABFigure]:
    """Per phase both sides measured, from each run's phase -> MB/s."""
    phases = [p for p in (with_runs[0] if with_runs else {}) if all(p in r for r in without_runs)]
    return [
        ABFigure(
            phase,
            tuple(run[phase] for run in with_runs if phase in run),
            tuple(run[phase] for run in without_runs if phase in run),
        )
        for phase in phases
    ]

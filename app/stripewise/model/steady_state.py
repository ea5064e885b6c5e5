"""Steady state of a write workload, after the SNIA Solid State Storage Performance Test
Specification (PTS 2.0.x): a drive's lasting rate, not its first-minute burst.

A steady-state phase runs in rounds of fixed size; each round gives one figure (MB/s for a
sequential write, IOPS for a random one). The measurement window is the last `WINDOW` rounds
(5); with y_1..y_n the window's figures in round order, x_i = 1..n their round numbers:

- mean           = (y_1 + ... + y_n) / n
- data excursion = (max y - min y) / mean, at most 20 %: PTS "Max(y) - Min(y) within the
  measurement window is no more than 20 % of Ave(y)" (so every round also lies within
  +/-20 % of the mean);
- slope          = the least-squares line through (x_i, y_i):
                   b = sum((x_i - x_mean) * (y_i - y_mean)) / sum((x_i - x_mean)^2);
  slope excursion = |b| * (n - 1) / mean, at most 10 %: PTS "Max(y) - Min(y) of the best
  linear fit within the measurement window is within 10 % of Ave(y)" (the fitted line's
  rise or fall across the window).

The window is steady when both hold. The figure reported for a steady-state phase is the
window's mean, whether or not it became steady (a run that never did is flagged `not_steady`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

WINDOW = 5  # rounds in the measurement window (PTS)
MAX_EXCURSION_PCT = 20.0  # the window's range, in percent of its mean
MAX_SLOPE_PCT = 10.0  # the fitted line's range across the window, in percent of its mean
DEFAULT_MAX_ROUNDS = 25  # the PTS's cap before a test reports "steady state not reached"
MAX_ROUNDS = 1000


@dataclass(frozen=True)
class Window:
    """The last rounds' figures judged: `mean` in the figure's unit, the two excursions in
    percent of the mean (None while fewer than WINDOW rounds have run)."""

    mean: float
    excursion_pct: float | None
    slope_pct: float | None

    @property
    def steady(self) -> bool:
        return (
            self.excursion_pct is not None
            and self.slope_pct is not None
            and self.excursion_pct <= MAX_EXCURSION_PCT
            and self.slope_pct <= MAX_SLOPE_PCT
        )


def least_squares_slope(figures: Sequence[float]) -> float:
    """The slope of the least-squares line through (1, y_1) .. (n, y_n), per round."""
    n = len(figures)
    if n < 2:
        return 0.0
    x_mean = (n + 1) / 2
    y_mean = sum(figures) / n
    spread = sum((x - x_mean) ** 2 for x in range(1, n + 1))
    return sum((x - x_mean) * (y - y_mean) for x, y in enumerate(figures, start=1)) / spread


def judge(rounds: Sequence[float]) -> Window:
    """The window over the last WINDOW rounds (fewer while the run is young: its mean, and
    no excursions, so never steady). A window whose mean is 0 (nothing moved) is never
    steady: its excursions are infinite."""
    if not rounds:
        return Window(0.0, None, None)
    window = list(rounds[-WINDOW:])
    mean = sum(window) / len(window)
    if len(window) < WINDOW:
        return Window(mean, None, None)
    if mean <= 0:
        return Window(mean, float("inf"), float("inf"))
    excursion = (max(window) - min(window)) / mean * 100
    slope = abs(least_squares_slope(window)) * (len(window) - 1) / mean * 100
    return Window(mean, excursion, slope)


def round_words(number: int, window: Window) -> str:
    """The live line of one round: 'round 7: not steady, excursion 34 %'."""
    if window.excursion_pct is None or window.slope_pct is None:
        return f"round {number}: not steady yet, {WINDOW - min(number, WINDOW)} more to a window"
    if window.steady:
        return (
            f"round {number}: steady, excursion {window.excursion_pct:.0f} %, "
            f"slope {window.slope_pct:.0f} %"
        )
    if window.excursion_pct > MAX_EXCURSION_PCT:
        return f"round {number}: not steady, excursion {window.excursion_pct:.0f} %"
    return f"round {number}: not steady, slope {window.slope_pct:.0f} %"


def reported_pct(percent: float | None) -> float | None:
    """An excursion as it is reported: to a tenth, finite (a window that moved nothing has
    none)."""
    if percent is None or not math.isfinite(percent):
        return None
    return round(percent, 1)


@dataclass(frozen=True)
class KeptRounds:
    """One repetition's rounds as run_result and the history keep them: each round's figure
    in the rule's unit (MB/s for a sequential write, IOPS for a random one) in run order, the
    window judged over the last WINDOW, and whether it held the rule (`steady`)."""

    repetition: int
    rounds: tuple[float, ...]
    window: Window
    steady: bool

    @property
    def window_start(self) -> int:
        """The first round (from 1) of the window the figure is the mean of."""
        return max(1, len(self.rounds) - WINDOW + 1)

    def verdict(self) -> str:
        """'steady after 7 rounds' / 'not steady in 30 rounds, excursion 34 %'."""
        count = len(self.rounds)
        rounds = f"{count} round{'' if count == 1 else 's'}"
        if self.steady:
            return f"steady after {rounds}"
        excursion, slope = self.window.excursion_pct, self.window.slope_pct
        if excursion is None or slope is None:
            if count < WINDOW:
                return f"not steady in {rounds}, fewer than a window of {WINDOW}"
            return f"not steady in {rounds}"
        if excursion > MAX_EXCURSION_PCT:
            return f"not steady in {rounds}, excursion {excursion:.0f} %"
        return f"not steady in {rounds}, slope {slope:.0f} %"


@dataclass(frozen=True)
class SteadyRounds:
    """The rounds of one steady-state phase, each round's MB/s and IOPS in run order; the
    rule follows `by_iops` (a random write's IOPS) or else MB/s (a sequential write's)."""

    mb_s: tuple[float, ...]
    iops: tuple[float, ...]
    by_iops: bool = False

    @property
    def figures(self) -> tuple[float, ...]:
        return self.iops if self.by_iops else self.mb_s

    @property
    def window(self) -> Window:
        return judge(self.figures)

    @property
    def window_mb_s(self) -> float:
        return judge(self.mb_s).mean

    @property
    def window_iops(self) -> float:
        return judge(self.iops).mean

    def kept(self, repetition: int) -> KeptRounds:
        """The rounds as reported: figures and mean as measured (rounded once, where they are
        shown: rounded here too, a mean of 163.349 read 163.35 and then 163.4 beside the
        phase's 163.3), excursions to a tenth of a percent (as `phase_result` carries them);
        `steady` judged before rounding."""
        window = self.window
        return KeptRounds(
            repetition,
            self.figures,
            Window(
                window.mean,
                reported_pct(window.excursion_pct),
                reported_pct(window.slope_pct),
            ),
            window.steady,
        )

"""A steady-state write phase's rounds in the history: stored as results in the one
vocabulary (`model.vocabulary.ROUNDS`), and taken apart from the run's figures as it is read,
so no comparison, verdict, headline or export ever takes a round for a repetition or for a
phase's figure.

Each repetition of a steady-state phase keeps up to four rows under its phase qualified
`seq_write (repetition 2)` (a reader keyed by phase never mistakes them for `seq_write`'s):

- `round_throughput` (MB/s, a sequential write) or `round_iops` (IOPS, a random write): the
  value is the window's mean (the phase's figure for that repetition), min and max the
  rounds', and `passes` each round's figure in run order;
- `round_excursion` and `round_slope` (%): the window's, missing before WINDOW rounds;
- `round_steady`: 1 when the window held the SNIA PTS rule, 0 when not.

Only the first is needed: a run written by hand with its rounds alone reads back with its
window judged again from them (model.steady_state.judge).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from stripewise.model.run import ResultValue
from stripewise.model.steady_state import KeptRounds, Window, judge
from stripewise.model.vocabulary import (
    ROUND_EXCURSION,
    ROUND_IOPS,
    ROUND_SLOPE,
    ROUND_STEADY,
    ROUND_THROUGHPUT,
    Quantity,
    is_round_figure,
    qualified,
    split_qualified,
)

_REPETITION = re.compile(r"^repetition ([0-9]+)$")


class WindowJson(TypedDict):
    mean: float
    excursion_pct: float | None
    slope_pct: float | None


class RoundsJson(TypedDict):
    """One repetition's rounds in `history show --json` and a run's JSON export."""

    phase: str
    repetition: int
    unit: str
    rounds: list[float]
    window: WindowJson
    window_start: int  # the window's first round, from 1
    steady: bool
    verdict: str


@dataclass(frozen=True)
class PhaseRounds:
    """One repetition's rounds of one phase, as read back from the history."""

    phase: str  # seq_write or random_write
    unit: str  # the rounds' unit: MB/s or IOPS
    kept: KeptRounds

    def to_json(self) -> RoundsJson:
        """As `history show --json` and a run's JSON export give it: keyed as the phase's
        `phase_result` keys them, with the window's first round and the verdict in words."""
        kept, window = self.kept, self.kept.window
        return {
            "phase": self.phase,
            "repetition": kept.repetition,
            "unit": self.unit,
            "rounds": list(kept.rounds),
            "window": {
                "mean": window.mean,
                "excursion_pct": window.excursion_pct,
                "slope_pct": window.slope_pct,
            },
            "window_start": kept.window_start,
            "steady": kept.steady,
            "verdict": kept.verdict(),
        }


def rounds_quantity(phase: str) -> Quantity:
    """What a phase's rounds measure: a random write's IOPS, a sequential write's MB/s."""
    return ROUND_IOPS if phase == "random_write" else ROUND_THROUGHPUT


def round_values(phase: str, kept: KeptRounds) -> list[ResultValue]:
    """One repetition's rounds as the rows the history keeps."""
    where = qualified(phase, f"repetition {kept.repetition}")
    series = rounds_quantity(phase)
    low = min(kept.rounds) if kept.rounds else None
    high = max(kept.rounds) if kept.rounds else None
    window = kept.window
    return [
        ResultValue(where, series.metric, series.unit, window.mean, low, high, 1, kept.rounds),
        ResultValue(where, ROUND_EXCURSION.metric, ROUND_EXCURSION.unit, window.excursion_pct),
        ResultValue(where, ROUND_SLOPE.metric, ROUND_SLOPE.unit, window.slope_pct),
        ResultValue(where, ROUND_STEADY.metric, ROUND_STEADY.unit, 1.0 if kept.steady else 0.0),
    ]


def split_rounds(
    values: Sequence[ResultValue],
) -> tuple[tuple[ResultValue, ...], tuple[PhaseRounds, ...]]:
    """A run's stored results as (its figures, its steady-state rounds). A run without rounds
    (every run stored before, and every one not run to steady state) has none."""
    figures = tuple(v for v in values if not is_round_figure(v.metric))
    grouped: dict[str, dict[str, ResultValue]] = {}
    for value in values:
        if is_round_figure(value.metric):
            grouped.setdefault(value.phase, {})[value.metric] = value
    found = [rounds for where, rows in grouped.items() if (rounds := _rounds(where, rows))]
    return figures, tuple(found)


def _rounds(where: str, rows: dict[str, ResultValue]) -> PhaseRounds | None:
    series = rows.get(ROUND_THROUGHPUT.metric) or rows.get(ROUND_IOPS.metric)
    if series is None or not series.passes:
        return None  # a window without its rounds: nothing to show
    phase, qualifier = split_qualified(where)
    match = _REPETITION.match(qualifier or "")
    repetition = int(match.group(1)) if match else 1
    judged = judge(series.passes)

    def stored(quantity: Quantity, otherwise: float | None) -> float | None:
        row = rows.get(quantity.metric)
        return otherwise if row is None else row.value

    window = Window(
        judged.mean if series.value is None else series.value,
        stored(ROUND_EXCURSION, _finite(judged.excursion_pct)),
        stored(ROUND_SLOPE, _finite(judged.slope_pct)),
    )
    steady_row = rows.get(ROUND_STEADY.metric)
    steady = judged.steady if steady_row is None else bool(steady_row.value)
    return PhaseRounds(phase, series.unit, KeptRounds(repetition, series.passes, window, steady))


def _finite(percent: float | None) -> float | None:
    """A window that moved nothing has no excursion to show (judge() makes it infinite)."""
    return percent if percent is not None and math.isfinite(percent) else None

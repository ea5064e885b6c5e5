"""The SNIA PTS steady-state rule against recorded series with known answers."""

from __future__ import annotations

import math

import pytest

from stripewise.model.steady_state import SteadyRounds, judge, least_squares_slope, round_words
from stripewise.model.units import phase_progress_text


def test_a_flat_series_is_steady() -> None:
    window = judge([100, 102, 98, 101, 99])
    assert window.mean == pytest.approx(100)
    assert window.excursion_pct == pytest.approx(4.0)  # (102 - 98) / 100
    assert window.slope_pct == pytest.approx(1.2)  # |-0.3| per round x 4 rounds / 100
    assert window.steady


def test_only_the_last_five_rounds_count() -> None:
    # the first rounds write into a cache at three times the lasting rate
    window = judge([300, 250, 100, 102, 98, 101, 99])
    assert window.mean == pytest.approx(100)
    assert window.steady


def test_a_slope_too_steep_is_not_steady() -> None:
    window = judge([92, 96, 100, 104, 108])
    assert window.excursion_pct == pytest.approx(16.0)  # within 20 %
    assert window.slope_pct == pytest.approx(16.0)  # 4 per round over 4 rounds: over 10 %
    assert not window.steady
    assert round_words(5, window) == "round 5: not steady, slope 16 %"


def test_an_excursion_too_wide_is_not_steady_even_without_a_slope() -> None:
    window = judge([100, 130, 80, 130, 100])
    assert least_squares_slope([100, 130, 80, 130, 100]) == pytest.approx(0.0)
    assert window.slope_pct == pytest.approx(0.0)
    assert window.excursion_pct == pytest.approx(50 / 108 * 100)
    assert not window.steady
    assert round_words(7, window) == "round 7: not steady, excursion 46 %"


def test_the_excursion_is_the_windows_range_as_the_pts_defines_it() -> None:
    # every round lies within +/-15 % of the mean, but max - min is 30 % of it: PTS 2.0's
    # data excursion bounds the range (Max(y) - Min(y) <= 20 % of Ave(y))
    window = judge([85, 115, 100, 100, 100])
    assert window.excursion_pct == pytest.approx(30.0)
    assert not window.steady


def test_the_bounds_hold_inclusively() -> None:
    # range exactly 20 % of the mean, fitted line flat
    window = judge([90, 110, 100, 110, 90])
    assert window.excursion_pct == pytest.approx(20.0)
    assert window.slope_pct == pytest.approx(0.0)
    assert window.steady


def test_fewer_than_five_rounds_are_never_steady() -> None:
    window = judge([100, 100, 100, 100])
    assert window.mean == 100
    assert window.excursion_pct is None and window.slope_pct is None
    assert not window.steady
    assert round_words(4, window) == "round 4: not steady yet, 1 more to a window"
    assert not judge([]).steady


def test_a_window_that_moved_nothing_is_not_steady() -> None:
    window = judge([0, 0, 0, 0, 0])
    assert window.excursion_pct is not None and math.isinf(window.excursion_pct)
    assert not window.steady


def test_a_steady_round_says_both_figures() -> None:
    assert round_words(9, judge([100, 102, 98, 101, 99])) == (
        "round 9: steady, excursion 4 %, slope 1 %"
    )


def test_kept_rounds_are_the_measured_figures_so_the_mean_reads_as_the_phases() -> None:
    """Rounded to the hundredth before being shown to a tenth, a window mean of 163.3451 read
    163.4 beside the phase's 163.3: what is kept is rounded once, where it is shown."""
    figures = (163.3451, 163.3451, 163.3451, 163.3451, 163.3451)
    rounds = SteadyRounds(figures, figures, by_iops=False)
    kept = rounds.kept(1)
    assert kept.rounds == figures
    assert kept.window.mean == pytest.approx(rounds.window_mb_s, abs=1e-12)
    assert f"{kept.window.mean:.1f}" == f"{rounds.window_mb_s:.1f}" == "163.3"


def test_a_phase_in_rounds_says_its_end_as_at_most() -> None:
    """Planned to its most rounds, a steady-state phase may end sooner: its ETA is a bound."""
    assert phase_progress_text(0.4, 12, in_rounds=False) == "phase 40 %, ends in 12 s"
    assert phase_progress_text(0.4, 250, in_rounds=True) == "phase 40 %, ends in at most 4 min 10 s"
    assert phase_progress_text(0.4, None, in_rounds=True) == "phase 40 %, ends in unknown"
    assert phase_progress_text(1.0, 0, in_rounds=True) == "phase 100 %, ending"

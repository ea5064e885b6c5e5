"""The statistics behind every verdict: Student's t without scipy, Welch's test on known data,
Holm's correction, and what they add up to over many comparisons of runs that do not differ."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stripewise.model.verdict import (
    Evidence,
    cant_tell,
    holm,
    t_cdf,
    t_quantile,
    two_sided_p,
    welch,
)

# Student's t, 97.5th percentiles, as printed in every statistics table
T_975 = {1: 12.7062, 2: 4.3027, 3: 3.1824, 5: 2.5706, 10: 2.2281, 30: 2.0423, 120: 1.9799}


@pytest.mark.parametrize(("df", "expected"), sorted(T_975.items()))
def test_t_quantiles_match_the_printed_table(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-4)
    assert t_quantile(0.025, df) == pytest.approx(-expected, abs=1e-4)


@pytest.mark.parametrize("df", [1.0, 2.5, 7.3, 40.0])
def test_t_cdf_agrees_with_integrating_the_density(df: float) -> None:
    """An independent route: the density integrated numerically (Welch's df are fractional)."""
    xs = np.linspace(-60.0, 3.0, 400_001)
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    density = np.exp(log_norm - (df + 1) / 2 * np.log1p(xs**2 / df))
    integral = float(np.trapezoid(density, xs))
    below = t_cdf(-60.0, df)  # the tail left of the grid, tiny except for df = 1
    assert t_cdf(3.0, df) == pytest.approx(below + integral, abs=2e-5)
    assert two_sided_p(0.0, df) == pytest.approx(1.0)


def test_welch_reproduces_the_textbook_examples() -> None:
    """Wikipedia, "Welch's t-test", examples 1 and 2: t, degrees of freedom and p."""
    a1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4]
    a2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4]
    first = welch(a1, a2)
    assert first is not None
    assert (round(first.df, 2), round(first.p_value, 3)) == (24.99, 0.021)
    b1 = [17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8]
    b2 = [21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8]
    b2 += [20.7, 21.7, 21.5, 22.5, 23.6, 21.5, 22.5, 23.5, 21.5, 21.8]
    second = welch(b1, b2)
    assert second is not None
    assert (round(second.df, 1), round(second.p_value, 3)) == (9.9, 0.149)
    assert second.passes == (10, 20)


def test_the_interval_is_of_the_change_of_means_in_percent_of_the_baseline() -> None:
    """1,000 vs 1,100 MB/s, each +-10: a +10 % change; with df = 4 the half-width is
    t(0.975, 4) x sqrt(2 x 100 / 3) = 2.776 x 8.165 = 22.7 MB/s, 2.27 %."""
    found = welch([990.0, 1000.0, 1010.0], [1090.0, 1100.0, 1110.0])
    assert found is not None
    assert found.change_pct == pytest.approx(10.0)
    assert found.df == pytest.approx(4.0)
    assert found.half_width_pct == pytest.approx(2.7764 * math.sqrt(200 / 3) / 10, rel=1e-4)
    assert (found.low_pct, found.high_pct) == pytest.approx((10 - 2.2667, 10 + 2.2667), rel=1e-3)
    assert found.interval_text() == "+10.0 % \u00b1 2.3 % (95 %)"
    assert found.significant


def test_no_test_without_noise_to_measure_or_with_one_pass() -> None:
    assert welch([100.0], [100.0, 101.0]) is None
    assert welch([100.0, 100.0], [120.0, 120.0]) is None, "identical passes: no noise estimate"
    assert welch([0.0, 0.0, 0.0], [1.0, 2.0, 3.0]) is None, "no % of a zero baseline"


def test_holm_adjusts_each_p_for_the_ones_below_it() -> None:
    """p = 0.01, 0.04, 0.03, 0.005 over four tests: 0.005x4, 0.01x3, 0.03x2, then 0.04x1 held
    up to the running maximum 0.06; only the first two stay under 0.05."""
    family = [Evidence(1.0, 1.0, p, 5.0, (3, 3)) for p in (0.01, 0.04, 0.03, 0.005)]
    adjusted = holm(family)
    assert [e.p_adjusted for e in adjusted] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [e.significant for e in adjusted] == [True, False, False, True]
    assert holm([]) == []


def test_can_t_tell_says_how_many_passes() -> None:
    assert cant_tell(1, 1) == "can't tell: 1 pass each"
    assert cant_tell(2, 2) == "can't tell: 2 passes each"
    assert cant_tell(1, 3) == "can't tell: 1 pass here, 3 in the baseline"
    assert cant_tell(3, 1, here="with", there="without") == "can't tell: 3 passes with, 1 without"
    assert cant_tell(0, 3) == "can't tell: passes not recorded"


def test_many_figures_at_once_rarely_make_a_false_verdict() -> None:
    """1,000 comparisons of 12 figures whose runs do not differ (3 passes each, 5 % noise):
    tested one by one, about a third of the comparisons call something better or worse (under
    1 - 0.95^12 = 46 %: Welch is a little cautious at 3 passes); with Holm over the 12 it stays
    under the 5 % the verdicts promise."""
    rng = np.random.default_rng(15)
    with_any_uncorrected = with_any_holm = 0
    comparisons = 1000
    for _ in range(comparisons):
        family = []
        for _figure in range(12):
            passes = rng.normal(1000.0, 50.0, size=(2, 3))
            found = welch(list(passes[0]), list(passes[1]))
            assert found is not None
            family.append(found)
        with_any_uncorrected += any(e.significant for e in family)
        with_any_holm += any(e.significant for e in holm(family))
    assert with_any_uncorrected / comparisons > 0.25
    assert with_any_holm / comparisons < 0.05


def test_a_real_difference_is_still_found_among_many_figures() -> None:
    """The correction costs power, not all of it: a 20 % gain with 2 % noise and 5 passes each
    stands out among 11 figures that did not change, in nearly every comparison."""
    rng = np.random.default_rng(16)
    found = 0
    for _ in range(200):
        family = [
            welch(list(rng.normal(1000, 20, 5)), list(rng.normal(1000, 20, 5))) for _ in range(11)
        ]
        family.append(welch(list(rng.normal(1000, 20, 5)), list(rng.normal(1200, 20, 5))))
        judged = holm([e for e in family if e is not None])
        found += judged[-1].significant
    assert found >= 190

"""Issue 33, point 2: a stall is an interval whose p99 is over 10x the phase's median one."""

from __future__ import annotations

from stripewise.model.latency import Stall, find_stalls


def test_an_interval_over_ten_times_the_median_p99_is_a_stall() -> None:
    steady = [(0.5 * i, 200.0) for i in range(1, 20)]
    series = [*steady[:9], (5.0, 2001.0), (5.5, 2000.0), *steady[9:]]
    assert find_stalls(series) == (Stall(5.0, 2001.0),)  # 2000 is 10x: not over it


def test_no_intervals_no_stalls() -> None:
    assert find_stalls([]) == ()
    assert find_stalls([(0.5, 100.0)]) == ()

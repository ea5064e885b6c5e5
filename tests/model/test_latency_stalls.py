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


def test_latency_is_logged_at_2_hz_or_less_unless_said() -> None:
    from stripewise.model.bench import BenchSpec
    from stripewise.protocol.spec import spec_from_json, spec_to_json

    assert BenchSpec("/srv", 2**30, sample_rate_hz=2).logs_latency
    assert not BenchSpec("/srv", 2**30, sample_rate_hz=2.5).logs_latency
    assert BenchSpec("/srv", 2**30, sample_rate_hz=10, latency_log=True).logs_latency
    assert not BenchSpec("/srv", 2**30, sample_rate_hz=1, latency_log=False).logs_latency
    assert "latency_log" not in spec_to_json(BenchSpec("/srv", 2**30))
    asked = spec_from_json({"target": "/srv", "size": "1G", "latency_log": False})
    assert asked.latency_log is False and spec_to_json(asked)["latency_log"] is False

"""Latency over time: each sample's interval as percentiles and a histogram, and the stalls
found among a phase's intervals (issue 33).

A stall is an interval whose p99 is over `STALL_FACTOR` times the median of the phase's
interval p99s: a cache flush or a garbage collection that a whole-phase p99 hides.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

STALL_FACTOR = 10.0


@dataclass(frozen=True)
class IntervalLatency:
    """An interval's completion latency percentiles in microseconds (`latency_us`)."""

    p50: float
    p99: float
    p999: float


@dataclass(frozen=True)
class LatencyBuckets:
    """An interval's completion latencies as counts between edges in microseconds
    (`histogram`): `edges_us` has one more entry than `counts`, rising; bucket i holds the
    I/Os from edges_us[i] up to edges_us[i + 1]."""

    edges_us: tuple[float, ...]
    counts: tuple[int, ...]

    @property
    def total(self) -> int:
        return sum(self.counts)


@dataclass(frozen=True)
class Stall:
    """An interval whose p99 stood out: when it ended (`t_s`, as its sample's) and its p99."""

    t_s: float
    p99_us: float


def find_stalls(intervals: Sequence[tuple[float, float]]) -> tuple[Stall, ...]:
    """The stalls among a phase's intervals, each (t_s, p99 in microseconds), in time order."""
    if not intervals:
        return ()
    median = statistics.median(p99 for _t, p99 in intervals)
    limit = STALL_FACTOR * median
    return tuple(Stall(t_s, p99) for t_s, p99 in intervals if p99 > limit)

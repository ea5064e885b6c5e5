"""Latency over time: each sample's interval as percentiles and a histogram, and the stalls
found among a phase's intervals (issue 33).

A stall is an interval whose p99 is over `STALL_FACTOR` times the median of the phase's
interval p99s: a cache flush or a garbage collection that a whole-phase p99 hides.

The histograms sit on one grid: fio's log-linear buckets (a value below 64 ns its own, above
that 64 per power of two, `lower_bound`), merged `WIRE_MERGE` at a time, so 4 per power of
two, each about 19 % wide. The history keeps a sample's as series `histogram.N` (N: the
bucket's index on that grid; a bucket without an I/O is absent) beside `latency_us.p50` ...,
a few bytes a sample once packed (history/sample_blocks.py).
"""

from __future__ import annotations

import bisect
import functools
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

STALL_FACTOR = 10.0
SUB_BITS = 6  # fine buckets: 2^6 per power of two, fio's FIO_IO_U_PLAT_BITS
_SUB = 1 << SUB_BITS
WIRE_MERGE = 16  # fine buckets per bucket of the grid
GRID_BUCKETS = 176  # the grid's buckets up to 2^48 ns, where the fine histogram ends
PERCENTILES = {"p50": 0.5, "p99": 0.99, "p999": 0.999}
_PERCENTILE_SERIES = tuple(f"latency_us.{key}" for key in PERCENTILES)
_HISTOGRAM_SERIES = "histogram."


def fio_rank(share: float, total: int) -> int:
    """The 1-based rank of the I/O at `share` of `total`, as fio counts it (stat.c,
    calc_clat_percentiles): the first I/O at which the count reaches the percentile's double
    over 100 times the total. The double of 99.9 lies a little above 99.9, so 99.9 % of 1,000
    I/Os is the 1,000th, as fio finds it; exact arithmetic agrees with fio's long double for
    every count (checked to 300,000)."""
    percent = Fraction(round(share * 100, 6))  # the double fio parses from "99.9"
    return max(1, math.ceil(percent / 100 * total))


def lower_bound(bucket: int) -> int:
    """The smallest value in nanoseconds that falls in fine bucket `bucket`."""
    if bucket < _SUB:
        return bucket
    exponent, mantissa = divmod(bucket, _SUB)  # exponent >= 1: bit_length = exponent + 6
    return (_SUB + mantissa) << (exponent - 1)


def grid_edge_us(index: int) -> float:
    """The lower edge of the grid's bucket `index` in microseconds (`index` + 1: its upper)."""
    return lower_bound(index * WIRE_MERGE) / 1000.0


@functools.cache
def _grid() -> tuple[float, ...]:
    return tuple(grid_edge_us(index) for index in range(GRID_BUCKETS + 1))


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
class LatencyInterval:
    """One stored sample's latency, where it sits: its host (None: a run on one machine),
    phase, repetition and end time."""

    host: str | None
    phase: str
    repetition: int
    t_s: float
    latency: IntervalLatency
    histogram: LatencyBuckets | None


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


def grid_index(edge_us: float) -> int | None:
    """The grid bucket whose lower edge is `edge_us`; None for an edge off the grid."""
    grid = _grid()
    index = bisect.bisect_left(grid, edge_us)
    return index if index < GRID_BUCKETS and grid[index] == edge_us else None


def latency_series(
    latency: IntervalLatency | None, histogram: LatencyBuckets | None
) -> dict[str, float]:
    """A sample's latency as the history's series: `latency_us.p50` ... and `histogram.N`
    per grid bucket with an I/O (a histogram off the grid keeps only its percentiles)."""
    data: dict[str, float] = {}
    if latency is not None:
        data.update(zip(_PERCENTILE_SERIES, (latency.p50, latency.p99, latency.p999), strict=True))
    first = grid_index(histogram.edges_us[0]) if histogram and histogram.counts else None
    if histogram is not None and first is not None:
        for offset, count in enumerate(histogram.counts):
            if count:
                data[f"{_HISTOGRAM_SERIES}{first + offset}"] = float(count)
    return data


def stored_latency(
    data: Mapping[str, float | None],
) -> tuple[IntervalLatency | None, LatencyBuckets | None]:
    """A stored sample's latency back from its series (None, None for one without: a run
    stored before issue 33, or an engine that did not measure it)."""
    figures = [data.get(name) for name in _PERCENTILE_SERIES]
    latency = None
    if all(figure is not None for figure in figures):
        p50, p99, p999 = (float(figure or 0.0) for figure in figures)
        latency = IntervalLatency(p50, p99, p999)
    counts = {
        int(name[len(_HISTOGRAM_SERIES) :]): int(value)
        for name, value in data.items()
        if name.startswith(_HISTOGRAM_SERIES) and value
    }
    if not counts:
        return latency, None
    first, last = min(counts), max(counts)
    edges = tuple(grid_edge_us(index) for index in range(first, last + 2))
    return latency, LatencyBuckets(edges, tuple(counts.get(i, 0) for i in range(first, last + 1)))


def stored_intervals(
    rows: Iterable[tuple[str, int, float, Mapping[str, float | None]]], host: str | None = None
) -> tuple[LatencyInterval, ...]:
    """The intervals with a latency among stored samples, each (phase, repetition, t_s,
    data), in their order."""
    found = []
    for phase, repetition, t_s, data in rows:
        latency, histogram = stored_latency(data)
        if latency is not None:
            found.append(LatencyInterval(host, phase, repetition, t_s, latency, histogram))
    return tuple(found)


def p99_over_time(
    intervals: Iterable[LatencyInterval],
) -> dict[str, tuple[tuple[float, ...], tuple[float, ...]]]:
    """Each phase's interval p99 in microseconds against seconds since its first interval, of
    its first repetition: runs compared aligned on phase time, as their throughput is."""
    starts: dict[str, tuple[float, int]] = {}
    points: dict[str, tuple[list[float], list[float]]] = {}
    for interval in intervals:
        start = starts.setdefault(interval.phase, (interval.t_s, interval.repetition))
        if interval.repetition == start[1]:
            xs, ys = points.setdefault(interval.phase, ([], []))
            xs.append(round(interval.t_s - start[0], 3))
            ys.append(interval.latency.p99)
    return {phase: (tuple(xs), tuple(ys)) for phase, (xs, ys) in points.items()}

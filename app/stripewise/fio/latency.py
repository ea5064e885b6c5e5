"""The one latency figure of fio runs: completion latency (clat), per job, and how the
percentiles of several jobs combine.

- Completion latency is fio's `clat`: from the moment the submission returned to the moment
  the I/O completed (`clat_ns` in fio 3.x JSON, `clat` in microseconds in fio 2.x, the
  `clat` percentile cells of terse v3). It is what fio reports by default and what every
  fio run read here has, measured, group or imported alike; it leaves out the time spent in
  the submission call itself (on a device that completes inside io_submit it can read a
  fraction of a microsecond).
- Per job: fio's own percentile points of that job, exact for one job.
- Several jobs (the streams of a phase) are never averaged: their percentile points are
  merged weighted by each job's I/O count, and the figure is the smallest latency at which
  the merged curve reaches the percentile. The merged curve at a latency counts, for each
  job, the highest of its listed points at or below it, so it never overstates how many
  I/Os were that fast: the figure errs high, never low (it is a listed latency at or above
  the pooled I/Os' true percentile), and it lies between the jobs' own (identical jobs give
  their own figure). fio's "All clients" entry, where fio writes one, is its own merge of
  the clients' histograms and is kept as fio wrote it.
- A phase that reads and writes reports the direction that did more I/Os (reads on a tie);
  the other direction's figures stay per direction where a reader keeps them (imports).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

P50, P99 = 50.0, 99.0
# fio's own keys for the two percentiles every figure here uses
PERCENTILE_KEYS = ("50.000000", "99.000000")
# a direction's completion latency: fio 3.x in ns, fio 2.x in us (key, ns per unit)
_CLAT_KEYS = (("clat_ns", 1.0), ("clat", 1000.0))


@dataclass(frozen=True)
class JobLatency:
    """One job's completion latency in one direction: the I/Os it timed, and fio's percentile
    points as (latency in microseconds, percent) in increasing latency."""

    ios: int
    points: tuple[tuple[float, float], ...]


def clat_key(stats: Mapping[str, Any]) -> tuple[str, float]:
    """Which completion latency a direction's JSON holds: (key, its unit in ns)."""
    return next(((k, ns) for k, ns in _CLAT_KEYS if stats.get(k) is not None), _CLAT_KEYS[0])


def from_json(stats: Mapping[str, Any]) -> JobLatency | None:
    """A job direction's completion latency from fio's JSON; None when it timed no I/O.
    Figures of another type than fio writes raise TypeError or ValueError."""
    key, unit_ns = clat_key(stats)
    clat = stats.get(key) or {}
    points = clat.get("percentile") or {}
    count = clat.get("N") or stats.get("total_ios")  # fio 2.x writes no N
    if not count or not points:
        return None
    curve = sorted((float(value) * unit_ns / 1000, float(pct)) for pct, value in points.items())
    return JobLatency(int(count), tuple(curve))


def terse_points(cells: Sequence[str]) -> tuple[tuple[float, float], ...]:
    """A job direction's completion latency points from its terse v3 `50.000000%=123` cells
    (microseconds), as (latency, percent) in increasing latency; empty when none."""
    points = []
    for cell in cells:
        pct, _, value = cell.partition("%=")
        if value:
            points.append((float(value), float(pct)))
    return tuple(sorted(points))


def percentile_us(jobs: Sequence[JobLatency], pct: float) -> float | None:
    """The `pct` percentile of the jobs together, merged by I/O count (module docstring)."""
    timed = [job for job in jobs if job.ios > 0 and job.points]
    if not timed:
        return None
    weight = sum(job.ios for job in timed)
    reached = [0.0] * len(timed)  # each job's highest percent at or below the latency swept
    events = sorted((us, index, p) for index, job in enumerate(timed) for us, p in job.points)
    for position, (us, index, p) in enumerate(events):
        reached[index] = max(reached[index], p)
        if position + 1 < len(events) and events[position + 1][0] == us:
            continue  # every job's point at this latency counts before the check
        mixed = sum(job.ios * r for job, r in zip(timed, reached, strict=True))
        if mixed >= pct * weight - 1e-9:
            return us
    return None


def p50_p99_us(jobs: Sequence[JobLatency]) -> tuple[float | None, float | None]:
    return percentile_us(jobs, P50), percentile_us(jobs, P99)


def dominant(read_ios: int, write_ios: int) -> str:
    """The direction whose latency a phase reports: the one that did more I/Os."""
    return "read" if read_ios >= write_ios else "write"

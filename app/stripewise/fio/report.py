"""fio's JSON output read: one reader of its objects for the helper's engine (a run's
streamed status objects) and the importer (a saved file's documents).

Jobs are `jobs` in a plain run and `client_stats` in client/server mode. Each status object
holds cumulative totals and each job's runtime (ms) at them: the sampler takes live rates
between two objects on that clock (`totals`, `elapsed_s`). Latency is completion latency per
job, combined as `fio.latency` says.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stripewise.fio import latency
from stripewise.fio.latency import JobLatency

DIRECTIONS = ("read", "write", "trim")
_MAX_COUNT = 2**62  # bytes or I/Os: more than any run can move


@dataclass
class Moved:
    """Bytes and I/Os of a run's jobs so far (trims count as writes)."""

    read_bytes: int = 0
    write_bytes: int = 0
    read_ops: int = 0
    write_ops: int = 0


def entries(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The job entries of a document: `client_stats` in client mode, else `jobs`."""
    listed = obj.get("client_stats") if "client_stats" in obj else obj.get("jobs")
    return [e for e in listed if isinstance(e, dict)] if isinstance(listed, list) else []


def _count(value: Any) -> int:
    """A byte or I/O count as fio writes it: a whole number from 0 to _MAX_COUNT."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{value!r} is not a count")
    if not 0 <= value <= _MAX_COUNT:
        raise ValueError(f"{value!r} is out of range")
    return int(value)


def totals(obj: Mapping[str, Any]) -> Moved:
    """Bytes and I/Os of all jobs; never fio's KiB/s `bw`. ValueError for figures no run
    can have."""
    found = Moved()
    for job in entries(obj):
        for direction in DIRECTIONS:
            stats = job.get(direction) or {}
            if not isinstance(stats, dict):
                raise ValueError(f"{direction} is not an object")
            moved, ops = _count(stats.get("io_bytes", 0)), _count(stats.get("total_ios", 0))
            if direction == "read":
                found.read_bytes += moved
                found.read_ops += ops
            else:
                found.write_bytes += moved
                found.write_ops += ops
    return found


def elapsed_s(obj: Mapping[str, Any]) -> float:
    """The longest job's runtime: jobs run side by side."""
    runtimes = [_count(j.get("job_runtime", 0)) for j in entries(obj)]
    return max(runtimes, default=0) / 1000


def job_latencies(obj: Mapping[str, Any], direction: str) -> list[JobLatency]:
    """Each job's completion latency in `direction`, for those that timed I/O."""
    found = (latency.from_json(job.get(direction) or {}) for job in entries(obj))
    return [job for job in found if job is not None]


def latency_us(obj: Mapping[str, Any], direction: str) -> tuple[float | None, float | None]:
    """Completion latency p50 and p99 in microseconds over all jobs (`fio.latency`)."""
    return latency.p50_p99_us(job_latencies(obj, direction))


def errno_of(obj: Mapping[str, Any]) -> int:
    """The first job's non-zero error (an errno), else 0."""
    return next((int(j.get("error") or 0) for j in entries(obj) if j.get("error")), 0)


def error_of(obj: Mapping[str, Any]) -> str | None:
    """The first job error as text, or None."""
    for job in entries(obj):
        code = int(job.get("error") or 0)
        if code:
            return f"{os.strerror(code)} (errno {code}, job {job.get('jobname', '?')})"
    return None


@dataclass(frozen=True)
class Status:
    """One status object of a running fio, read once: what the engine keeps of it."""

    moved: Moved
    elapsed_s: float | None  # None when a job's runtime cannot be read
    latencies: Mapping[str, tuple[JobLatency, ...]]  # by direction: read and write
    error: str | None
    errno: int

    def latency_us(self, direction: str) -> tuple[float | None, float | None]:
        """Completion latency p50 and p99 in microseconds over all jobs (`fio.latency`)."""
        return latency.p50_p99_us(self.latencies[direction])


def status(obj: Mapping[str, Any]) -> Status:
    """A streamed status object; TypeError, ValueError or AttributeError when it is not
    fio's shape (the engine keeps the last good one)."""
    moved = totals(obj)
    try:
        runtime_s: float | None = elapsed_s(obj)
    except (TypeError, ValueError, AttributeError):
        runtime_s = None
    return Status(
        moved,
        runtime_s,
        {way: tuple(job_latencies(obj, way)) for way in ("read", "write")},
        error_of(obj),
        errno_of(obj),
    )


def clat_bins(obj: Mapping[str, Any]) -> dict[int, int] | None:
    """Every job's completion latencies so far, all directions together, as fio's json+
    histogram has them: {a value inside the bucket (its middle) in ns: I/Os}. fio keeps them
    cumulative, so two status objects' difference is the I/Os that completed between them.
    None when the document has no `bins` (plain json, an older fio)."""
    found: dict[int, int] = {}
    seen = False
    for job in entries(obj):
        for direction in DIRECTIONS:
            stats = job.get(direction)
            clat = stats.get("clat_ns") if isinstance(stats, dict) else None
            bins = clat.get("bins") if isinstance(clat, dict) else None
            if not isinstance(bins, dict):
                continue
            seen = True
            for value, count in bins.items():
                key = int(value)
                found[key] = found.get(key, 0) + _count(count)
    return found if seen else None

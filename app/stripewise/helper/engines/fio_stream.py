"""fio's streamed JSON (`--output-format=json --status-interval=N`) read as it arrives.

fio prints one pretty-printed object per interval and a final one, without separators: each
starts with `{` and ends with `}` alone in column 0 (nested braces are indented). Other lines
("fio: terminating on signal 2", blank lines) may come between objects.
"""

from __future__ import annotations

import codecs
import json
import os
from collections import deque
from typing import Any

from stripewise.helper.engines.base import Counters

DIRECTIONS = ("read", "write", "trim")


class StatusStream:
    """Feed it pipe chunks of any size; it yields each complete object once."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial = ""  # the unfinished last line
        self._lines: list[str] | None = None  # the object being collected, if any
        # lines outside objects and objects that did not parse, the latest few
        self.noise: deque[str] = deque(maxlen=50)

    def feed(self, chunk: bytes | str) -> list[dict[str, Any]]:
        """The objects this chunk completes, in order."""
        text = chunk if isinstance(chunk, str) else self._decoder.decode(chunk)
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        found = (self._line(line.rstrip("\r")) for line in lines)
        return [obj for obj in found if obj is not None]

    def _line(self, line: str) -> dict[str, Any] | None:
        if line == "{":  # a top-level start; an unfinished object before it was cut off
            if self._lines:
                self.noise.append("\n".join(self._lines))
            self._lines = [line]
            return None
        if self._lines is None:
            if line.strip():
                self.noise.append(line)
            return None
        self._lines.append(line)
        if line != "}":
            return None
        lines, self._lines = self._lines, None
        return self._parse(lines)

    def _parse(self, lines: list[str]) -> dict[str, Any] | None:
        for candidate in (lines, [x for x in lines if x[:1] in (" ", "{", "}")]):
            try:
                found = json.loads("\n".join(candidate))
            except ValueError:
                continue
            if isinstance(found, dict):
                return found
        self.noise.append("\n".join(lines))
        return None


def _jobs(obj: dict[str, Any]) -> list[dict[str, Any]]:
    jobs = obj.get("jobs")
    return [j for j in jobs if isinstance(j, dict)] if isinstance(jobs, list) else []


def totals(obj: dict[str, Any]) -> Counters:
    """Bytes and I/Os of all jobs (trims count as writes); never fio's KiB/s `bw`."""
    found = Counters()
    for job in _jobs(obj):
        for direction in DIRECTIONS:
            stats = job.get(direction) or {}
            moved, ops = int(stats.get("io_bytes", 0)), int(stats.get("total_ios", 0))
            if direction == "read":
                found.read_bytes += moved
                found.read_ops += ops
            else:
                found.write_bytes += moved
                found.write_ops += ops
    return found


def elapsed_s(obj: dict[str, Any]) -> float:
    """The longest job's runtime: jobs run side by side."""
    return max((float(j.get("job_runtime", 0)) for j in _jobs(obj)), default=0.0) / 1000


def latency_us(obj: dict[str, Any], direction: str) -> tuple[float | None, float | None]:
    """Completion latency p50 and p99 in microseconds over all jobs.

    Exact for one job. For several, the jobs' percentile points are mixed weighted by their
    I/O counts: the smallest latency where the mixture reaches the percentile.
    """
    curves: list[tuple[int, list[tuple[float, float]]]] = []
    for job in _jobs(obj):
        clat = (job.get(direction) or {}).get("clat_ns") or {}
        points = clat.get("percentile") or {}
        if clat.get("N") and points:
            curve = sorted((float(ns), float(pct)) for pct, ns in points.items())
            curves.append((int(clat["N"]), curve))
    if not curves:
        return None, None
    weight = sum(n for n, _ in curves)

    def mixed(at_ns: float) -> float:
        return sum(n * max((p for ns, p in c if ns <= at_ns), default=0.0) for n, c in curves)

    candidates = sorted({ns for _, curve in curves for ns, _ in curve})

    def percentile(pct: float) -> float | None:
        for ns in candidates:
            if mixed(ns) >= pct * weight - 1e-9:
                return ns / 1000
        return None

    return percentile(50.0), percentile(99.0)


def errno_of(obj: dict[str, Any]) -> int:
    """The first job's non-zero error (an errno), else 0."""
    return next((int(j.get("error") or 0) for j in _jobs(obj) if j.get("error")), 0)


def error_of(obj: dict[str, Any]) -> str | None:
    """The first job error as text, or None."""
    for job in _jobs(obj):
        code = int(job.get("error") or 0)
        if code:
            return f"{os.strerror(code)} (errno {code}, job {job.get('jobname', '?')})"
    return None

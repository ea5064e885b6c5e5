"""A host's completion latency per interval in a group run, from the histogram logs its
`fio --client` receives (docs/protocol.md, "Group runs"; found with fio 3.33).

A job with `write_hist_log` and `log_hist_msec` keeps its cumulative clat histogram at the end
of every window. In client mode its server sends them when the JOB ENDS (nothing arrives
live), and the client writes `<prefix>_clat_hist.<job number>.log.<server>` in its working
directory: one line per window and direction, `msec, ddir, bs, count, count, ...`, a count
per 2^`log_hist_coarseness` of fio's fine buckets. At coarseness 4 a count is one bucket of
the wire's grid (model/latency.py: fio's buckets 16 at a time), so the logs map onto it as
they are.

fio 3.33's server turns each window's histogram into a difference IN PLACE, against the
window before it, which it has itself already turned into one: line k holds
c_k - x_(k-1) (c: cumulative, x: the line written), so a window's own counts are
x_k - x_(k-2). A fio that sends true differences reads negative somewhere under that rule:
its lines are then taken as they are.
fio logs whole windows only: the I/Os after a job's last window (less than one window) are in
its results but in no interval (fio issue #490).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from stripewise.model.latency import (
    GRID_BUCKETS,
    PERCENTILES,
    WIRE_MERGE,
    IntervalLatency,
    LatencyBuckets,
    grid_edge_us,
)

HIST_PREFIX = "stripewise"
COARSENESS = 4  # 2^4 = WIRE_MERGE fine buckets a count: one bucket of the wire's grid
FIO_PLAT_NR = 1856  # fio's fine buckets (FIO_IO_U_PLAT_NR, 29 groups of 64)
_NAME = re.compile(rf"{HIST_PREFIX}_clat_hist\.(\d+)\.log(?:\..*)?")
_READ, _WRITE = 0, 1
_Counts = tuple[int, ...]


def job_options(period_ms: int) -> list[str]:
    """The options that make every job log its latency histogram each `period_ms`."""
    return [
        f"write_hist_log={HIST_PREFIX}",
        f"log_hist_msec={period_ms}",
        f"log_hist_coarseness={COARSENESS}",
    ]


@dataclass(frozen=True)
class Window:
    """One window of one section on one host, its streams and directions summed: its end in
    ms since the section's jobs started, its length, its I/Os and their counts on the grid
    (index 0 up)."""

    end_ms: int
    span_ms: int
    read_ios: int
    write_ios: int
    counts: _Counts

    @property
    def latency(self) -> IntervalLatency | None:
        return grid_percentiles(self.counts)

    @property
    def histogram(self) -> LatencyBuckets | None:
        return grid_buckets(self.counts)


def log_files(directory: Path) -> dict[int, Path]:
    """The histogram logs the client has written so far, by fio's job number (1 up)."""
    found = {}
    for path in directory.iterdir() if directory.is_dir() else ():
        named = _NAME.fullmatch(path.name)
        if named:
            found[int(named[1])] = path
    return found


def read_log(text: str) -> list[tuple[int, int, _Counts]] | None:
    """A log's lines as (ms, direction, grid counts); None for a log cut short (still being
    written, or a line that is not fio's)."""
    if text and not text.endswith("\n"):
        return None
    lines = []
    for line in text.splitlines():
        fields = line.split(",")
        try:
            ms, direction = int(fields[0]), int(fields[1])
            fine = [int(value) for value in fields[3:]]
        except (ValueError, IndexError):
            return None
        counts = _on_grid(fine)
        if counts is None:
            return None
        lines.append((ms, direction, counts))
    return lines


def _on_grid(values: list[int]) -> _Counts | None:
    """A line's counts as the grid's buckets, whatever coarseness up to 4 it was written at."""
    if not values or FIO_PLAT_NR % len(values):
        return None
    stride = FIO_PLAT_NR // len(values)  # fine buckets per count
    if WIRE_MERGE % stride:
        return None
    per_bucket = WIRE_MERGE // stride
    return tuple(
        sum(values[start : start + per_bucket]) for start in range(0, len(values), per_bucket)
    )


def own_counts(lines: Sequence[_Counts]) -> list[_Counts]:
    """One direction's lines of one job as each window's own counts (the rule above)."""
    decoded, before, two_before = [], None, None
    for line in lines:
        if two_before is None:
            decoded.append(line)
        else:
            own = tuple(a - b for a, b in zip(line, two_before, strict=True))
            if min(own) < 0:  # not 3.33's form: the lines are the windows' own counts
                return list(lines)
            decoded.append(own)
        before, two_before = line, before
    return decoded


def section_windows(logs: Iterable[list[tuple[int, int, _Counts]]]) -> tuple[Window, ...]:
    """A section's windows from its jobs' (streams') logs: the k-th window of every job and
    direction summed (jobs of a section start together, `stonewall`)."""
    ends: dict[int, int] = {}
    reads: dict[int, int] = {}
    writes: dict[int, int] = {}
    sums: dict[int, list[int]] = {}
    for lines in logs:
        by_direction: dict[int, list[tuple[int, _Counts]]] = {}
        for ms, direction, counts in lines:
            by_direction.setdefault(direction, []).append((ms, counts))
        for direction, timed in by_direction.items():
            own = own_counts([counts for _ms, counts in timed])
            for k, ((ms, _raw), counts) in enumerate(zip(timed, own, strict=True)):
                ends[k] = max(ends.get(k, 0), ms)
                total = sum(counts)
                if direction == _READ:
                    reads[k] = reads.get(k, 0) + total
                elif direction == _WRITE:
                    writes[k] = writes.get(k, 0) + total
                into = sums.setdefault(k, [0] * len(counts))
                for index, count in enumerate(counts):
                    into[index] += count
    windows, previous = [], 0
    for k in sorted(sums):
        windows.append(
            Window(ends[k], ends[k] - previous, reads.get(k, 0), writes.get(k, 0), tuple(sums[k]))
        )
        previous = ends[k]
    return tuple(windows)


def summed(counts: Iterable[_Counts]) -> _Counts:
    """Histograms of one tick added up bucket by bucket (the hosts' together)."""
    total: list[int] = []
    for one in counts:
        if len(one) > len(total):
            total += [0] * (len(one) - len(total))
        for index, count in enumerate(one):
            total[index] += count
    return tuple(total)


def grid_percentiles(counts: Sequence[int]) -> IntervalLatency | None:
    """p50, p99, p99.9 in microseconds read from grid counts (the middle of the bucket the
    rank falls in, the rank as the helper's: round(share x (n - 1))); None without I/O."""
    total = sum(counts)
    if total == 0:
        return None
    figures = []
    for share in PERCENTILES.values():
        rank, seen = min(total - 1, round(share * (total - 1))), 0
        for index, count in enumerate(counts):
            seen += count
            if seen > rank:
                figures.append(round((grid_edge_us(index) + grid_edge_us(index + 1)) / 2, 3))
                break
    return IntervalLatency(*figures)


def grid_buckets(counts: Sequence[int]) -> LatencyBuckets | None:
    """The counts from the first bucket with an I/O to the last, with their edges."""
    used = [index for index, count in enumerate(counts[:GRID_BUCKETS]) if count]
    if not used:
        return None
    first, last = used[0], used[-1]
    edges = tuple(grid_edge_us(index) for index in range(first, last + 2))
    return LatencyBuckets(edges, tuple(counts[first : last + 1]))

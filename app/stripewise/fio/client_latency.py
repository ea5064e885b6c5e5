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

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

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
Table = npt.NDArray[np.int64]  # a log's lines: ms, direction, then the grid's counts


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
    ms since the section's jobs started, its length, its I/Os, their counts on the grid
    (index 0 up) and the percentiles read from them."""

    end_ms: int
    span_ms: int
    read_ios: int
    write_ios: int
    counts: _Counts
    latency: IntervalLatency | None

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


def read_log(text: str) -> Table | None:
    """A log's lines as a table (ms, direction, the grid's counts); None for a log cut short
    (still being written) or lines that are not fio's. Read whole by numpy: a 2-hour phase at
    2 Hz is 14,400 lines of 119 numbers."""
    lines = text.splitlines()
    if not lines:
        return np.zeros((0, 2), dtype=np.int64)
    width = lines[0].count(",") + 1
    if not text.endswith("\n") or width < 4 or any(line.count(",") != width - 1 for line in lines):
        return None
    try:
        table = np.array(text.replace(",", " ").split(), dtype=np.int64)
    except ValueError:
        return None
    table = table.reshape(len(lines), width)
    counts = _on_grid(table[:, 3:])
    if counts is None:
        return None
    return np.hstack([table[:, :2], counts])


def _on_grid(values: Table) -> Table | None:
    """Counts as the grid's buckets, whatever coarseness up to 4 they were written at."""
    columns = values.shape[1]
    if FIO_PLAT_NR % columns or WIRE_MERGE % (FIO_PLAT_NR // columns):
        return None
    per_bucket = WIRE_MERGE // (FIO_PLAT_NR // columns)  # counts per bucket of the grid
    merged: Table = values.reshape(len(values), columns // per_bucket, per_bucket).sum(axis=2)
    return merged


def own_counts(lines: npt.ArrayLike) -> Table:
    """One direction's lines of one job (a row each) as each window's own counts (the rule
    above)."""
    sent = np.asarray(lines, dtype=np.int64)
    own = sent.copy()
    own[2:] -= sent[:-2]
    return sent if (own < 0).any() else own  # negative: not 3.33's form, taken as they are


def section_windows(logs: Iterable[Table]) -> tuple[Window, ...]:
    """A section's windows from its jobs' (streams') logs: the k-th window of every job and
    direction summed (jobs of a section start together, `stonewall`)."""
    parts = []  # (direction, ms of each window, own counts of each window)
    for table in logs:
        for direction in np.unique(table[:, 1]):
            lines = table[table[:, 1] == direction]
            parts.append((int(direction), lines[:, 0], own_counts(lines[:, 2:])))
    if not parts:
        return ()
    count = max(len(ms) for _d, ms, _c in parts)
    ends = np.zeros(count, dtype=np.int64)
    ios = {_READ: np.zeros(count, dtype=np.int64), _WRITE: np.zeros(count, dtype=np.int64)}
    sums = np.zeros((count, max(c.shape[1] for _d, _m, c in parts)), dtype=np.int64)
    for direction, ms, counts in parts:
        rows = len(ms)
        ends[:rows] = np.maximum(ends[:rows], ms)
        if direction in ios:
            ios[direction][:rows] += counts.sum(axis=1)
        sums[:rows, : counts.shape[1]] += counts
    spans = np.diff(ends, prepend=0)
    figures = percentiles(sums)
    return tuple(
        Window(int(ends[k]), int(spans[k]), int(ios[_READ][k]), int(ios[_WRITE][k]),
               tuple(sums[k].tolist()), figures[k])
        for k in range(count)
    )  # fmt: skip


@functools.cache
def _middles_us(buckets: int) -> npt.NDArray[np.float64]:
    edges = np.array([grid_edge_us(index) for index in range(buckets + 1)])
    middles: npt.NDArray[np.float64] = (edges[:-1] + edges[1:]) / 2
    return middles


def percentiles(counts: npt.ArrayLike) -> list[IntervalLatency | None]:
    """p50, p99, p99.9 in microseconds of each row of grid counts (the middle of the bucket
    the rank falls in, the rank fio's and the helper's: the first bucket where the I/Os
    counted reach share x n); None for a row without I/O."""
    rows = np.atleast_2d(np.asarray(counts, dtype=np.int64))
    totals = rows.sum(axis=1)
    running = np.cumsum(rows, axis=1)
    middles = _middles_us(rows.shape[1])
    figures = []
    for share in PERCENTILES.values():
        # fio_rank row by row, in fio's own long double (model.latency.fio_rank: exact)
        percent = np.longdouble(round(share * 100, 6))
        ranks = np.maximum(1, np.ceil(percent / np.longdouble(100) * totals))
        figures.append(middles[(running >= ranks[:, None]).argmax(axis=1)].round(3))
    return [
        IntervalLatency(float(p50), float(p99), float(p999)) if total else None
        for total, p50, p99, p999 in zip(totals, *figures, strict=True)
    ]


def grid_buckets(counts: Sequence[int]) -> LatencyBuckets | None:
    """The counts from the first bucket with an I/O to the last, with their edges."""
    used = [index for index, count in enumerate(counts[:GRID_BUCKETS]) if count]
    if not used:
        return None
    first, last = used[0], used[-1]
    edges = tuple(grid_edge_us(index) for index in range(first, last + 2))
    return LatencyBuckets(edges, tuple(counts[first : last + 1]))

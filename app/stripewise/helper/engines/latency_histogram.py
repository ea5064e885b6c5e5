"""Per-I/O latencies of a whole phase in a log-linear histogram, as fio keeps them.

Every I/O is counted (no reservoir, no sampling): a value below 64 ns has its own bucket, above
that each power of two is split into 64 buckets, so a percentile read back is within 1/128 of
the true value (fio's FIO_IO_U_PLAT_BITS=6 scheme). Workers append nanoseconds to a plain list,
the cheapest thing Python does per I/O, and the list is folded into the counts in bulk.
"""

from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt

from stripewise.model.latency import (
    SUB_BITS,
    WIRE_MERGE,
    fio_rank,
    grid_edge_us,
    lower_bound,
)

_SUB_BITS = SUB_BITS
_SUB = 1 << _SUB_BITS  # buckets per power of two
_MAX_EXPONENT = 48  # 2^48 ns is 3 days: longer latencies share the last bucket
BUCKETS = _SUB + (_MAX_EXPONENT - _SUB_BITS + 1) * _SUB
FOLD_EVERY = 8192  # values kept in the list before they are folded into the counts


def bucket_of(nanoseconds: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The bucket index of each value (negative values count as 0)."""
    values = np.clip(nanoseconds, 0, (1 << (_MAX_EXPONENT + 1)) - 1)
    _mantissa, bits = np.frexp(values.astype(np.float64))  # bits = bit_length, exact < 2^53
    bits = bits.astype(np.int64)
    shift = np.maximum(bits - 1 - _SUB_BITS, 0)
    # for bits > 6: (bits - 6) * 64 + the top 6 bits after the leading one
    large = (bits - _SUB_BITS) * _SUB + ((values >> shift) & (_SUB - 1))
    return np.where(values < _SUB, values, large)


def representative(bucket: int) -> float:
    """The middle of the bucket's range: what a percentile falling in it reads as."""
    low, high = lower_bound(bucket), lower_bound(bucket + 1)
    return (low + high - 1) / 2


def counts_of(values_ns: dict[int, int]) -> npt.NDArray[np.int64]:
    """{a value in ns: I/Os} (fio's bins, each its bucket's middle) as fine-bucket counts."""
    counts = np.zeros(BUCKETS, dtype=np.int64)
    if values_ns:
        buckets = bucket_of(np.fromiter(values_ns, dtype=np.int64, count=len(values_ns)))
        np.add.at(counts, buckets, np.fromiter(values_ns.values(), dtype=np.int64))
    return counts


def percentile_of(counts: npt.NDArray[np.int64], share: float) -> float | None:
    """The value at `share` (0..1) of the I/Os counted in `counts` in microseconds; None
    without any. fio's rank (stat.c, calc_clat_percentiles): the first bucket where the I/Os
    counted so far reach share x n, so the built-in engine's figures and fio's mean the same."""
    total = int(counts.sum())
    if total == 0:
        return None
    bucket = int(np.searchsorted(np.cumsum(counts), fio_rank(share, total)))
    return representative(bucket) / 1000.0


def wire_buckets(counts: npt.NDArray[np.int64]) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """The counts on the wire's grid (model/latency.py: WIRE_MERGE fine buckets a bucket), from
    the first bucket with an I/O to the last: (edges in microseconds, one more; counts); the
    interval's percentiles are read from the fine counts."""
    merged = counts.reshape(-1, WIRE_MERGE).sum(axis=1)
    used = np.flatnonzero(merged)
    if used.size == 0:
        return (), ()
    first, last = int(used[0]), int(used[-1])
    edges = tuple(grid_edge_us(index) for index in range(first, last + 2))
    return edges, tuple(int(c) for c in merged[first : last + 1])


class LatencyHistogram:
    """Counts of one phase's I/O times; `values` is the list a worker appends to. The sampler
    reads it from its own thread (`snapshot`): folding and reading hold a lock, appending does
    not (a list's append and copy are each atomic), so a worker pays for it once a fold."""

    def __init__(self) -> None:
        self.values: list[int] = []
        self.counts = np.zeros(BUCKETS, dtype=np.int64)
        self._lock = threading.Lock()

    def fold(self) -> None:
        """Move the appended values into the counts (call from the worker that appends)."""
        if self.values:
            with self._lock:
                buckets = bucket_of(np.asarray(self.values, dtype=np.int64))
                self.counts += np.bincount(buckets, minlength=BUCKETS)
                self.values.clear()

    def snapshot(self) -> npt.NDArray[np.int64]:
        """Every I/O counted so far, folded or not: safe while a worker appends and folds."""
        with self._lock:
            counts = self.counts.copy()
            pending = list(self.values)
        if pending:
            counts += np.bincount(bucket_of(np.asarray(pending, dtype=np.int64)), minlength=BUCKETS)
        return counts

    def merge(self, other: LatencyHistogram) -> None:
        other.fold()
        self.fold()
        self.counts += other.counts

    @property
    def total(self) -> int:
        return int(self.counts.sum()) + len(self.values)

    def percentile_us(self, share: float) -> float | None:
        """The value at `share` (0..1) of all I/Os in microseconds; None without any I/O
        (fio's rank: `percentile_of`)."""
        self.fold()
        return percentile_of(self.counts, share)

"""The kernel's per-disk counters (/proc/diskstats) and what one interval of them says.

Fields after major, minor and name (Documentation/admin-guide/iostats.rst): reads completed,
merged, sectors read, ms reading, writes completed, merged, sectors written, ms writing, I/Os
in progress, ms doing I/O (io_ticks: busy time), weighted ms doing I/O (time_in_queue). Sectors
are 512 bytes whatever the device's block size. The millisecond fields are printed from 32-bit
counters, so a delta that went negative wrapped once.

Per interval, as iostat -x says them: `await_ms` is the ms the completed reads and writes spent
from submission to completion over their count (None when none completed), `queue_size`
(aqu-sz) the weighted ms over the interval's ms, `busy_pct` the busy ms over it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from stripewise.protocol.events import DiskLayer, DiskRates

SECTOR_BYTES = 512
_MS_WRAP = 2**32  # the kernel prints its millisecond counters from unsigned ints
_MAX_PROC = 2**22


@dataclass(frozen=True)
class DiskCounters:
    """One disk's cumulative counters at one moment."""

    read_count: int
    write_count: int
    read_bytes: int
    write_bytes: int
    read_time_ms: int
    write_time_ms: int
    busy_time_ms: int
    queue_time_ms: int  # time_in_queue: each ms counted once per I/O in flight


@dataclass(frozen=True)
class IntervalFigures:
    """What a disk did between two readings (decimal MB/s)."""

    read_mb_s: float
    write_mb_s: float
    read_iops: float
    write_iops: float
    busy_pct: float
    await_ms: float | None
    queue_size: float


def parse(text: str, wanted: Collection[str]) -> dict[str, DiskCounters]:
    """The counters of the wanted disks found in /proc/diskstats' text."""
    found: dict[str, DiskCounters] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 14 or fields[2] not in wanted:
            continue
        try:
            reads, _, read_sectors, read_ms, writes, _, write_sectors, write_ms = (
                int(value) for value in fields[3:11]
            )
            busy_ms, queue_ms = int(fields[12]), int(fields[13])
        except ValueError:
            continue
        found[fields[2]] = DiskCounters(
            reads,
            writes,
            read_sectors * SECTOR_BYTES,
            write_sectors * SECTOR_BYTES,
            read_ms,
            write_ms,
            busy_ms,
            queue_ms,
        )
    return found


def read(wanted: Collection[str], path: str = "/proc/diskstats") -> dict[str, DiskCounters]:
    """The wanted disks' counters now (a disk gone since is left out)."""
    if not wanted:
        return {}
    with open(path, "rb") as handle:
        return parse(handle.read(_MAX_PROC).decode(errors="replace"), wanted)


def _ms(before: int, after: int) -> int:
    delta = after - before
    return delta + _MS_WRAP if delta < 0 else delta


def interval(before: DiskCounters, after: DiskCounters, dt: float) -> IntervalFigures:
    """The figures of `dt` seconds between two readings of one disk."""
    completed = (after.read_count - before.read_count) + (after.write_count - before.write_count)
    waited_ms = _ms(before.read_time_ms, after.read_time_ms)
    waited_ms += _ms(before.write_time_ms, after.write_time_ms)
    interval_ms = dt * 1000.0
    busy_pct = 100.0 * _ms(before.busy_time_ms, after.busy_time_ms) / interval_ms
    return IntervalFigures(
        round((after.read_bytes - before.read_bytes) / dt / 1e6, 3),
        round((after.write_bytes - before.write_bytes) / dt / 1e6, 3),
        round((after.read_count - before.read_count) / dt, 1),
        round((after.write_count - before.write_count) / dt, 1),
        round(min(100.0, max(0.0, busy_pct)), 1),
        round(waited_ms / completed, 3) if completed > 0 else None,
        round(_ms(before.queue_time_ms, after.queue_time_ms) / interval_ms, 2),
    )


def rates(
    before: DiskCounters, after: DiskCounters, dt: float, layer: DiskLayer | None
) -> DiskRates:
    """A sample's figures for one disk: the interval's, with the disk's place among the run's
    layers when known."""
    f = interval(before, after, dt)
    role, under, depth = (layer.role, layer.under, layer.depth) if layer else (None, None, None)
    return DiskRates(
        f.read_mb_s, f.write_mb_s, f.read_iops, f.write_iops, f.busy_pct, role, under, depth,
        f.await_ms, f.queue_size,
    )  # fmt: skip

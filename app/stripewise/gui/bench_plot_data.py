"""What the live plots hold: a benchmark run's samples as growable numpy columns, its phases,
and running maxima. Nothing here draws; `bench_plots.LivePlots` hands views of the columns to
pyqtgraph when it refreshes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from stripewise.protocol.events import DiskRates, Sample

# Columns of the sample buffer; the CPU ones hold the cumulative top of each stacked band.
COLUMNS = (
    "t",
    "engine_read",
    "engine_write",
    "disk_read",
    "disk_write",
    "read_iops",
    "write_iops",
    "cpu_user",
    "cpu_system",
    "cpu_iowait",
    # running sums of the three CPU tops: the stacked areas' column means come from these
    "cpu_user_sum",
    "cpu_system_sum",
    "cpu_iowait_sum",
)
THROUGHPUT = ("engine_read", "engine_write", "disk_read", "disk_write")
IOPS = ("read_iops", "write_iops")
CPU = ("cpu_user", "cpu_system", "cpu_iowait")
SERIES = (*THROUGHPUT, *IOPS, *CPU)  # the names LivePlots.series() knows
_NICE_STEPS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


class Columns:
    """Named float64 columns that grow by doubling: O(1) amortised appends, and a column is a
    contiguous view of the live data, never a copy."""

    def __init__(self, names: Sequence[str], capacity: int = 1024) -> None:
        self._index = {name: i for i, name in enumerate(names)}
        self._data = np.empty((len(names), capacity))
        self.size = 0

    def reserve(self, extra: int) -> None:
        needed = self.size + extra
        capacity = self._data.shape[1]
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        grown = np.empty((self._data.shape[0], capacity))
        grown[:, : self.size] = self._data[:, : self.size]
        self._data = grown

    def append(self, row: Sequence[float]) -> None:
        self.reserve(1)
        self._data[:, self.size] = row
        self.size += 1

    def column(self, name: str) -> np.ndarray:
        return self._data[self._index[name], : self.size]

    def last(self, name: str) -> float:
        return float(self._data[self._index[name], self.size - 1])

    def clear(self) -> None:
        self.size = 0


@dataclass
class Phase:
    label: str
    start: float
    has_samples: bool = False


class RunData:
    """One run's samples and phases on one continuous time axis (seconds since it began)."""

    def __init__(self) -> None:
        self.columns = Columns(COLUMNS)
        self.phases: list[Phase] = []  # shared with the backdrops, which draw a band each
        self._t_offset = 0.0  # added to t_s once the sampler's clock was seen to restart
        self._last_cpu = (0.0, 0.0, 0.0)
        self._cpu_sums = (0.0, 0.0, 0.0)
        self._peaks = dict.fromkeys((*THROUGHPUT, *IOPS), math.nan)  # running maxima
        self._peaks_upto = 0

    def clear(self) -> None:
        """Forget everything: a new run starts."""
        self.columns.clear()
        self.phases.clear()  # in place: the backdrops hold this list
        self._t_offset = 0.0
        self._last_cpu = (0.0, 0.0, 0.0)
        self._cpu_sums = (0.0, 0.0, 0.0)
        self._peaks = dict.fromkeys(self._peaks, math.nan)
        self._peaks_upto = 0

    def begin_phase(self, label: str, t_s: float) -> float:
        """A phase starting at `t_s` on the sampler's clock; its start on the run's axis."""
        start = t_s + self._t_offset
        if self.phases:
            start = max(start, self.phases[-1].start)
        self.phases.append(Phase(label, start))
        return start

    def add_sample(self, sample: Sample) -> float | None:
        """Append one sample. When the sampler's clock restarted under a phase that has no
        samples yet, that phase moves to the end of the run so far: its new start is returned."""
        moved = None
        t = sample.t_s + self._t_offset
        if self.columns.size and t < self.columns.last("t"):
            t, moved = self._restart_clock(t - self._t_offset)
        disk_read, disk_write = disk_sums(sample.disks)
        cpu = self._cpu_stack(sample.cpu)
        sums = self._cpu_sums
        self._cpu_sums = (sums[0] + cpu[0], sums[1] + cpu[1], sums[2] + cpu[2])
        self.columns.append(
            (
                t,
                sample.engine_read_mb_s,
                sample.engine_write_mb_s,
                disk_read,
                disk_write,
                sample.engine_read_iops,
                sample.engine_write_iops,
                *cpu,
                *self._cpu_sums,
            )
        )
        if self.phases:
            self.phases[-1].has_samples = True
        return moved

    def _restart_clock(self, raw_t: float) -> tuple[float, float | None]:
        """A t_s that runs backwards means the sampler's clock restarted with a new phase
        (one sampler per phase): continue after the last sample instead of drawing backwards."""
        last = self.columns.last("t")
        self._t_offset = last
        phase = self.phases[-1] if self.phases else None
        moved = None
        if phase is not None and not phase.has_samples:  # begun on the old clock: move it here
            phase.start = moved = last
        return raw_t + last, moved

    def _cpu_stack(self, cpu: Mapping[str, float] | None) -> tuple[float, float, float]:
        """Cumulative tops of the user, system and iowait bands; a sample without a CPU split
        (too short an interval) repeats the previous one instead of dropping to zero."""
        if cpu:
            user = cpu.get("user", 0.0)
            system = user + cpu.get("system", 0.0)
            self._last_cpu = (user, system, system + cpu.get("iowait", 0.0))
        return self._last_cpu

    # --- maxima ----------------------------------------------------------------------------
    def update_peaks(self) -> None:
        """Fold the samples added since the last call into the running maxima."""
        size = self.columns.size
        for name, peak in self._peaks.items():
            chunk = self.columns.column(name)[self._peaks_upto : size]
            if len(chunk):
                self._peaks[name] = float(np.fmax(peak, np.fmax.reduce(chunk)))
        self._peaks_upto = size

    def peak(self, name: str) -> float:
        """The highest value of a throughput or IOPS column so far (NaN: none yet), as of the
        last update_peaks()."""
        return self._peaks[name]

    def peak_between(self, name: str, left: float, right: float) -> float:
        """The highest value of column `name` with left <= t < right (NaN: none)."""
        lo, hi = np.searchsorted(self.columns.column("t"), (left, right))
        chunk = self.columns.column(name)[lo:hi]
        return float(np.fmax.reduce(chunk)) if len(chunk) else math.nan


def disk_sums(disks: Mapping[str, DiskRates]) -> tuple[float, float]:
    """Kernel counters summed over the disks; NaN (no line) when the sample has none."""
    if not disks:
        return math.nan, math.nan
    read = sum(d.read_mb_s for d in disks.values())
    write = sum(d.write_mb_s for d in disks.values())
    return read, write


def nice_ceiling(value: float) -> float:
    """The smallest round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k) >= `value`."""
    if not math.isfinite(value) or value <= 0:
        return 1.0
    scale = 10.0 ** math.floor(math.log10(value))
    return next(step * scale for step in _NICE_STEPS if step * scale >= value * (1 - 1e-12))

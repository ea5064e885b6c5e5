"""What the live plots hold: a benchmark run's samples as growable numpy columns, its phases,
and running maxima. Nothing here draws; `bench_plots.LivePlots` hands views of the columns to
pyqtgraph when it refreshes.

The disk lines measure one layer of the devices under the target, never a sum across layers:
a loop device and the disk under its backing file move the same bytes, so adding them up
doubles them. They show the bottom layer (`bottom_layer`): the disks nothing sampled sits
under, e.g. an md array's members or the disk under a loop device's file, summed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from stripewise.protocol.events import DiskLayer, DiskRates, Sample

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
    shorter: tuple[str, ...] = ()  # the label shortened, for a narrow band: longest first


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
        self._layout: tuple[tuple[str, str | None], ...] | None = None  # disks, what above
        self._bottom: tuple[str, ...] = ()
        self.disk_layer = ""  # what the disk lines measure, e.g. "vda, under loop0"

    def clear(self) -> None:
        """Forget everything: a new run starts."""
        self.columns.clear()
        self.phases.clear()  # in place: the backdrops hold this list
        self._t_offset = 0.0
        self._last_cpu = (0.0, 0.0, 0.0)
        self._cpu_sums = (0.0, 0.0, 0.0)
        self._peaks = dict.fromkeys(self._peaks, math.nan)
        self._peaks_upto = 0
        self._layout, self._bottom, self.disk_layer = None, (), ""

    def begin_phase(self, label: str, t_s: float, shorter: tuple[str, ...] = ()) -> float:
        """A phase starting at `t_s` on the sampler's clock; its start on the run's axis."""
        start = t_s + self._t_offset
        if self.phases:
            start = max(start, self.phases[-1].start)
        self.phases.append(Phase(label, start, shorter=shorter))
        return start

    def add_sample(self, sample: Sample) -> float | None:
        """Append one sample. When the sampler's clock restarted under a phase that has no
        samples yet, that phase moves to the end of the run so far: its new start is returned."""
        moved = None
        t = sample.t_s + self._t_offset
        if self.columns.size and t < self.columns.last("t"):
            t, moved = self._restart_clock(t - self._t_offset)
        disk_read, disk_write = self._disk_sums(sample.disks)
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

    def _disk_sums(self, disks: Mapping[str, DiskRates]) -> tuple[float, float]:
        """The bottom layer's rates; what it is is worked out again only when the disks or
        their places change (they do not within a run)."""
        layout = tuple((name, rates.under) for name, rates in disks.items())
        if layout != self._layout:
            self._layout = layout
            self._bottom = bottom_layer(disks)
            self.disk_layer = layer_text(self._bottom, disks)
        return disk_sums({name: disks[name] for name in self._bottom})

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


def bottom_layer(disks: Mapping[str, DiskRates]) -> tuple[str, ...]:
    """The disks nothing else of the sample sits under: the lowest layer, where the bytes
    reach the hardware (all of them when the helper said nothing of layers)."""
    above = {rates.under for rates in disks.values()}
    return tuple(name for name in disks if name not in above)


def layer_text(names: Sequence[str], disks: Mapping[str, DiskRates]) -> str:
    """What a line over `names` measures: "vda, under loop0", "sdb + sdc, under md0", "8
    disks under md0"; a top-level device alone is just its name."""
    if not names:
        return ""
    unders = {disks[name].under for name in names}
    listed = " + ".join(names) if len(names) <= 3 else f"{len(names)} disks"
    if len(unders) > 1:  # at the bottom of different stacks
        return f"{listed} at the bottom"
    [under] = unders
    if under is None:
        return listed
    return f"{listed}, under {under}" if len(names) <= 3 else f"{listed} under {under}"


def describe_layers(layers: Sequence[DiskLayer]) -> str:
    """The devices under a target in words, top first: "loop0 on vda", "md0 on sdb, sdc" (an
    md or dm device is named by its members' `under`: it is not sampled itself)."""
    names = {layer.name for layer in layers}
    below: dict[str | None, list[str]] = {}
    for layer in layers:
        below.setdefault(layer.under, []).append(layer.name)

    def stack(name: str, depth: int) -> str:
        parts = [stack(child, depth + 1) for child in below.get(name, ())] if depth < 8 else []
        return f"{name} on {', '.join(parts)}" if parts else name

    tops = [*below.get(None, ()), *(u for u in below if u is not None and u not in names)]
    return "; ".join(stack(top, 0) for top in tops)


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

"""Live samples during a benchmark: engine counters, the kernel's per-disk counters, system CPU.

Every figure is a delta between two readings divided by the time between them, so an engine's
own notion of its rate is never trusted: the kernel's counters over the wall clock, the
engine's byte counts over the wall clock or, for an engine that reports in steps (fio), over its
own runtime at those reports (`Sampler`). Rates are decimal (bytes / 1e6 / s).

The disks are kept as layers (`layers_under`): a loop device and the disk its backing file is
on, an md or dm device's members (the device itself is not sampled), each with its place, so
nobody adds up a layer and the one under it.

CPU "busy" is user + nice + system + irq + softirq: bonnie++'s user+system plus the interrupt
work the kernel does for the I/O. iowait is idle time (a CPU waiting for nothing but a disk) and
steal is time the hypervisor took, so neither counts. Percentages are of the whole machine
(100 = every core busy), read from /proc/stat, never the benchmark's own rusage.
"""

from __future__ import annotations

import collections
import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import psutil

from stripewise.helper.engines.base import Counters, Progress
from stripewise.helper.resolve import mount_of, mount_source, open_loop_backing
from stripewise.helper.sysfs_files import read_attribute
from stripewise.model.bench import Phase
from stripewise.protocol.events import DiskLayer, DiskRates, Sample
from stripewise.system.mounts import device_name

_MAX_DEPTH = 8  # loop on a file on dm on loop ...: stop before a cycle can hurt
_ETA_WINDOW_S = 2.0  # the "current" rate behind the ETA: long enough to be steady
_SHORTEST = 0.9  # of a period: the shortest span a rate is taken over (clocks jitter by ms)
_POLL_S = 0.01  # how often to look for a stepped engine's next report
_MIN_DIVISOR_S = 1e-3  # a phase shorter than this is timed as this long


@dataclass(frozen=True)
class SampledPhase:
    """Which run, phase and repetition a sampler's samples belong to (they name it)."""

    run: str
    phase: Phase
    repetition: int


class _DiskCounters(Protocol):
    """One disk's counters as psutil.disk_io_counters gives them (busy_time: Linux only)."""

    @property
    def read_bytes(self) -> int: ...
    @property
    def write_bytes(self) -> int: ...
    @property
    def read_count(self) -> int: ...
    @property
    def write_count(self) -> int: ...


def _whole_disk(devno: int) -> str | None:
    """MAJ:MIN -> kernel name, a partition replaced by the disk it lives on."""
    link = f"/sys/dev/block/{os.major(devno)}:{os.minor(devno)}"
    if not os.path.exists(link):
        return None
    real = os.path.realpath(link)
    if os.path.exists(f"{real}/partition"):
        real = os.path.dirname(real)
    return os.path.basename(real)


def _known(found: list[DiskLayer], name: str) -> bool:
    return any(layer.name == name for layer in found)


def _collect(name: str, found: list[DiskLayer], role: str, under: str | None, depth: int) -> None:
    """The device, or what it is built on. An md or dm device stands for its slaves (each a
    `member` under it: their counters are what the hardware did, the array's would only
    repeat the engine's); a loop device is kept, with its backing file's disks (`backing`,
    under it) after it, since the file may be cached on its way to them."""
    if depth > _MAX_DEPTH or _known(found, name):
        return
    base = f"/sys/class/block/{name}"
    try:
        slaves = sorted(os.listdir(f"{base}/slaves"))
    except OSError:
        slaves = []
    for slave in slaves:
        number = read_attribute(f"{base}/slaves/{slave}/dev")
        if number and ":" in number:
            major, minor = number.split(":")
            disk = _whole_disk(os.makedev(int(major), int(minor)))
            if disk:
                _collect(disk, found, "member", name, depth + 1)
    if slaves:
        return
    found.append(DiskLayer(name, role, under, depth))
    fd = open_loop_backing(name)
    if fd is not None:
        try:
            _collect_devno(os.fstat(fd).st_dev, fd, found, "backing", name, depth + 1)
        finally:
            os.close(fd)


def _anonymous_source(fd: int) -> list[str]:
    """Filesystems on anonymous device numbers (btrfs, tmpfs): the device their mount names."""
    fields = mount_of(fd)
    name = device_name(mount_source(fields)) if fields else None
    if name is None or not os.path.isdir(f"/sys/class/block/{name}"):
        return []
    found = [name]
    with contextlib.suppress(OSError):  # a multi-device btrfs lists all its members
        for fs in os.listdir("/sys/fs/btrfs"):
            members = f"/sys/fs/btrfs/{fs}/devices"
            if os.path.isdir(members) and name in os.listdir(members):
                found += [m for m in sorted(os.listdir(members)) if m not in found]
    return found


def _collect_devno(
    devno: int, fd: int, found: list[DiskLayer], role: str, under: str | None, depth: int
) -> None:
    """The devices a filesystem or device number stands on; a multi-device filesystem's
    devices are peers, each in the same place."""
    if os.major(devno) == 0:
        for name in _anonymous_source(fd):
            _collect(
                _whole_disk(os.stat(f"/dev/{name}").st_rdev) or name, found, role, under, depth
            )
        return
    disk = _whole_disk(devno)
    if disk:
        _collect(disk, found, role, under, depth)


def layers_under(fd: int) -> tuple[DiskLayer, ...]:
    """The block devices under an open file, directory or block device, top first, each with
    its place (`DiskLayer`); empty for filesystems without one (tmpfs). A partition counts as
    its whole disk: the kernel's per-disk counters are the sampler's."""
    info = os.fstat(fd)
    found: list[DiskLayer] = []
    devno = info.st_rdev if stat.S_ISBLK(info.st_mode) else info.st_dev
    _collect_devno(devno, fd, found, "target", None, 0)
    return tuple(found)


def layers_of(name: str) -> tuple[DiskLayer, ...]:
    """`layers_under` for a block device known by its kernel name (an md array's members)."""
    found: list[DiskLayer] = []
    _collect(name, found, "target", None, 0)
    return tuple(found)


def disks_under(fd: int) -> tuple[str, ...]:
    """The kernel names of `layers_under(fd)`."""
    return tuple(layer.name for layer in layers_under(fd))


def resolve_layers(target: str) -> tuple[DiskLayer, ...]:
    """`layers_under` for a path the program itself chose (tests)."""
    fd = os.open(target, os.O_PATH | os.O_CLOEXEC)
    try:
        return layers_under(fd)
    finally:
        os.close(fd)


def resolve_disks(target: str) -> tuple[str, ...]:
    return tuple(layer.name for layer in resolve_layers(target))


def _cpu_split(before: Any, after: Any) -> dict[str, float] | None:
    """Percent of all CPUs between two psutil.cpu_times() readings (guest is inside user)."""
    fields = after._fields
    delta: dict[str, float] = {f: getattr(after, f) - getattr(before, f) for f in fields}
    total = sum(v for f, v in delta.items() if f not in ("guest", "guest_nice"))
    if total <= 0:
        return None

    def pct(*names: str) -> float:
        return round(100.0 * sum(delta.get(n, 0.0) for n in names) / total, 2)

    return {
        "user": pct("user", "nice"),
        "system": pct("system", "irq", "softirq"),
        "iowait": pct("iowait"),
        "idle": pct("idle"),
        "steal": pct("steal"),
    }


def _disk_rates(
    before: _DiskCounters, after: _DiskCounters, dt: float, layer: DiskLayer | None
) -> DiskRates:
    busy = getattr(after, "busy_time", None)  # Linux only
    busy_pct = None
    if busy is not None:
        busy_ms = busy - getattr(before, "busy_time", busy)
        busy_pct = round(min(100.0, max(0.0, busy_ms / (dt * 10.0))), 1)
    return DiskRates(
        round((after.read_bytes - before.read_bytes) / dt / 1e6, 3),
        round((after.write_bytes - before.write_bytes) / dt / 1e6, 3),
        round((after.read_count - before.read_count) / dt, 1),
        round((after.write_count - before.write_count) / dt, 1),
        busy_pct,
        layer.role if layer is not None else None,
        layer.under if layer is not None else None,
        layer.depth if layer is not None else None,
    )


@dataclass(frozen=True)
class _Reading:
    """What the sampler read at one moment: the wall clock, the kernel's disk and CPU counters."""

    t: float
    disks: dict[str, _DiskCounters]
    cpu: Any  # psutil's scputimes: its fields differ between kernels


@dataclass(frozen=True)
class _EngineAt:
    """The engine's counters at a point of its own clock (seconds since the phase began)."""

    engine_s: float
    counters: Counters


_START = _EngineAt(0.0, Counters())


# the engine's read and write MB/s (decimal), read and write IOPS: in Sample's order
_EngineRates = tuple[float, float, float, float]


def _engine_rates(since: _EngineAt, now: _EngineAt) -> _EngineRates:
    span = max(now.engine_s - since.engine_s, _MIN_DIVISOR_S)
    before, after = since.counters, now.counters
    return (
        round((after.read_bytes - before.read_bytes) / span / 1e6, 3),
        round((after.write_bytes - before.write_bytes) / span / 1e6, 3),
        round((after.read_ops - before.read_ops) / span, 1),
        round((after.write_ops - before.write_ops) / span, 1),
    )


_NO_RATES = _engine_rates(_START, _START)


class Sampler:
    """A thread that emits a sample about every 1/rate seconds, and a closing one at stop().

    No rate is taken over less than `_SHORTEST` of a period: a tick that comes too soon after
    the previous sample (a late tick before it) is skipped, and the closing sample reaches back
    over the previous sample's interval when the phase ends just after it. Only a phase shorter
    than a period gets a rate over less: all of it, in its one sample.

    Rates are taken on the engine's runtime, the clock its result is timed with. An engine that
    counts as it goes (the built-in one) runs from `Progress.begin()` to `end()`; one that never
    calls them runs on the sampler's clock from the phase's start. An engine that reports
    totals in steps (`Progress.update_period_s`, fio) gives its runtime with each, and a sample
    is emitted soon after a report came in, its rates from one report to another: fio's
    start-up and the delay of its output count for nothing, as in its result. Without a report
    for `_overdue_s` (a stalled engine), a sample says 0 so the view does not freeze.
    """

    def __init__(
        self,
        progress: Callable[[], Progress | None],
        disks: Sequence[str | DiskLayer],
        rate_hz: float,
        emit: Callable[[Sample], None],
        clock_zero: float | None = None,
        *,
        sampled: SampledPhase,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[threading.Event, float], bool] = threading.Event.wait,
    ) -> None:
        """`disks`: kernel names, or layers to say in each disk's entry. `clock_zero`: the
        run's start on `clock`, so `t_s` runs on across phases. `sampled`: the phase the
        samples are of. `clock` tells the time in
        seconds and `wait(stop, timeout)` sleeps until `stop` is set or the timeout has passed,
        saying whether it was set: tests pass a fake pair."""
        self._progress, self._emit, self._sampled = progress, emit, sampled
        self._layers: dict[str, DiskLayer | None] = {  # in order, with their place if known
            d.name if isinstance(d, DiskLayer) else d: d if isinstance(d, DiskLayer) else None
            for d in disks
        }
        self._clock_zero = clock_zero
        self._clock, self._wait = clock, wait
        self.period_s = 1.0 / rate_hz
        self._shortest_s = _SHORTEST * self.period_s
        self.samples = 0
        self.own_cpu_s = 0.0  # the sampler thread's CPU time: its cost, for the record
        self.error: BaseException | None = None  # an emit that failed stops nothing
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._phase_cpu: Any = None

    def start(self) -> None:
        self._started = self._clock()
        self._last = self._read(self._started)  # the first reading is only a baseline
        self._before: _Reading | None = None  # the one before the last sample's
        self._phase_cpu = self._last.cpu
        self._begin_phase(self._progress(), self._started)
        self._thread = threading.Thread(target=self._loop, name="stripewise-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop ticking and emit the closing sample: the phase's end, with its last rates."""
        self._stop.set()
        if self._thread is None:
            return
        self._thread.join()
        try:
            self._emit(self._closing())
            self.samples += 1
        except Exception as error:
            self.error = error

    def mark_phase(self) -> None:
        """Start the CPU average that cpu_busy_pct() reports (call as a phase starts)."""
        self._phase_cpu = psutil.cpu_times()

    def cpu_busy_pct(self) -> float | None:
        """Average busy percent of all CPUs since mark_phase() (or start)."""
        if self._phase_cpu is None:
            return None
        split = _cpu_split(self._phase_cpu, psutil.cpu_times())
        if split is None:
            return None
        return round(100.0 - split["idle"] - split["iowait"] - split["steal"], 2)

    # --- the thread -----------------------------------------------------------------------
    def _loop(self) -> None:
        due = self._started + self.period_s
        while not self._wait(self._stop, max(0.0, due - self._clock())):
            sample = None
            try:
                sample = self._tick()
                if sample is not None:
                    self.samples += 1
                    self._emit(sample)
            except Exception as error:  # a broken consumer must not kill the benchmark
                self.error = error
            self.own_cpu_s = time.thread_time()
            now = self._clock()
            if self._stepped is not None:  # follow the engine's reports: soon after each
                due = now + (self.period_s if sample is not None else _POLL_S)
                continue
            due += self.period_s
            if due < now:  # fell behind (suspended host): skip, do not burst
                due = now + self.period_s

    def _read(self, now: float) -> _Reading:
        return _Reading(now, self._disk_counters(), psutil.cpu_times())

    def _disk_counters(self) -> dict[str, _DiskCounters]:
        if not self._layers:
            return {}
        counters = psutil.disk_io_counters(perdisk=True, nowrap=True) or {}
        return {name: counters[name] for name in self._layers if name in counters}

    # --- the engine's clock -----------------------------------------------------------------
    def _begin_phase(self, progress: Progress | None, now: float) -> None:
        """A new phase counts from zero: its clock, its rates and its ETA."""
        self._phase = progress
        self._phase_t0 = now
        self._stepped = progress.update_period_s if progress is not None else None
        self._base = _START  # where the next rate starts
        self._base_before: _EngineAt | None = None  # where the last one started
        self._seen: tuple[Counters, float] | None = None  # reports without a runtime
        self._window: collections.deque[tuple[float, int]] = collections.deque([(0.0, 0)])

    def _engine_now(self, now: float) -> _EngineAt | None:
        """The engine's counters on its own clock; None until it has begun (or, stepped, has
        reported moving anything)."""
        progress = self._progress()
        if progress is not self._phase:
            self._begin_phase(progress, now)
        if progress is None:
            return _EngineAt(now - self._phase_t0, Counters())
        counters, runtime_s = progress.reading()
        self._stepped = progress.update_period_s
        moved = counters.read_bytes + counters.write_bytes
        if not moved and (runtime_s is None or self._stepped is not None):
            return None  # fio's first report may come before its I/O, with a runtime of no use
        if self._stepped is None:
            if runtime_s is None:  # an engine that keeps no clock: the sampler's
                runtime_s = now - self._phase_t0
        elif not runtime_s:  # a report without the engine's clock: when it was first seen
            if self._seen is None or self._seen[0] != counters:
                self._seen = (counters, now - self._phase_t0)
            runtime_s = self._seen[1]
        if runtime_s < self._base.engine_s:  # a clock that ran back tells nothing new
            return None
        return _EngineAt(runtime_s, counters)

    def _overdue_s(self) -> float:
        return max(1.0, 1.5 * (self._stepped or 0.0), 1.5 * self.period_s)

    def _progress_and_eta(
        self, engine: _EngineAt | None, fresh: bool
    ) -> tuple[float | None, float | None]:
        """Progress of the planned bytes; the ETA from the rate over the last few seconds of
        the engine's clock (unknown when nothing new came in)."""
        progress = self._phase
        counters = engine.counters if engine is not None else Counters()
        moved = counters.read_bytes + counters.write_bytes
        if progress is None or not progress.planned_bytes:
            return None, None
        eta = None
        if engine is not None and fresh:
            self._window.append((engine.engine_s, moved))
            while engine.engine_s - self._window[0][0] > _ETA_WINDOW_S:
                self._window.popleft()
            first_s, first_moved = self._window[0]
            span = engine.engine_s - first_s
            rate = (moved - first_moved) / span if span > 0 else 0.0
            left = max(0, progress.planned_bytes - moved)
            eta = 0.0 if left == 0 else (round(left / rate, 1) if rate > 0 else None)
        return round(min(1.0, moved / progress.planned_bytes), 4), eta

    # --- samples ----------------------------------------------------------------------------
    def _tick(self) -> Sample | None:
        """A sample when a rate can be taken over at least `_SHORTEST` of a period (or the
        engine is overdue); None to wait for the next tick or report."""
        now = self._clock()
        engine = self._engine_now(now)
        waited = now - self._last.t
        fresh = engine is not None and engine.engine_s - self._base.engine_s >= self._shortest_s
        if waited < self._shortest_s or not (fresh or waited >= self._overdue_s()):
            return None
        span_s = 0.0  # no report for too long: stalled as far as anyone knows, for no time
        rates = _NO_RATES
        if fresh and engine is not None:
            rates, span_s = _engine_rates(self._base, engine), engine.engine_s - self._base.engine_s
            self._base_before, self._base = self._base, engine
        return self._sample(now, self._last, rates, self._progress_and_eta(engine, fresh), span_s)

    def _closing(self) -> Sample:
        """The phase's end. Its rates reach back over the previous sample's interval when the
        phase ended less than `_SHORTEST` of a period after it, so no rate is taken over a
        sliver; a phase shorter than that has its one sample over all of it."""
        now = self._clock()
        engine = self._engine_now(now)
        rates, fresh, span_s = _NO_RATES, False, 0.0
        if engine is not None:  # else a stepped engine that never reported moving anything
            since = self._base
            span_s = max(0.0, engine.engine_s - since.engine_s)  # the time not yet sampled
            if span_s < self._shortest_s and self._base_before:
                since = self._base_before
            rates, fresh = _engine_rates(since, engine), engine.engine_s > since.engine_s
        last = self._last
        if now - last.t < self._shortest_s and self._before is not None:
            last = self._before
        return self._sample(now, last, rates, self._progress_and_eta(engine, fresh), span_s)

    def _sample(
        self,
        now: float,
        since: _Reading,
        rates: _EngineRates,
        progress: tuple[float | None, float | None],
        span_s: float,
    ) -> Sample:
        """Disk and CPU rates since `since`. `span_s`: the engine's running time the sample
        adds to the phase, on the engine's clock (what its result is timed on), so that the
        rates weighted by it add up to the phase's bytes."""
        reading = self._read(now)
        dt = max(now - since.t, _MIN_DIVISOR_S)
        zero = self._started if self._clock_zero is None else self._clock_zero
        sampled = self._sampled
        sample = Sample(
            sampled.run,
            sampled.phase,
            sampled.repetition,
            round(now - zero, 3),
            *rates,
            *progress,
            disks={
                name: _disk_rates(since.disks[name], after, dt, self._layers.get(name))
                for name, after in reading.disks.items()
                if name in since.disks
            },
            cpu=_cpu_split(since.cpu, reading.cpu),
            span_s=round(span_s, 3),
        )
        self._before, self._last = self._last, reading
        return sample

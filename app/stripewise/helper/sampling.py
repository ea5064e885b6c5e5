"""Live samples during a benchmark: engine counters, the kernel's per-disk counters, system CPU.

Every figure is a delta between two readings divided by the wall time between them, so an
engine's own notion of its rate is never trusted. Rates are decimal (bytes / 1e6 / s).

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
from typing import Any

import psutil

from stripewise.helper.engines.base import Counters, Progress
from stripewise.helper.resolve import mount_of, mount_source
from stripewise.inventory.mounts import device_name

_MAX_DEPTH = 8  # loop on a file on dm on loop ...: stop before a cycle can hurt
_ETA_WINDOW_S = 2.0  # the "current" rate behind the ETA: long enough to be steady

Sample = dict[str, Any]


def _read(path: str) -> str | None:
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return None


def _whole_disk(devno: int) -> str | None:
    """MAJ:MIN -> kernel name, a partition replaced by the disk it lives on."""
    link = f"/sys/dev/block/{os.major(devno)}:{os.minor(devno)}"
    if not os.path.exists(link):
        return None
    real = os.path.realpath(link)
    if os.path.exists(f"{real}/partition"):
        real = os.path.dirname(real)
    return os.path.basename(real)


def _collect(name: str, found: list[str], depth: int) -> None:
    """dm and md devices stand for their slaves; a loop device is kept, with its backing
    file's disks after it (the loop's counters match the engine's, the disk's are the truth)."""
    if depth > _MAX_DEPTH or name in found:
        return
    base = f"/sys/class/block/{name}"
    try:
        slaves = sorted(os.listdir(f"{base}/slaves"))
    except OSError:
        slaves = []
    if slaves:
        for slave in slaves:
            number = _read(f"{base}/slaves/{slave}/dev")
            if number and ":" in number:
                major, minor = number.split(":")
                disk = _whole_disk(os.makedev(int(major), int(minor)))
                if disk:
                    _collect(disk, found, depth + 1)
        return
    found.append(name)
    backing = _read(f"{base}/loop/backing_file")
    if backing:  # a file root attached: its name is the kernel's, not a caller's
        with contextlib.suppress(OSError):
            fd = os.open(backing.removesuffix(" (deleted)"), os.O_PATH | os.O_CLOEXEC)
            try:
                _collect_devno(os.fstat(fd).st_dev, fd, found, depth)
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


def _collect_devno(devno: int, fd: int, found: list[str], depth: int) -> None:
    if os.major(devno) == 0:
        for name in _anonymous_source(fd):
            _collect(_whole_disk(os.stat(f"/dev/{name}").st_rdev) or name, found, depth + 1)
        return
    disk = _whole_disk(devno)
    if disk:
        _collect(disk, found, depth + 1)


def disks_under(fd: int) -> tuple[str, ...]:
    """Kernel names of the whole disks under an open file, directory or block device; empty
    for filesystems without one (tmpfs)."""
    info = os.fstat(fd)
    found: list[str] = []
    devno = info.st_rdev if stat.S_ISBLK(info.st_mode) else info.st_dev
    _collect_devno(devno, fd, found, 0)
    return tuple(found)


def resolve_disks(target: str) -> tuple[str, ...]:
    """`disks_under` for a path the program itself chose (tests, the run context)."""
    fd = os.open(target, os.O_PATH | os.O_CLOEXEC)
    try:
        return disks_under(fd)
    finally:
        os.close(fd)


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


def _disk_rates(before: Any, after: Any, dt: float) -> dict[str, float | None]:
    busy = getattr(after, "busy_time", None)
    return {
        "read_mb_s": round((after.read_bytes - before.read_bytes) / dt / 1e6, 3),
        "write_mb_s": round((after.write_bytes - before.write_bytes) / dt / 1e6, 3),
        "read_iops": round((after.read_count - before.read_count) / dt, 1),
        "write_iops": round((after.write_count - before.write_count) / dt, 1),
        "busy_pct": (
            None
            if busy is None
            else round(min(100.0, max(0.0, (busy - before.busy_time) / (dt * 10.0))), 1)
        ),
    }


class Sampler:
    """A thread that emits one sample every 1/rate seconds until stop()."""

    def __init__(
        self,
        progress: Callable[[], Progress | None],
        disks: Sequence[str],
        rate_hz: float,
        emit: Callable[[Sample], None],
        clock_zero: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[threading.Event, float], bool] = threading.Event.wait,
    ) -> None:
        """`clock_zero`: the run's start on `clock`, so `t_s` runs on across phases. `clock`
        tells the time in seconds and `wait(stop, timeout)` sleeps until `stop` is set or the
        timeout has passed, saying whether it was set: tests pass a fake pair."""
        self._progress, self._disks, self._emit = progress, tuple(disks), emit
        self._clock_zero = clock_zero
        self._clock, self._wait = clock, wait
        self.period_s = 1.0 / rate_hz
        self.samples = 0
        self.own_cpu_s = 0.0  # the sampler thread's CPU time: its cost, for the record
        self.error: BaseException | None = None  # an emit that failed stops nothing
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._phase_cpu: Any = None

    def start(self) -> None:
        self._started = self._clock()
        self._last_t = self._started
        self._last_cpu = psutil.cpu_times()  # the first reading is only a baseline
        self._phase_cpu = self._last_cpu
        self._last_disks = self._disk_counters()
        self._last_progress: Progress | None = None
        self._last_counters = Counters()
        self._window: collections.deque[tuple[float, int]] = collections.deque()
        self._step_counters, self._step_t = Counters(), 0.0  # the last step of a stepped engine
        self._held: dict[str, float] = {}
        self._thread = threading.Thread(target=self._loop, name="stripewise-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop ticking. A phase shorter than one period gets one sample covering all of it,
        so it still shows up in the live view; longer phases end on their last tick."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            if self.samples == 0 and self._clock() - self._last_t > 0.001:
                try:
                    self._emit(self._sample())
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

    def _disk_counters(self) -> dict[str, Any]:
        if not self._disks:
            return {}
        counters = psutil.disk_io_counters(perdisk=True, nowrap=True) or {}
        return {name: counters[name] for name in self._disks if name in counters}

    def _loop(self) -> None:
        due = self._started + self.period_s
        while not self._wait(self._stop, max(0.0, due - self._clock())):
            try:
                self._emit(self._sample())
            except Exception as error:  # a broken consumer must not kill the benchmark
                self.error = error
            self.samples += 1
            self.own_cpu_s = time.thread_time()
            due += self.period_s
            now = self._clock()
            if due < now:  # fell behind (suspended host): skip, do not burst
                due = now + self.period_s

    def _rates(
        self, progress: Progress | None, counters: Counters, now: float, dt: float
    ) -> dict[str, float]:
        """Engine MB/s and IOPS. Engines that update in steps (fio, once a second) get each
        step spread over the time since the previous one, held until the next is due, and
        zero once it is overdue (a stalled device shows as stalled)."""
        step = progress.update_period_s if progress else None
        if step is None:
            last, span = self._last_counters, dt
        elif counters != self._step_counters:
            last, span = self._step_counters, max(now - self._step_t, 1e-6)
            self._step_counters, self._step_t = counters, now
        elif now - self._step_t <= 1.5 * step:
            return self._held
        else:
            last, span = counters, dt
        self._held = {
            "engine_read_mb_s": round((counters.read_bytes - last.read_bytes) / span / 1e6, 3),
            "engine_write_mb_s": round((counters.write_bytes - last.write_bytes) / span / 1e6, 3),
            "engine_read_iops": round((counters.read_ops - last.read_ops) / span, 1),
            "engine_write_iops": round((counters.write_ops - last.write_ops) / span, 1),
        }
        return self._held

    def _engine(self, now: float, dt: float) -> dict[str, Any]:
        progress = self._progress()
        if progress is not self._last_progress:  # a new phase counts from zero
            self._last_progress, self._last_counters = progress, Counters()
            self._step_counters, self._step_t = Counters(), now
            self._window.clear()
        counters = progress.snapshot() if progress else Counters()
        rates = self._rates(progress, counters, now, dt)
        self._last_counters = counters
        moved = counters.read_bytes + counters.write_bytes
        self._window.append((now, moved))
        while now - self._window[0][0] > _ETA_WINDOW_S:
            self._window.popleft()
        eta = None
        if progress is not None and progress.planned_bytes:
            first_t, first_moved = self._window[0]
            rate = (moved - first_moved) / (now - first_t) if now > first_t else 0.0
            left = max(0, progress.planned_bytes - moved)
            eta = 0.0 if left == 0 else (round(left / rate, 1) if rate > 0 else None)
        return {
            **rates,
            "progress": (
                round(min(1.0, moved / progress.planned_bytes), 4)
                if progress and progress.planned_bytes
                else None
            ),
            "eta_s": eta,
        }

    def _sample(self) -> Sample:
        now = self._clock()
        dt = max(now - self._last_t, 1e-6)
        disks, cpu = self._disk_counters(), psutil.cpu_times()
        zero = self._started if self._clock_zero is None else self._clock_zero
        sample: Sample = {"t_s": round(now - zero, 3), **self._engine(now, dt)}
        sample["disks"] = {
            name: _disk_rates(self._last_disks[name], after, dt)
            for name, after in disks.items()
            if name in self._last_disks
        }
        sample["cpu"] = _cpu_split(self._last_cpu, cpu)
        self._last_t, self._last_disks, self._last_cpu = now, disks, cpu
        return sample

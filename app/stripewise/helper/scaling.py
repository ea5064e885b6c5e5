"""`bench.scaling` inside the helper: whole disks read alone, then several at once, read-only.

Each device is named by its kernel name and opened once: an O_PATH|O_NOFOLLOW look-up of that
name in /dev (a symbolic link put there is refused, never followed), checked to be the whole
disk the name says (by its device number in sysfs: a node swapped for another disk's is
refused), then reopened through the held descriptor's magic link with O_RDONLY|O_DIRECT, so
no name is looked up twice. Nothing is ever written, so no serial is asked for.

A pass of a step runs one thread per disk, each reading its disk from offset 0 in `block_size`
reads up to `size`. With several disks, each thread reads its first block, then waits for the
others: the window opens when the last of them has read one, so no thread still starting up
(a fast disk can be read whole in the milliseconds another thread takes to be scheduled) lets
one disk's figure pass for several. It ends when the first disk is done, and every thread
stops there, so every disk was busy for the whole window; a disk that read nothing in it fails
the pass. A disk's rate is its bytes in the window over the window; the step's figure is every
byte in the window over the window.
Samples come from the run's `Sampler` as in `bench.start` (the kernel's per-disk counters).
"""

from __future__ import annotations

import mmap
import os
import stat
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from stripewise.helper.engines.base import Progress
from stripewise.helper.sysfs_files import read_attribute
from stripewise.model.bench import MAX_BUFFERS, Phase
from stripewise.model.scaling import ScalingPlan, plan_scaling
from stripewise.model.setting_labels import size_text
from stripewise.protocol.events import Event, RunError
from stripewise.protocol.scaling import (
    PlannedStep,
    ScalingArgs,
    ScalingEnd,
    ScalingPass,
    ScalingStarted,
    ScalingStep,
)

Emit = Callable[[Event], None]
_DEV = "/dev"
_POLL_S = 0.05  # how often a thread waiting for the others looks at stop and cancel


class ScalingRefused(ValueError):
    """A device that may not be read this way; the message says which and why."""


@dataclass
class HeldDisk:
    name: str
    fd: int  # O_RDONLY | O_DIRECT
    size_bytes: int


def _sys_name(rdev: int) -> tuple[str, bool]:
    """The kernel's name for a device number, and whether it is a partition."""
    real = os.path.realpath(f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}")
    return os.path.basename(real), os.path.exists(f"{real}/partition")


def open_disk(name: str, dev: str = _DEV) -> HeldDisk:
    """The whole disk `name`, held for reading with O_DIRECT; ScalingRefused otherwise."""
    directory = os.open(dev, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        path_fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory)
    except FileNotFoundError:
        raise ScalingRefused(f"/dev/{name} does not exist") from None
    except OSError as error:
        raise ScalingRefused(f"/dev/{name}: {error.strerror}") from None
    finally:
        os.close(directory)
    try:
        info = os.fstat(path_fd)
        if stat.S_ISLNK(info.st_mode):
            raise ScalingRefused(f"/dev/{name} is a symbolic link: give the disk's kernel name")
        if not stat.S_ISBLK(info.st_mode):
            raise ScalingRefused(f"/dev/{name} is not a block device")
        real, partition = _sys_name(info.st_rdev)
        if partition:
            raise ScalingRefused(f"/dev/{name} is a partition: give the whole disk")
        if real != name:
            raise ScalingRefused(f"/dev/{name} is the node of {real}, not of {name}: refused")
        try:
            fd = os.open(f"/proc/self/fd/{path_fd}", os.O_RDONLY | os.O_DIRECT | os.O_CLOEXEC)
        except OSError as error:
            raise ScalingRefused(f"cannot open /dev/{name}: {error.strerror}") from None
    finally:
        os.close(path_fd)
    try:
        if os.fstat(fd).st_rdev != info.st_rdev:
            raise ScalingRefused(f"/dev/{name} changed while it was being opened: refused")
        return HeldDisk(name, fd, os.lseek(fd, 0, os.SEEK_END))
    except BaseException:
        os.close(fd)
        raise


def _logical_block(name: str) -> int:
    text = read_attribute(f"/sys/class/block/{name}/queue/logical_block_size")
    return int(text) if text and text.isdigit() else 512


@dataclass(frozen=True)
class PassFigures:
    window_s: float
    disk_bytes: dict[str, int]
    disk_mb_s: dict[str, float]
    error: str | None

    @property
    def mb_s(self) -> float:
        """Every byte read inside the window over the window: each disk was busy all of it.
        (Not the sum of each disk's bytes over its own last read: a disk whose thread woke
        late and read one block before the window closed would count at memory speed.)"""
        return sum(self.disk_bytes.values()) / self.window_s / 1e6 if self.window_s > 0 else 0.0


def read_together(
    disks: Sequence[HeldDisk],
    buffers: Sequence[mmap.mmap],
    size: int,
    block: int,
    cancel: threading.Event,
    progress: Progress,
) -> PassFigures:
    """One pass: every disk read from 0 at once until the first has read `size`."""
    lined_up = _LineUp(len(disks), cancel)
    done: dict[str, int] = {}  # name -> bytes read inside the window
    errors: list[str] = []
    window: list[tuple[float, str]] = []  # (its end, the disk that ended it)
    clock = time.monotonic

    def read(disk: HeldDisk, buffer: mmap.mmap) -> None:
        view, offset, counted = memoryview(buffer), 0, 0
        lined_up.start.wait()
        try:
            if len(disks) > 1:  # its first block read before the window opens
                offset = os.preadv(disk.fd, [view[:block]], 0)
                progress.add(read_bytes=offset, read_ops=1)
            if not lined_up.arrive(clock):
                return
            while offset < size and not lined_up.stop.is_set() and not cancel.is_set():
                count = os.preadv(disk.fd, [view[: min(block, size - offset)]], offset)
                now = clock() - lined_up.began
                if lined_up.stop.is_set() or count <= 0:
                    break  # done after the window closed: not counted
                offset, counted = offset + count, counted + count
                progress.add(read_bytes=count, read_ops=1)
            if offset >= size and not lined_up.stop.is_set():
                window.append((now if counted else 0.0, disk.name))
                lined_up.stop.set()
        except OSError as error:
            errors.append(f"reading {disk.name}: {error.strerror or error}")
            lined_up.stop.set()
        finally:
            done[disk.name] = counted

    threads = [
        threading.Thread(target=read, args=(d, b), name=f"scaling-{d.name}", daemon=True)
        for d, b in zip(disks, buffers, strict=True)
    ]
    for thread in threads:
        thread.start()
    progress.begin()
    lined_up.start.set()
    for thread in threads:
        thread.join()
    progress.end()
    ended, first = min(window) if window else (max(0.0, clock() - lined_up.began), "")
    rates = {name: (moved / ended / 1e6 if ended > 0 else 0.0) for name, moved in done.items()}
    error = errors[0] if errors else ("cancelled" if cancel.is_set() and not window else None)
    idle = sorted(name for name, moved in done.items() if not moved)
    if error is None and window and idle:
        error = (
            f"{', '.join(idle)} read nothing before {first} had read {size_text(size)}: "
            "the disks were not read together; read more per pass"
        )
    return PassFigures(ended, dict(done), rates, error)


class _LineUp:
    """The threads of a pass: started together, and the window opened once every one has
    arrived (read its first block); a stop or cancel lets the waiting ones go."""

    def __init__(self, count: int, cancel: threading.Event) -> None:
        self.start, self.stop, self._open = threading.Event(), threading.Event(), threading.Event()
        self.began = time.monotonic()
        self._left, self._lock, self._cancel = count, threading.Lock(), cancel

    def arrive(self, clock: Callable[[], float]) -> bool:
        """True when the window is open for this thread; False when the pass stopped first."""
        with self._lock:
            self._left -= 1
            if self._left == 0:
                self.began = clock()
                self._open.set()
        while not self._open.wait(_POLL_S):
            if self.stop.is_set() or self._cancel.is_set():
                return False
        return True


def _giving(progress: Progress) -> Callable[[], Progress]:
    return lambda: progress


class ScalingRun:
    """The held disks and the thread that reads them, visit by visit, as the plan says.
    Shaped like BenchRun where the session needs it: id, cancel, finished, start, stop,
    release."""

    def __init__(self, args: ScalingArgs, emit: Emit, *, privileged: bool) -> None:
        if not privileged:
            raise ScalingRefused("block devices are read by the privileged helper only")
        if len(args.devices) * args.block_size > MAX_BUFFERS:
            raise ScalingRefused(
                f"{len(args.devices)} disks x {args.block_size} bytes of buffers: at most "
                f"{MAX_BUFFERS // 2**20} MiB; take a smaller block size"
            )
        self.id = uuid.uuid4().hex
        self.args = args
        self.plan: ScalingPlan = plan_scaling(args.devices, args.repeat)
        self._emit = emit
        self.cancel = threading.Event()
        self.finished = threading.Event()
        self.disks: list[HeldDisk] = []
        self._released = threading.Lock()
        try:
            for name in args.devices:
                self.disks.append(open_disk(name))
            for disk in self.disks:
                if disk.size_bytes < args.size:
                    raise ScalingRefused(
                        f"/dev/{disk.name} holds {disk.size_bytes:,} bytes, less than the "
                        f"{args.size:,} asked"
                    )
                if args.block_size % _logical_block(disk.name):
                    raise ScalingRefused(
                        f"block_size {args.block_size} is not a multiple of /dev/{disk.name}'s "
                        "logical block size"
                    )
            self.buffers = [mmap.mmap(-1, args.block_size) for _ in self.disks]
        except BaseException:
            self.release()
            raise
        self.thread = threading.Thread(target=self._run, name=f"scaling-{self.id}", daemon=True)

    def started(self) -> ScalingStarted:
        steps = tuple(PlannedStep(step.disks, step.alone) for step in self.plan.steps)
        args = self.args
        return ScalingStarted(
            self.id, self.plan.disks, steps, len(self.plan.visits), args.size,
            args.block_size, args.repeat,
        )  # fmt: skip

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.cancel.set()
        self.finished.wait(timeout)

    def release(self) -> None:
        """Close every disk; once, from whichever thread asks first."""
        with self._released:
            for disk in self.disks:
                if disk.fd >= 0:
                    os.close(disk.fd)
                    disk.fd = -1

    def _run(self) -> None:
        from stripewise.helper.sampling import SampledPhase, Sampler

        began = time.monotonic()
        sampler = Sampler(list(self.plan.disks), self.args.sample_rate_hz, self._emit, began)
        by_name = {
            disk.name: (disk, buffer) for disk, buffer in zip(self.disks, self.buffers, strict=True)
        }
        status, error, measured = "complete", None, 0.0
        try:
            for visit in self.plan.visits:
                if self.cancel.is_set():
                    status = "cancelled"
                    break
                names = self.plan.steps[visit.step].disks
                self._emit(ScalingStep(self.id, visit.number, visit.step, visit.repetition, names))
                progress = Progress(self.args.size * len(names))
                sampler.start(
                    _giving(progress), SampledPhase(self.id, Phase.SEQ_READ, visit.number)
                )
                try:
                    figures = read_together(
                        [by_name[n][0] for n in names],
                        [by_name[n][1] for n in names],
                        self.args.size,
                        self.args.block_size,
                        self.cancel,
                        progress,
                    )
                finally:
                    sampler.stop()
                measured += figures.window_s
                self._emit(
                    ScalingPass(
                        self.id, visit.number, visit.step, visit.repetition, names,
                        round(figures.window_s, 4), sum(figures.disk_bytes.values()),
                        round(figures.mb_s, 2),
                        {n: round(v, 2) for n, v in figures.disk_mb_s.items()}, figures.error,
                    )
                )  # fmt: skip
                if figures.error is not None:
                    status = "cancelled" if figures.error == "cancelled" else "failed"
                    error = None if status == "cancelled" else figures.error
                    break
        except Exception as exc:  # a defect must still end the run, saying so
            status, error = "failed", f"the run broke off: {type(exc).__name__}: {exc}"
        finally:
            try:
                sampler.close()
            finally:
                self.release()
        if error is not None:
            self._emit(RunError(self.id, error))
        elapsed = round(time.monotonic() - began, 3)
        self.finished.set()  # before the end goes out: the client may start the next run
        self._emit(ScalingEnd(self.id, status, elapsed, round(measured, 3), 0, error))

"""The built-in engine: bonnie++-style phases in pure Python, an independent cross-check of fio.

Speed comes from doing what fio does: O_DIRECT, one page-aligned buffer per thread (anonymous
mmap), I/O straight into it (no allocation, no copy per I/O), and threads for parallel streams
and queue depth (the system calls release the GIL). Direct sequential phases submit through
Linux AIO like fio's libaio engine (`linux_aio`); the rest use os.preadv/os.pwritev. Where
O_DIRECT is refused the engine falls back to buffered I/O, says so in `notes`, and fsyncs at
the end of write phases.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import random
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import stripewise
from stripewise.helper.credentials import as_caller_in_thread
from stripewise.helper.engines.base import EngineError, Progress
from stripewise.helper.engines.linux_aio import AioFile, buffer_address
from stripewise.helper.target import Target
from stripewise.model.bench import BenchSpec, Phase, PhaseOutcome

MIXED_READ_SHARE = 0.7  # fio's randrw rwmixread=70
LATENCY_SAMPLES = 65536  # reservoir size over all threads of a phase
MAX_THREADS = 256  # streams x queue depth beyond this only adds scheduler noise
_POLL_S = 0.05  # how often the phase watches cancel and the runtime cap
_SEQUENTIAL = (Phase.SEQ_WRITE, Phase.REWRITE, Phase.SEQ_READ)


def _gb(count: int) -> str:
    return f"{count / 1e9:.2f} GB" if count >= 1e8 else f"{count / 1e6:.1f} MB"


def pattern_period_bytes(spec: BenchSpec, phase: Phase) -> int:
    """What the engine writes repeats every this many bytes: each buffer holds the same random
    block (`_jobs`), incompressible within one write, compressible across several (the
    compressed_writes guard in helper/guards.py asks)."""
    return spec.block_bytes if phase in _SEQUENTIAL else spec.random_block_bytes


def logical_block_bytes(fd: int) -> int:
    """O_DIRECT alignment: the device's logical block size (a partition's parent queue)."""
    info = os.fstat(fd)
    number = info.st_rdev if stat.S_ISBLK(info.st_mode) else info.st_dev
    base = f"/sys/dev/block/{os.major(number)}:{os.minor(number)}"
    for queue in (f"{base}/queue", f"{base}/../queue"):
        with contextlib.suppress(OSError, ValueError), open(f"{queue}/logical_block_size") as f:
            return max(512, int(f.read()))
    return max(512, info.st_blksize)  # no block device behind it (tmpfs, btrfs subvolume)


class _Latencies:
    """A fixed-size uniform sample (reservoir, algorithm R) of one thread's I/O times in ns."""

    def __init__(self, capacity: int, seed: int) -> None:
        self.values: list[int] = []
        self.capacity = capacity
        self.seen = 0
        self._random = random.Random(seed).random

    def add(self, nanoseconds: int) -> None:
        self.seen += 1
        if self.seen <= self.capacity:
            self.values.append(nanoseconds)
        else:
            slot = int(self._random() * self.seen)
            if slot < self.capacity:
                self.values[slot] = nanoseconds


@dataclass
class _Job:
    """What one worker thread does: a region, a buffer, and where to report."""

    fd: int
    view: memoryview
    start: int
    end: int
    block: int
    ops: int  # random phases: how many I/Os
    read_share: float
    progress: Progress
    halt: threading.Event
    latencies: _Latencies
    seed: int
    aio: AioFile | None = None  # direct sequential phases: submit like fio's libaio
    failure: list[tuple[OSError, int]] = field(default_factory=list)


_Transfer = Callable[[int, int], int]  # (bytes, offset) -> bytes moved


def _transfers(job: _Job) -> tuple[_Transfer, _Transfer]:
    """read(nbytes, offset) and write(nbytes, offset) on the job's buffer."""
    fd, view = job.fd, job.view
    if job.aio is not None:
        transfer, address = job.aio.transfer, buffer_address(view.obj)
        return (
            lambda nbytes, offset: transfer(False, fd, address, nbytes, offset),
            lambda nbytes, offset: transfer(True, fd, address, nbytes, offset),
        )
    whole, preadv, pwritev = [view], os.preadv, os.pwritev

    def read(nbytes: int, offset: int) -> int:
        return preadv(fd, whole if nbytes == len(view) else [view[:nbytes]], offset)

    def write(nbytes: int, offset: int) -> int:
        return pwritev(fd, whole if nbytes == len(view) else [view[:nbytes]], offset)

    return read, write


def _sequential(job: _Job, phase: Phase) -> None:
    read, write = _transfers(job)
    clock, add, record, halt = time.perf_counter_ns, job.progress.add, job.latencies.add, job.halt
    view, block, offset, end = job.view, job.block, job.start, job.end
    while offset < end and not halt.is_set():
        size = min(block, end - offset)
        started = clock()
        if phase is Phase.SEQ_WRITE:
            done = write(size, offset)
            record(clock() - started)
            if done == 0:
                raise OSError(errno.ENOSPC, "no space left")
            add(write_bytes=done, write_ops=1)
        else:
            done = read(size, offset)
            record(clock() - started)
            if done == 0:
                raise EOFError(offset)
            add(read_bytes=done, read_ops=1)
            if phase is Phase.REWRITE:
                view[0] ^= 0xFF  # bonnie++'s rewrite: change the block, write it back in place
                started = clock()
                done = write(done, offset)
                record(clock() - started)
                add(write_bytes=done, write_ops=1)
        offset += done


def _random(job: _Job) -> None:
    pread, pwrite, clock, add = os.preadv, os.pwrite, time.perf_counter_ns, job.progress.add
    record, halt, fd, view, block = job.latencies.add, job.halt.is_set, job.fd, job.view, job.block
    draw, buffers, share = random.Random(job.seed).random, [view], job.read_share
    slots = (job.end - job.start) // block
    for _ in range(job.ops):
        if halt():
            return
        offset = job.start + int(draw() * slots) * block
        if share >= 1.0 or (share > 0.0 and draw() < share):
            started = clock()
            done = pread(fd, buffers, offset)
            record(clock() - started)
            add(read_bytes=done, read_ops=1)
        else:
            started = clock()
            done = pwrite(fd, view, offset)
            record(clock() - started)
            add(write_bytes=done, write_ops=1)


def _work(job: _Job, phase: Phase) -> None:
    try:
        if phase in _SEQUENTIAL:
            _sequential(job, phase)
        else:
            _random(job)
    except OSError as error:
        # without its traceback: the frames hold buffer slices that would pin the mmap
        job.failure.append((error.with_traceback(None), job.start))
        job.halt.set()
    except EOFError as end:
        job.failure.append((OSError(errno.ENODATA, "the test file ends early"), end.args[0]))
        job.halt.set()


def _laid_out(info: os.stat_result, size: int) -> bool:
    """Written to full size: a sparse file's holes would read back as fast, free zeros."""
    return info.st_size >= size and info.st_blocks * 512 >= size * 0.99


def _percentile(ordered: list[int], share: float) -> float | None:
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] / 1000.0


def _failure_text(error: OSError, offset: int, path: str, write_bytes: int) -> str:
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        what = "the disk filled up" if error.errno == errno.ENOSPC else "the quota ran out"
        return f"{what} after {_gb(write_bytes)} written ({path})"
    if error.errno == errno.EIO:
        return f"I/O error near byte {offset} of {path}: the device reported a failure"
    if error.errno == errno.EINVAL:
        return f"{path} refused an I/O as misaligned or invalid (direct I/O): {error.strerror}"
    if error.errno == errno.ENODATA:
        return f"{path} ends before the planned size: lay out the test file first"
    return f"{error.strerror or error} near byte {offset} of {path}"


class BuiltinEngine:
    """The Engine protocol in pure Python; `last_mode` and `notes` say how it really ran."""

    name = "builtin"

    def __init__(self) -> None:
        self.last_mode = "direct"
        self.notes: list[str] = []

    def version(self) -> str:
        return stripewise.__version__

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    @staticmethod
    def planned_bytes(spec: BenchSpec, phase: Phase) -> int:
        """What a phase moves when it runs to the end: the Progress total the sampler needs."""
        if phase is Phase.REWRITE:
            return 2 * spec.size_bytes
        if phase in _SEQUENTIAL:
            return spec.size_bytes
        return spec.size_bytes // spec.random_block_bytes * spec.random_block_bytes

    def prepare(self, spec: BenchSpec, target: Target) -> None:
        """Reject specs that cannot run; learn whether O_DIRECT works on the test file."""
        problems = spec.problems()
        if problems:
            raise EngineError("; ".join(problems))
        if not spec.direct:
            self.last_mode = "buffered"
            return
        align = logical_block_bytes(target.fd)
        if min(spec.block_bytes, spec.random_block_bytes) % align:
            self._fall_back(f"block sizes below the {align} B logical block size")
            return
        try:
            os.close(target.reopen(os.O_RDONLY | os.O_DIRECT))
            self.last_mode = "direct"
        except OSError as error:
            if error.errno != errno.EINVAL:
                raise EngineError(f"cannot open {target.path}: {error.strerror}") from error
            self._fall_back("the filesystem refuses O_DIRECT")

    def _fall_back(self, why: str) -> None:
        self.last_mode = "buffered"
        self._note(
            f"buffered I/O instead of direct ({why}): the page cache is flushed before reads "
            "and writes end with fsync, but reads of a file smaller than RAM may still flatter"
        )

    def _open(self, spec: BenchSpec, target: Target, phase: Phase) -> tuple[int, bool, int]:
        """-> fd, direct?, usable bytes (size rounded down to the alignment). The held file or
        device is opened again through its descriptor, never by a name."""
        flags = os.O_RDWR if phase.writes else os.O_RDONLY
        align = logical_block_bytes(target.fd)
        direct = spec.direct and min(spec.block_bytes, spec.random_block_bytes) % align == 0
        if spec.direct and not direct:
            self._fall_back(f"block sizes below the {align} B logical block size")
        for attempt_direct in (True, False) if direct else (False,):
            try:
                fd = target.reopen(flags | (os.O_DIRECT if attempt_direct else 0))
            except OSError as error:
                if attempt_direct and error.errno == errno.EINVAL:
                    self._fall_back("the filesystem refuses O_DIRECT")
                    continue
                raise EngineError(f"cannot open {target.path}: {error.strerror}") from error
            if phase is Phase.SEQ_WRITE and target.kind == "directory":
                os.ftruncate(fd, 0)  # every repetition measures allocating writes
            self.last_mode = "direct" if attempt_direct else "buffered"
            return fd, attempt_direct, spec.size_bytes // align * align
        raise AssertionError("unreachable")

    def _check_laid_out(self, fd: int, path: str, usable: int) -> None:
        info = os.fstat(fd)
        if stat.S_ISBLK(info.st_mode):
            if os.lseek(fd, 0, os.SEEK_END) < usable:
                raise EngineError(f"{path} is smaller than the planned size {_gb(usable)}")
            return
        if not _laid_out(info, usable):
            raise EngineError(f"{path} is missing or sparse: lay out the test file first")

    def layout(
        self, spec: BenchSpec, target: Target, progress: Progress, cancel: threading.Event
    ) -> None:
        """Write the test file once so read phases read real blocks, not holes; a no-op for
        devices and for a file already written to full size."""
        info = os.fstat(target.fd)
        if stat.S_ISBLK(info.st_mode) or _laid_out(info, spec.size_bytes):
            return
        outcome = self.run_phase(spec, Phase.SEQ_WRITE, 0, target, progress, cancel)
        if outcome.error:
            raise EngineError(f"laying out {target.path}: {outcome.error}")

    def run_phase(
        self,
        spec: BenchSpec,
        phase: Phase,
        repetition: int,
        target: Target,
        progress: Progress,
        cancel: threading.Event,
    ) -> PhaseOutcome:
        fd, direct, usable = self._open(spec, target, phase)
        try:
            if phase is not Phase.SEQ_WRITE:
                self._check_laid_out(fd, target.path, usable)
            if not direct and phase.reads:
                os.fsync(fd)  # clean pages can be dropped; dirty ones cannot
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            return self._run(spec, phase, repetition, target, fd, direct, usable, progress, cancel)
        finally:
            os.close(fd)

    def _jobs(
        self, spec: BenchSpec, phase: Phase, fd: int, direct: bool, usable: int, progress: Progress
    ) -> tuple[list[_Job], list[mmap.mmap]]:
        """Disjoint regions, one per stream; random phases split each among queue-depth threads.
        Whoever gets the jobs closes their AIO contexts before freeing the buffers."""
        sequential = phase in _SEQUENTIAL
        block = spec.block_bytes if sequential else spec.random_block_bytes
        per_stream = usable // block // spec.streams * block
        depth = 1 if sequential else max(1, min(spec.queue_depth, MAX_THREADS // spec.streams))
        share = {Phase.RANDOM_READ: 1.0, Phase.RANDOM_WRITE: 0.0}.get(phase, MIXED_READ_SHARE)
        capacity = max(1024, LATENCY_SAMPLES // (spec.streams * depth))
        halt, pattern = threading.Event(), random.Random(7).randbytes(block)
        jobs, maps = [], []
        for stream in range(spec.streams):
            start = stream * per_stream
            end = usable if stream == spec.streams - 1 else start + per_stream
            slots = (end - start) // block
            for lane in range(depth):
                buffer = mmap.mmap(-1, block)  # page aligned, as O_DIRECT needs
                buffer[:] = pattern  # incompressible, never zeros: no thin-provisioning shortcut
                maps.append(buffer)
                seed = 1_000_003 * stream + lane + 1  # distinct, reproducible offsets
                ops = slots // depth + (lane < slots % depth)
                latencies = _Latencies(capacity, seed)
                view = memoryview(buffer)
                job = _Job(fd, view, start, end, block, ops, share, progress, halt, latencies, seed)
                if direct and sequential:
                    job.aio = AioFile.open()  # None: no AIO here, preadv/pwritev instead
                jobs.append(job)
        return jobs, maps

    def _run(
        self,
        spec: BenchSpec,
        phase: Phase,
        repetition: int,
        target: Target,
        fd: int,
        direct: bool,
        usable: int,
        progress: Progress,
        cancel: threading.Event,
    ) -> PhaseOutcome:
        jobs, maps = self._jobs(spec, phase, fd, direct, usable, progress)
        caller = target.caller if target.kind == "directory" else None
        halt, before = jobs[0].halt, progress.snapshot()
        remaining = [len(jobs)]
        finished, lock = threading.Event(), threading.Lock()

        def worker(job: _Job) -> None:
            try:
                with as_caller_in_thread(caller):  # quotas and reserved blocks are the caller's
                    _work(job, phase)
            finally:
                with lock:
                    remaining[0] -= 1
                    if remaining[0] == 0:
                        finished.set()

        threads = [threading.Thread(target=worker, args=(j,), daemon=True) for j in jobs]
        progress.begin()  # live rates are timed from here, as `elapsed` is
        started = time.perf_counter()
        deadline = started + spec.runtime_cap_s
        for thread in threads:
            thread.start()
        stopped_by = _watch(finished, cancel, deadline)
        halt.set()
        for thread in threads:
            thread.join()
        failures = [f for j in jobs for f in j.failure]
        if phase.writes and not direct and not failures and stopped_by != "cancelled":
            try:
                os.fsync(fd)  # buffered writes count once they are on the disk
            except OSError as sync_error:
                failures.append((sync_error, 0))
        elapsed = time.perf_counter() - started
        progress.end()
        after = progress.snapshot()
        latencies = sorted(v for j in jobs for v in j.latencies.values)
        for job in jobs:
            if job.aio is not None:
                job.aio.close()  # waits for an I/O still in flight before its buffer goes
            job.view.release()
        for buffer in maps:
            with contextlib.suppress(
                BufferError
            ):  # a slice still alive: garbage collection frees it
                buffer.close()
        error = None
        if failures:
            moved = after.write_bytes - before.write_bytes
            error = _failure_text(*failures[0], target.path, moved)
        elif stopped_by == "cancelled":
            error = "cancelled"
        elif stopped_by == "cap":
            self._note(f"{phase.value} stopped at the runtime cap of {spec.runtime_cap_s:g} s")
        return PhaseOutcome(
            phase=phase,
            repetition=repetition,
            elapsed_s=elapsed,
            read_bytes=after.read_bytes - before.read_bytes,
            write_bytes=after.write_bytes - before.write_bytes,
            read_ops=after.read_ops - before.read_ops,
            write_ops=after.write_ops - before.write_ops,
            lat_p50_us=_percentile(latencies, 0.50),
            lat_p99_us=_percentile(latencies, 0.99),
            error=error,
        )

    def cleanup(self) -> None:
        """Nothing of its own: the test file belongs to the target, which removes it."""


def _watch(finished: threading.Event, cancel: threading.Event, deadline: float) -> str:
    """Wait for the workers; -> "done", "cancelled" or "cap". Cancel is seen within _POLL_S."""
    while not finished.wait(_POLL_S):
        if cancel.is_set():
            return "cancelled"
        if time.perf_counter() >= deadline:
            return "cap"
    return "done"

"""The built-in engine: bonnie++-style phases in pure Python, an independent cross-check of fio.

Speed comes from doing what fio does: O_DIRECT, page-aligned buffers allocated once per phase,
I/O straight into them. Direct phases keep up to queue-depth I/Os in flight per stream through
Linux AIO (`io_runners.run_queued`), as fio's libaio engine does; a thread per queue slot would
leave the interpreter lock, not the device, setting the pace. Where O_DIRECT is refused the
engine falls back to buffered preadv/pwritev (random phases with a worker per stream and queue
slot; the system calls release the interpreter lock), says so in `notes`, and fsyncs at the
end of write phases. A phase's one worker runs on the calling thread (the run's), more on a
thread each (`io_runners.run_workers`). What each stream does next is an `io_plans` plan; every
I/O's latency goes into a `LatencyHistogram`.
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

import stripewise
from stripewise.helper.engines.base import EngineError, Progress
from stripewise.helper.engines.cpu_placement import cpus_for, device_node_cpus
from stripewise.helper.engines.io_plans import IoPlan, RandomPlan, RewritePlan, SequentialPlan
from stripewise.helper.engines.io_runners import (
    Failure,
    Halted,
    Worker,
    run_one_at_a_time,
    run_queued,
    run_workers,
    sync_mover,
)
from stripewise.helper.engines.latency_histogram import LatencyHistogram
from stripewise.helper.engines.linux_aio import (
    PREAD,
    PWRITE,
    AioContext,
    AioSlots,
    ContextPool,
)
from stripewise.helper.sysfs_files import block_device_path, read_attribute
from stripewise.helper.target import Target
from stripewise.model.bench import BenchSpec, Phase, PhaseOutcome

MIXED_READ_SHARE = 0.7  # fio's randrw rwmixread=70
MAX_THREADS = 256  # streams x queue depth beyond this only adds scheduler noise


def _gb(count: int) -> str:
    return f"{count / 1e9:.2f} GB" if count >= 1e8 else f"{count / 1e6:.1f} MB"


def pattern_period_bytes(spec: BenchSpec, phase: Phase) -> int:
    """What the engine writes repeats every this many bytes: each buffer holds the same random
    block (`_jobs`), incompressible within one write, compressible across several (the
    compressed_writes guard in helper/guards.py asks)."""
    return spec.block_bytes_for(phase)


def logical_block_bytes(fd: int) -> int:
    """O_DIRECT alignment: the device's logical block size (a partition's parent queue)."""
    base = block_device_path(fd)
    for queue in (f"{base}/queue", f"{base}/../queue"):
        size = read_attribute(f"{queue}/logical_block_size")
        if size and size.isdigit():
            return max(512, int(size))
    return max(512, os.fstat(fd).st_blksize)  # no block device behind it (tmpfs, btrfs)


def _plan(
    phase: Phase, start: int, end: int, block: int, ops: int, seed: int, flip: Callable[[int], None]
) -> IoPlan:
    if phase is Phase.REWRITE:
        return RewritePlan(start, end, block, flip)
    if phase.sequential:
        return SequentialPlan(PWRITE if phase is Phase.SEQ_WRITE else PREAD, start, end, block)
    share = {Phase.RANDOM_READ: 1.0, Phase.RANDOM_WRITE: 0.0}.get(phase, MIXED_READ_SHARE)
    return RandomPlan(start, end, block, ops, share, seed)


def _queued_worker(
    context: AioContext,
    fd: int,
    phase: Phase,
    region: tuple[int, int, int],
    depth: int,
    pattern: bytes,
    progress: Progress,
    give_back: Callable[[AioContext], None],
) -> Worker:
    """One stream, up to `depth` I/Os in flight through Linux AIO; its context goes back to
    the engine's pool once the runner has reaped everything, else it is destroyed."""
    start, end, seed = region
    block = len(pattern)
    try:
        slots = AioSlots(depth, block, fd, pattern)
    except BaseException:
        context.close()  # the stream's context is not yet in a worker that would free it
        raise

    def flip(slot: int) -> None:  # bonnie++'s rewrite: change the block, write it back
        slots.buffers[slot * block] ^= 0xFF

    plan = _plan(phase, start, end, block, (end - start) // block, seed, flip)
    latencies = LatencyHistogram()
    drained = [False]

    def run(halted: Halted) -> Failure | None:
        if depth == 1:
            failure = run_one_at_a_time(context.one_io(slots), plan, progress, halted, latencies)
        else:
            failure = run_queued(context, slots, plan, progress, halted, latencies)
        # without a failure nothing is in flight; after one (io_getevents failing at QD1,
        # say) an I/O may be, so the context is destroyed, not kept for the next phase
        drained[0] = failure is None
        return failure

    def release() -> None:
        if drained[0]:
            give_back(context)
        else:
            context.close()  # waits for an I/O still in flight before its buffer goes
        slots.close()

    return Worker(run, latencies, release)


def _sync_workers(
    fd: int,
    phase: Phase,
    region: tuple[int, int, int],
    lanes: int,
    pattern: bytes,
    progress: Progress,
) -> list[Worker]:
    """One stream as `lanes` workers with preadv/pwritev (sequential phases: one)."""
    start, end, seed = region
    block, slots = len(pattern), (end - start) // len(pattern)
    workers = []
    for lane in range(lanes):
        buffer = mmap.mmap(-1, block)  # page aligned, as O_DIRECT needs
        buffer[:] = pattern
        view = memoryview(buffer)

        def flip(_slot: int, view: memoryview = view) -> None:
            view[0] ^= 0xFF

        ops = slots // lanes + (lane < slots % lanes)
        plan = _plan(phase, start, end, block, ops, seed + lane, flip)
        latencies = LatencyHistogram()

        def release(view: memoryview = view, buffer: mmap.mmap = buffer) -> None:
            view.release()
            with contextlib.suppress(BufferError):  # a slice still alive: the GC frees it
                buffer.close()

        def run(
            halted: Halted,
            view: memoryview = view,
            plan: IoPlan = plan,
            latencies: LatencyHistogram = latencies,
        ) -> Failure | None:
            return run_one_at_a_time(sync_mover(fd, view), plan, progress, halted, latencies)

        workers.append(Worker(run, latencies, release))
    return workers


def _laid_out(info: os.stat_result, size: int) -> bool:
    """Written to full size: a sparse file's holes would read back as fast, free zeros."""
    return info.st_size >= size and info.st_blocks * 512 >= size * 0.99


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
        self._contexts = ContextPool()  # AIO contexts kept from one phase to the next

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
        if phase.sequential:
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

    def _workers(
        self,
        spec: BenchSpec,
        phase: Phase,
        fd: int,
        direct: bool,
        usable: int,
        progress: Progress,
    ) -> list[Worker]:
        """Disjoint regions, one per stream. Direct I/O: one worker per stream keeping up to
        queue-depth I/Os in flight through Linux AIO. Otherwise (buffered, or no AIO here)
        preadv/pwritev, random phases with a worker per stream and queue slot."""
        sequential = phase.sequential
        block = spec.block_bytes_for(phase)
        per_stream = usable // block // spec.streams * block
        lanes = 1 if sequential else max(1, min(spec.queue_depth, MAX_THREADS // spec.streams))
        pattern = random.Random(7).randbytes(block)  # the same block in every buffer
        pending = self._aio_contexts(spec) if direct else []  # one per stream, or none
        workers: list[Worker] = []
        try:
            for stream in range(spec.streams):
                start = stream * per_stream
                end = usable if stream == spec.streams - 1 else start + per_stream
                region = (start, end, 1_000_003 * stream + 1)  # distinct, reproducible offsets
                if pending:
                    context = pending.pop(0)  # _queued_worker frees it if it cannot start
                    workers.append(
                        _queued_worker(
                            context,
                            fd,
                            phase,
                            region,
                            spec.queue_depth,
                            pattern,
                            progress,
                            self._contexts.give_back,
                        )
                    )
                else:
                    workers += _sync_workers(fd, phase, region, lanes, pattern, progress)
        except BaseException:
            for worker in workers:
                worker.release()
            for context in pending:
                context.close()
            raise
        return workers

    def _aio_contexts(self, spec: BenchSpec) -> list[AioContext]:
        """An AIO context for every stream, or none: a phase never mixes the two ways."""
        contexts = self._contexts.take(spec.queue_depth, spec.streams)
        if contexts is None:
            self._note(
                "Linux AIO was not available (not in this kernel, or the system-wide "
                "fs.aio-max-nr reached): I/O went through preadv/pwritev, random phases "
                "with a thread per stream and queue slot"
            )
            return []
        return contexts

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
        workers = self._workers(spec, phase, fd, direct, usable, progress)
        caller = target.caller if target.kind == "directory" else None
        before = progress.snapshot()
        placed = cpus_for(len(workers), device_node_cpus(fd))
        cpus: list[int | None] = list(placed) if placed else [None] * len(workers)
        progress.count_latencies([worker.latencies for worker in workers])
        try:
            progress.begin()  # live rates are timed from here, as `elapsed` is
            started = time.perf_counter()
            deadline = started + spec.runtime_cap_s
            stopped_by = run_workers(workers, cpus, caller, cancel, deadline)
        except BaseException:
            for worker in workers:  # none is left running (run_workers joins its threads)
                worker.release()
            raise
        failures = [f for w in workers for f in w.failure]
        if phase.writes and not direct and not failures and stopped_by != "cancelled":
            try:
                os.fsync(fd)  # buffered writes count once they are on the disk
            except OSError as sync_error:
                failures.append((sync_error, 0))
        elapsed = time.perf_counter() - started
        progress.end()
        after = progress.snapshot()
        latencies = LatencyHistogram()
        for worker in workers:
            latencies.merge(worker.latencies)
            worker.release()
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
            lat_p50_us=latencies.percentile_us(0.50),
            lat_p99_us=latencies.percentile_us(0.99),
            error=error,
        )

    def cleanup(self) -> None:
        """The AIO contexts kept between phases; the test file belongs to the target, which
        removes it."""
        self._contexts.close()

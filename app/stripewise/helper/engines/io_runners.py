"""Run one plan: queued through Linux AIO from one thread, or one I/O at a time (AIO at
queue depth 1, or preadv/pwritev); and run a phase's workers, each with its plan
(`run_workers`): one on the calling thread, more on a thread each.

Queued: up to `depth` I/Os in flight; each pass reaps what has completed (at least one),
asks the plan for each freed slot's next I/O, and submits them all with one io_submit.
A slot's latency runs from just before the io_submit that carried it to the return of the
io_getevents that reaped it: what the engine waited, as fio's total latency.

Counts go to `Progress` every few milliseconds, not per I/O (its lock costs as much as the
rest of an I/O's Python work); everything is handed over before a runner returns. `halted()`
is asked before each reap of a queue; one I/O at a time asks it as it hands its counts over,
not per I/O (a QD1 lane's every step counts).
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from stripewise.helper.credentials import (
    Caller,
    CredentialsError,
    as_caller_in_thread,
    needs_switch,
)
from stripewise.helper.engines.base import Progress
from stripewise.helper.engines.cpu_placement import stay_on
from stripewise.helper.engines.io_plans import START, IoPlan
from stripewise.helper.engines.latency_histogram import FOLD_EVERY, LatencyHistogram
from stripewise.helper.engines.linux_aio import (
    EVENT_WORDS,
    IOCB_WORDS,
    PWRITE,
    AioContext,
    AioSlots,
)

Failure = tuple[OSError, int]  # what went wrong, near which byte
Halted = Callable[[], bool]  # asked by a runner between I/Os: stop now?
_HAND_OVER_NS = 5_000_000  # counts reach Progress at least this often
_POLL_S = 0.05  # how often the calling thread watches cancel and the cap for worker threads


@dataclass
class Worker:
    """One share of a phase: its plan's runner until done or halted, its latencies, what to
    free once it has stopped."""

    run: Callable[[Halted], Failure | None]
    latencies: LatencyHistogram
    release: Callable[[], None]
    failure: list[Failure] = field(default_factory=list)


def _transfer_failure(result: int, opcode: int, offset: int) -> Failure:
    """A completion that moved nothing or failed, as the OSError preadv would raise."""
    if result < 0:
        return OSError(-result, os.strerror(-result)), offset
    if opcode == PWRITE:
        return OSError(errno.ENOSPC, "no space left"), offset
    return OSError(errno.ENODATA, "the test file ends early"), offset


def run_queued(
    context: AioContext,
    slots: AioSlots,
    plan: IoPlan,
    progress: Progress,
    halted: Callable[[], bool],
    latencies: LatencyHistogram,
) -> Failure | None:
    """Until the plan is done, `halted()` or an I/O fails; -> the first failure."""
    submit, reap = context.submitter(slots), context.reaper(slots)
    words, pointers, events = slots.iocb_words, slots.pointer_words, slots.event_words
    fd_word, iocbs, buffers = slots.fd_word, slots.iocb_address, slots.buffer_address
    depth, block = slots.depth, slots.block
    clock, record, values = time.perf_counter_ns, latencies.values.append, latencies.values
    opcodes, offsets, sizes, started = [0] * depth, [0] * depth, [0] * depth, [0] * depth
    counts = [0, 0, 0, 0]  # read bytes, write bytes, read ops, write ops
    batch: list[int] = []
    failure: Failure | None = None

    def load(slot: int, finished: int) -> None:
        io = plan.next(slot, finished)
        if io is None:
            return
        opcode, offset, size = io
        word = slot * IOCB_WORDS
        words[word + 2] = opcode | fd_word
        words[word + 3] = buffers + slot * block
        words[word + 4] = size
        words[word + 5] = offset
        opcodes[slot], offsets[slot], sizes[slot] = opcode, offset, size
        pointers[len(batch)] = iocbs + word * 8
        batch.append(slot)

    def send() -> int:
        """Submit the batch; -> how many went. A refused I/O is the phase's failure."""
        nonlocal failure
        now = clock()
        for slot in batch:
            started[slot] = now
        try:
            sent = submit(len(batch))
        except OSError as error:
            sent = 0
            failure = failure or (error.with_traceback(None), offsets[batch[0]])
        if sent < len(batch) and failure is None:
            failure = (
                OSError(errno.EIO, "the kernel took only part of a batch"),
                offsets[batch[sent]],
            )
        batch.clear()
        return sent

    try:
        for slot in range(depth):
            load(slot, START)
        in_flight = send()
        handed_over = clock()
        while in_flight:
            got = reap()
            now = clock()
            in_flight -= got
            stopping = failure is not None or halted()
            for event in range(0, got * EVENT_WORDS, EVENT_WORDS):
                slot, result = events[event], events[event + 2]
                record(now - started[slot])
                opcode = opcodes[slot]
                if result <= 0:
                    failure = failure or _transfer_failure(result, opcode, offsets[slot])
                    stopping = True
                    continue
                counts[opcode] += result  # PREAD = 0, PWRITE = 1
                if result == sizes[slot]:
                    counts[2 + opcode] += 1
                    if not stopping:
                        load(slot, opcode)
                    continue
                # a short transfer (the end of a device, a signal): the rest in the same slot
                word = slot * IOCB_WORDS
                offsets[slot] += result
                sizes[slot] -= result
                words[word + 3] += result
                words[word + 4] = sizes[slot]
                words[word + 5] = offsets[slot]
                pointers[len(batch)] = iocbs + word * 8
                batch.append(slot)
            if batch and not stopping:
                in_flight += send()
            batch.clear()
            if now - handed_over >= _HAND_OVER_NS:
                _hand_over(progress, counts)
                handed_over = now
            if len(values) >= FOLD_EVERY:
                latencies.fold()
    finally:  # also when io_getevents fails: what completed reaches Progress
        _hand_over(progress, counts)
        latencies.fold()
    return failure


Move = Callable[[int, int, int, int], int]
"""move(opcode, offset, nbytes, into): one transfer of `nbytes` at `offset`, to or from the
slot's buffer from its byte `into`; -> bytes moved, or -errno (OSError also counts). Through
AIO: `AioContext.one_io`; synchronous: `sync_mover`."""


def sync_mover(fd: int, view: memoryview) -> Move:
    """os.preadv / os.pwritev into `view` (one slot's buffer)."""
    preadv, pwritev, whole, length = os.preadv, os.pwritev, [view], len(view)

    def move(opcode: int, offset: int, nbytes: int, into: int) -> int:
        buffers = whole if into == 0 and nbytes == length else [view[into : into + nbytes]]
        return (pwritev if opcode == PWRITE else preadv)(fd, buffers, offset)

    return move


def run_one_at_a_time(
    move: Move,
    plan: IoPlan,
    progress: Progress,
    halted: Callable[[], bool],
    latencies: LatencyHistogram,
) -> Failure | None:
    """One I/O at a time, each timed around its `move`: queue depth 1 through AIO (the
    fewest Python steps per I/O, which at QD1 on a fast device is most of what sets the
    engine apart from fio), and every synchronous lane. Until the plan is done, `halted()`
    (asked every _HAND_OVER_NS) or an I/O fails; -> the first failure."""
    clock, record, values = time.perf_counter_ns, latencies.values.append, latencies.values
    next_io, counts = plan.next, [0, 0, 0, 0]  # read bytes, write bytes, read ops, write ops
    handed_over, finished, offset, stopping = clock(), START, 0, halted()
    try:
        while not stopping and (io := next_io(0, finished)) is not None:
            opcode, offset, size = io
            done = 0
            while done < size:  # a short transfer (the end of a device, a signal): the rest
                started = clock()
                result = move(opcode, offset + done, size - done, done)
                now = clock()
                record(now - started)
                if result <= 0:
                    return _transfer_failure(result, opcode, offset + done)
                counts[opcode] += result  # PREAD = 0, PWRITE = 1
                done += result
            counts[2 + opcode] += 1
            finished = opcode
            if now - handed_over >= _HAND_OVER_NS:
                _hand_over(progress, counts)
                handed_over, stopping = now, halted()
            if len(values) >= FOLD_EVERY:
                latencies.fold()
    except OSError as error:
        # an iocb refused outright (a bad fd), io_getevents failing, preadv's own errors;
        # without its traceback: the frames hold buffer slices that would pin the mmap
        return error.with_traceback(None), offset
    finally:
        _hand_over(progress, counts)
        latencies.fold()
    return None


def _hand_over(progress: Progress, counts: list[int]) -> None:
    if any(counts):
        progress.add(*counts)
        counts[:] = [0, 0, 0, 0]


def run_workers(
    workers: list[Worker],
    cpus: list[int | None],
    caller: Caller | None,
    cancel: threading.Event,
    deadline: float,
) -> str:
    """Until every worker is done, `cancel` is set or time.perf_counter() passes `deadline`;
    -> "done", "cancelled" or "cap". Each worker runs on `cpus`' CPU (None: where it may),
    with the caller's credentials (None: the helper's), and a failure is in its `failure`.
    A thread that takes the caller's credentials keeps them for its life: the calling thread
    (the run's, which stays root) runs one worker itself only when none are to be taken."""
    if len(workers) == 1 and not needs_switch(caller):
        return _run_here(workers[0], cpus[0], cancel, deadline)
    return _run_on_threads(workers, cpus, caller, cancel, deadline)


def _outcome(worker: Worker, halted: Halted) -> None:
    """Run the worker; a failing system call outside any one I/O (io_getevents) is its
    failure, and so is a defect or MemoryError: the phase failed, it did not end."""
    try:
        failure = worker.run(halted)
    except OSError as error:
        failure = error.with_traceback(None), 0
    except Exception as error:
        failure = OSError(errno.EIO, f"the engine failed: {error!r}"), 0
    if failure is not None:
        worker.failure.append(failure)


def _run_here(worker: Worker, cpu: int | None, cancel: threading.Event, deadline: float) -> str:
    """The phase's one worker on this thread, kept on `cpu` meanwhile; -> "done",
    "cancelled" or "cap", as the worker saw them between its I/Os."""
    stopped_by = ["done"]

    def halted() -> bool:
        if cancel.is_set():
            stopped_by[0] = "cancelled"
        elif time.perf_counter() >= deadline:
            stopped_by[0] = "cap"
        else:
            return False
        return True

    allowed = os.sched_getaffinity(0)
    placed = cpu is not None and stay_on(cpu)
    try:
        _outcome(worker, halted)
    finally:
        if placed:
            with contextlib.suppress(OSError):  # a CPU unplugged meanwhile
                os.sched_setaffinity(0, allowed)
    return stopped_by[0]


def _run_on_threads(
    workers: list[Worker],
    cpus: list[int | None],
    caller: Caller | None,
    cancel: threading.Event,
    deadline: float,
) -> str:
    """A thread per worker; this thread watches cancel and the cap, and a failure halts the
    others. Every thread started has ended when this returns or raises: none may go on with
    I/O through the phase's descriptor (closed next, its number reused) nor into buffers
    that release() frees."""
    halt, finished, lock = threading.Event(), threading.Event(), threading.Lock()
    remaining = [len(workers)]

    def work(worker: Worker, cpu: int | None) -> None:
        try:
            if cpu is not None:
                stay_on(cpu)
            with as_caller_in_thread(caller):  # quotas and reserved blocks are the caller's
                _outcome(worker, halt.is_set)
            if worker.failure:
                halt.set()
        except CredentialsError as error:
            worker.failure.append((error, 0))
            halt.set()
        finally:
            with lock:
                remaining[0] -= 1
                if remaining[0] == 0:
                    finished.set()

    threads: list[threading.Thread] = []
    try:
        for worker, cpu in zip(workers, cpus, strict=True):
            threads.append(threading.Thread(target=work, args=(worker, cpu), daemon=True))
            threads[-1].start()
        return _watch(finished, cancel, deadline)
    finally:
        halt.set()
        for thread in threads:
            if thread.ident is not None:
                thread.join()


def _watch(finished: threading.Event, cancel: threading.Event, deadline: float) -> str:
    """Wait for the threads; -> "done", "cancelled" or "cap". Cancel is seen within _POLL_S."""
    while not finished.wait(_POLL_S):
        if cancel.is_set():
            return "cancelled"
        if time.perf_counter() >= deadline:
            return "cap"
    return "done"

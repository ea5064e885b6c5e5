"""Run one plan: queued through Linux AIO from one thread, or one I/O at a time (AIO at
queue depth 1, or preadv/pwritev).

Queued: up to `depth` I/Os in flight; each pass reaps what has completed (at least one),
asks the plan for each freed slot's next I/O, and submits them all with one io_submit.
A slot's latency runs from just before the io_submit that carried it to the return of the
io_getevents that reaped it: what the engine waited, as fio's total latency.

Counts go to `Progress` every few milliseconds, not per I/O (its lock costs as much as the
rest of an I/O's Python work); everything is handed over before a runner returns.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable

from stripewise.helper.engines.base import Progress
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
_HAND_OVER_NS = 5_000_000  # counts reach Progress at least this often


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
    engine apart from fio), and every synchronous lane."""
    clock, record, values = time.perf_counter_ns, latencies.values.append, latencies.values
    next_io, counts = plan.next, [0, 0, 0, 0]  # read bytes, write bytes, read ops, write ops
    handed_over, finished, offset = clock(), START, 0
    try:
        while not halted() and (io := next_io(0, finished)) is not None:
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
                handed_over = now
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

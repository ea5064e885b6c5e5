"""The built-in engine's AIO path under faults and at its limits: what a root helper must not do.

Every AIO context a process holds maps its completion ring into the process (`[aio]` in
/proc/self/maps), so counting those lines sees a leaked context in this process only, whatever
else runs on the machine (/proc/sys/fs/aio-nr is system-wide). Faults the kernel will not
produce on demand (an allocation or a thread start failing, io_getevents failing) are injected
at one seam each; all I/O is real, on O_DIRECT files and loop devices.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from stripewise.helper.engines import builtin, io_plans
from stripewise.helper.engines.base import Progress
from stripewise.helper.engines.builtin import BuiltinEngine
from stripewise.helper.engines.io_plans import RandomPlan, SequentialPlan
from stripewise.helper.engines.io_runners import run_queued
from stripewise.helper.engines.latency_histogram import LatencyHistogram
from stripewise.helper.engines.linux_aio import (
    EVENT_WORDS,
    PREAD,
    PWRITE,
    AioContext,
    AioSlots,
)
from stripewise.helper.target import Target
from stripewise.model.bench import BenchSpec, Phase
from tests.fixtures.aio import aio_rings
from tests.fixtures.held import hold_path
from tests.fixtures.loops import MiB, loop_device, needs_loop

BLOCK = 64 * 1024
Hold = Callable[[str], Target]


def _aio_works() -> bool:
    context = AioContext.open(1)
    if context is None:
        return False
    context.close()
    return True


needs_aio = pytest.mark.skipif(not _aio_works(), reason="no native AIO here")


def spec_at(directory: Path, size: int, **changes: object) -> BenchSpec:
    values: dict[str, object] = {
        "target": str(directory),
        "size_bytes": size,
        "block_bytes": BLOCK,
        "random_block_bytes": 4096,
        "streams": 3,
        "queue_depth": 8,
        "runtime_cap_s": 60.0,
    }
    values.update(changes)
    return BenchSpec(**values)  # type: ignore[arg-type]


def run(spec: BenchSpec, phase: Phase, target: Target) -> tuple[Progress, builtin.PhaseOutcome]:
    """One phase on an engine of its own, cleaned up after (also when the phase raises)."""
    progress, engine = Progress(BuiltinEngine.planned_bytes(spec, phase)), BuiltinEngine()
    try:
        outcome = engine.run_phase(spec, phase, 0, target, progress, threading.Event())
    finally:
        engine.cleanup()
    return progress, outcome


# 1. Memory safety and bounded resources: no context (and so no buffer the kernel may still
#    write into) outlives a phase, whatever way it ends.


@needs_aio
def test_contexts_do_not_outlive_complete_failed_and_cancelled_phases(
    tmp_path: Path, hold: Hold
) -> None:
    """Phases of one run share the streams' contexts (io_destroy costs 30-50 ms each);
    the engine's cleanup destroys them."""
    baseline = aio_rings()
    target = hold(str(tmp_path / "file"))
    spec = spec_at(tmp_path, 24 * BLOCK)
    engine = BuiltinEngine()
    for phase in (Phase.SEQ_WRITE, Phase.REWRITE, Phase.RANDOM_READ, Phase.MIXED):
        progress = Progress(BuiltinEngine.planned_bytes(spec, phase))
        outcome = engine.run_phase(spec, phase, 0, target, progress, threading.Event())
        assert outcome.error is None
        assert aio_rings() == baseline + spec.streams  # kept for the next phase, no more
    engine.cleanup()
    assert aio_rings() == baseline
    engine, cancel = BuiltinEngine(), threading.Event()
    cancel.set()
    outcome = engine.run_phase(spec, Phase.SEQ_WRITE, 0, target, Progress(1), cancel)
    assert outcome.error in (None, "cancelled")
    engine.cleanup()
    assert aio_rings() == baseline


@needs_aio
def test_a_context_that_may_have_io_in_flight_is_not_kept(
    tmp_path: Path, hold: Hold, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At QD1, io_getevents failing leaves an I/O in flight: the phase fails and its context
    is destroyed (waiting for that I/O) before the buffer goes, not kept for the next phase."""
    real_one_io = AioContext.one_io

    def fails_third_time(self: AioContext, slots: AioSlots) -> Callable[[int, int, int, int], int]:
        move, calls = real_one_io(self, slots), [0]

        def moving(opcode: int, offset: int, nbytes: int, into: int) -> int:
            calls[0] += 1
            if calls[0] == 3:
                self.submitter(slots)(1)  # the last transfer's iocb again: in flight now
                raise OSError(errno.EFAULT, "Bad address")
            return move(opcode, offset, nbytes, into)

        return moving

    baseline = aio_rings()
    target = hold(str(tmp_path / "file"))
    spec = spec_at(tmp_path, 24 * BLOCK, streams=1, queue_depth=1)
    engine = BuiltinEngine()
    monkeypatch.setattr(AioContext, "one_io", fails_third_time)
    outcome = engine.run_phase(
        spec, Phase.SEQ_WRITE, 0, target, Progress(24 * BLOCK), threading.Event()
    )
    assert outcome.error is not None and "Bad address" in outcome.error
    assert aio_rings() == baseline  # destroyed at once, not in the pool
    engine.cleanup()


@needs_aio
def test_an_allocation_failing_while_workers_are_built_leaves_no_context(
    tmp_path: Path, hold: Hold, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second stream's buffers cannot be allocated: the context opened for that stream
    must be destroyed too, not only those of the streams already built."""
    built = [0]

    def second_fails(*args: object) -> AioSlots:
        built[0] += 1
        if built[0] == 2:
            raise MemoryError("mmap: cannot allocate memory")
        return AioSlots(*args)  # type: ignore[arg-type]

    target = hold(str(tmp_path / "file"))
    baseline = aio_rings()
    monkeypatch.setattr(builtin, "AioSlots", second_fails)
    with pytest.raises(MemoryError):
        run(spec_at(tmp_path, 24 * BLOCK), Phase.SEQ_WRITE, target)
    assert aio_rings() == baseline


@needs_aio
def test_a_thread_that_cannot_start_leaves_no_io_behind(
    tmp_path: Path, hold: Hold, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second stream's thread cannot start: the first stream must not go on writing
    through a descriptor run_phase has closed (its number may be reused at once by another
    file the root helper opens), and its context must be destroyed."""
    real_thread = threading.Thread
    made = [0]

    class SecondCannotStart(threading.Thread):
        def start(self) -> None:
            made[0] += 1
            if made[0] == 2:
                raise RuntimeError("can't start new thread")
            super().start()

    target = hold(str(tmp_path / "file"))
    baseline = aio_rings()
    before = {thread.ident for thread in threading.enumerate()}
    monkeypatch.setattr(builtin.threading, "Thread", SecondCannotStart)
    spec = spec_at(tmp_path, 3 * 256 * BLOCK, queue_depth=1)
    with pytest.raises(RuntimeError):
        run(spec, Phase.SEQ_WRITE, target)
    monkeypatch.setattr(builtin.threading, "Thread", real_thread)
    left = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()]
    rings = aio_rings()
    for thread in left:  # let it end before the test's files go
        thread.join(30)
    assert left == [] and rings == baseline


def test_iocb_words_put_every_field_where_struct_iocb_has_it() -> None:
    """little-endian struct iocb: data, key|rw_flags, opcode(u16)|reqprio(i16)|fildes(u32),
    buf, nbytes, offset, reserved2, flags|resfd; the largest fd still fits."""
    slots = AioSlots(2, 4096, 2**31 - 1, bytes(4096))
    try:
        raw = bytes(slots.iocb_words.cast("B"))
        assert int.from_bytes(raw[0:8], "little") == 0
        assert int.from_bytes(raw[64:72], "little") == 1  # slot 1's data
        word = PWRITE | slots.fd_word
        field = word.to_bytes(8, "little")
        assert int.from_bytes(field[0:2], "little") == PWRITE  # aio_lio_opcode
        assert int.from_bytes(field[2:4], "little") == 0  # aio_reqprio
        assert int.from_bytes(field[4:8], "little") == 2**31 - 1  # aio_fildes
        assert word < 2**64
        assert raw[8:16] == bytes(8) and raw[48:64] == bytes(16)  # key, reserved2, flags
    finally:
        slots.close()


# 2. Counts: what Progress is handed is what completed, and a complete phase moves what
#    planned_bytes says.


@needs_aio
def test_progress_gets_what_completed_before_io_getevents_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    depth, blocks = 8, 64
    context = AioContext.open(depth)
    assert context is not None
    fd = os.open(tmp_path / "data", os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o600)
    slots = AioSlots(depth, BLOCK, fd, os.urandom(BLOCK))
    reaped_bytes = [0]
    real_reaper = AioContext.reaper

    def fails_second_time(self: AioContext, slots: AioSlots) -> Callable[[], int]:
        reap, calls = real_reaper(self, slots), [0]

        def reaping() -> int:
            calls[0] += 1
            if calls[0] == 2:
                raise OSError(errno.EFAULT, "Bad address")
            got = reap()
            words = slots.event_words
            reaped_bytes[0] += sum(words[i + 2] for i in range(0, got * EVENT_WORDS, 4))
            return got

        return reaping

    monkeypatch.setattr(AioContext, "reaper", fails_second_time)
    progress = Progress(blocks * BLOCK)
    try:
        plan = SequentialPlan(PWRITE, 0, blocks * BLOCK, BLOCK)
        with pytest.raises(OSError):
            run_queued(context, slots, plan, progress, lambda: False, LatencyHistogram())
    finally:
        context.close()
        slots.close()
        os.close(fd)
    assert reaped_bytes[0] > 0
    assert progress.snapshot().write_bytes == reaped_bytes[0]


@needs_aio
@pytest.mark.parametrize("depth", [1, 8])
def test_sequential_writes_at_depth_over_streams_cover_exactly_the_usable_bytes(
    tmp_path: Path, hold: Hold, depth: int
) -> None:
    size = 3 * 5 * BLOCK + 3 * 4096  # the last stream's last block is short
    path = tmp_path / "file"
    path.write_bytes(b"\0" * (size + BLOCK))  # the phase starts over from an empty file
    target = hold(str(path))
    _progress, outcome = run(spec_at(tmp_path, size, queue_depth=depth), Phase.SEQ_WRITE, target)
    assert outcome.error is None and outcome.write_bytes == size
    assert outcome.write_ops == size // BLOCK + 1
    data = path.read_bytes()
    pattern = data[:BLOCK]
    assert len(data) == size and len(set(pattern)) > 200  # incompressible, never zeros
    assert data == (pattern * (size // BLOCK + 1))[:size]


@needs_aio
@pytest.mark.parametrize("depth", [1, 8])
def test_rewrite_at_depth_over_streams_changes_every_block_exactly_once(
    tmp_path: Path, hold: Hold, depth: int
) -> None:
    size = 3 * 5 * BLOCK + 3 * 4096
    path = tmp_path / "file"
    target = hold(str(path))
    spec = spec_at(tmp_path, size, queue_depth=depth)
    run(spec, Phase.SEQ_WRITE, target)
    before = path.read_bytes()
    _progress, outcome = run(spec, Phase.REWRITE, target)
    after = path.read_bytes()
    assert outcome.error is None and (outcome.read_bytes, outcome.write_bytes) == (size, size)
    assert outcome.read_ops == outcome.write_ops == size // BLOCK + 1
    changed = [i for i in range(size) if after[i] != before[i]]
    assert changed == list(range(0, size, BLOCK))
    assert all(after[i] == before[i] ^ 0xFF for i in changed)


# 3. Honest latency: one figure per I/O, from before its io_submit to after its reap.


@needs_aio
def test_every_io_has_one_latency_within_the_time_it_was_in_flight(tmp_path: Path) -> None:
    depth, blocks = 8, 200
    context = AioContext.open(depth)
    assert context is not None
    fd = os.open(tmp_path / "data", os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o600)
    os.truncate(fd, blocks * BLOCK)
    slots = AioSlots(depth, BLOCK, fd, os.urandom(BLOCK))
    latencies = LatencyHistogram()
    progress = Progress(blocks * BLOCK)
    try:
        began = time.perf_counter_ns()
        plan = SequentialPlan(PREAD, 0, blocks * BLOCK, BLOCK)
        assert run_queued(context, slots, plan, progress, lambda: False, latencies) is None
        whole = time.perf_counter_ns() - began
    finally:
        context.close()
        slots.close()
        os.close(fd)
    assert latencies.total == progress.snapshot().read_ops == blocks
    assert 0 < (latencies.percentile_us(1.0) or 0) * 1000 <= whole * 1.01


# 5. Cancel and the runtime cap at queue depth 256.


@needs_loop
@needs_aio
@pytest.mark.parametrize("stop", ["cancel", "cap"])
def test_cancel_and_the_runtime_cap_end_a_queue_depth_256_phase_within_a_second(
    stop: str,
) -> None:
    """Random 4 KiB reads of a 4 GiB sparse loop image (holes in RAM: several seconds of
    work at QD256); the phase must end within a second of the cancel or the 1 s cap."""
    with loop_device(4 * 1024 * MiB) as loop:
        target = hold_path(loop.device)
        try:
            spec = BenchSpec(
                target=loop.device,
                size_bytes=4 * 1024 * MiB,
                block_bytes=4096,
                random_block_bytes=4096,
                streams=2,
                queue_depth=256,
                runtime_cap_s=1.0 if stop == "cap" else 60.0,
            )
            cancel, engine = threading.Event(), BuiltinEngine()
            asked: list[float] = []

            def cancel_soon() -> None:
                time.sleep(0.2)
                asked.append(time.monotonic())
                cancel.set()

            canceller = threading.Thread(target=cancel_soon)
            began = time.monotonic()
            if stop == "cancel":
                canceller.start()
            progress = Progress(engine.planned_bytes(spec, Phase.RANDOM_READ))
            outcome = engine.run_phase(spec, Phase.RANDOM_READ, 0, target, progress, cancel)
            returned = time.monotonic()
            if stop == "cancel":
                canceller.join()
        finally:
            target.close()
    assert progress.fraction < 1.0  # stopped early, not finished
    if stop == "cancel":
        assert outcome.error == "cancelled"
        assert returned - asked[0] < 1.0
    else:
        assert outcome.error is None
        assert any("runtime cap" in note for note in engine.notes)
        assert returned - began < 2.0


# 6. A worker that dies of something other than an OSError must fail the phase, not leave a
#    short phase that reads as a complete one.


@needs_aio
def test_a_worker_dying_of_an_unexpected_error_fails_the_phase(
    tmp_path: Path, hold: Hold, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = hold(str(tmp_path / "file"))
    spec = spec_at(tmp_path, 32 * BLOCK, streams=1, random_block_bytes=4096)
    run(spec, Phase.SEQ_WRITE, target)
    draws, real_draw = [0], RandomPlan._draw

    def second_draw_fails(self: RandomPlan) -> None:
        draws[0] += 1
        if draws[0] == 2:
            raise MemoryError("numpy: cannot allocate")
        real_draw(self)

    monkeypatch.setattr(io_plans, "_DRAW", 64)
    monkeypatch.setattr(RandomPlan, "_draw", second_draw_fails)
    monkeypatch.setattr(threading, "excepthook", lambda args: None)  # the dying thread's report
    _progress, outcome = run(spec, Phase.RANDOM_READ, target)
    assert outcome.read_ops < 32 * BLOCK // 4096
    assert outcome.error is not None

"""Linux AIO queues through ctypes against real O_DIRECT files: up to `depth` I/Os in flight,
data lands where asked, short transfers and errors surface as the phase's failure."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stripewise.helper.engines import builtin
from stripewise.helper.engines.base import Progress
from stripewise.helper.engines.io_plans import START, Io, SequentialPlan
from stripewise.helper.engines.io_runners import (
    Failure,
    run_one_at_a_time,
    run_queued,
)
from stripewise.helper.engines.latency_histogram import LatencyHistogram
from stripewise.helper.engines.linux_aio import PREAD, PWRITE, AioContext, AioSlots
from stripewise.model.bench import BenchSpec, Phase
from tests.fixtures.aio import aio_rings
from tests.fixtures.held import hold_path

BLOCK = 64 * 1024
DEPTH = 4


Runner = Callable[..., Failure | None]
RUNNERS = [
    pytest.param(run_queued, DEPTH, id="queued"),
    pytest.param(
        lambda context, slots, *rest: run_one_at_a_time(context.one_io(slots), *rest),
        1,
        id="one-at-a-time",
    ),
]


@pytest.fixture
def queue(
    tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[AioContext, AioSlots, int]]:
    depth = getattr(request, "param", DEPTH)
    context = AioContext.open(depth)
    if context is None:
        pytest.skip("this kernel or architecture has no native AIO")
    fd = os.open(tmp_path / "data", os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o600)
    slots = AioSlots(depth, BLOCK, fd, bytes(BLOCK))
    try:
        yield context, slots, fd
    finally:
        context.close()
        slots.close()
        os.close(fd)


class Numbered:
    """Writes block i holding byte i + 1 from whichever slot is free, like a plan does."""

    def __init__(self, slots: AioSlots, blocks: int) -> None:
        self.slots, self.left, self.next_block = slots, blocks, 0
        self.finished: list[int] = []

    def next(self, slot: int, finished: int) -> Io | None:
        self.finished.append(finished)
        if self.next_block == self.left:
            return None
        index, self.next_block = self.next_block, self.next_block + 1
        self.slots.buffers[slot * BLOCK : (slot + 1) * BLOCK] = bytes([index + 1]) * BLOCK
        return PWRITE, index * BLOCK, BLOCK


def in_flight_counter(
    context: AioContext, monkeypatch: pytest.MonkeyPatch
) -> Callable[[], list[int]]:
    """Wraps the context's submit and reap; -> the I/Os in flight after each submit."""
    seen: list[int] = []
    flying = [0]
    make_submit, make_reap = context.submitter, context.reaper

    def submitter(slots: AioSlots) -> Callable[[int], int]:
        submit = make_submit(slots)

        def counted(count: int) -> int:
            sent = submit(count)
            flying[0] += sent
            seen.append(flying[0])
            return sent

        return counted

    def reaper(slots: AioSlots) -> Callable[[], int]:
        reap = make_reap(slots)

        def counted() -> int:
            got = reap()
            flying[0] -= got
            return got

        return counted

    monkeypatch.setattr(context, "submitter", submitter)
    monkeypatch.setattr(context, "reaper", reaper)
    return lambda: seen


def test_up_to_depth_ios_fly_and_each_block_lands_at_its_offset(
    tmp_path: Path, queue: tuple[AioContext, AioSlots, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    context, slots, _fd = queue
    seen = in_flight_counter(context, monkeypatch)
    plan, progress, latencies = Numbered(slots, 16), Progress(16 * BLOCK), LatencyHistogram()
    assert run_queued(context, slots, plan, progress, lambda: False, latencies) is None
    assert max(seen()) == DEPTH and plan.finished.count(START) == DEPTH
    assert set(plan.finished) == {START, PWRITE}
    content = (tmp_path / "data").read_bytes()
    assert [content[i * BLOCK] for i in range(16)] == list(range(1, 17))
    assert all(content[i * BLOCK : (i + 1) * BLOCK] == bytes([i + 1]) * BLOCK for i in range(16))
    assert progress.snapshot().write_bytes == 16 * BLOCK
    assert progress.snapshot().write_ops == 16
    assert latencies.total == 16 and latencies.percentile_us(0.5) is not None


@pytest.mark.parametrize(("runner", "queue"), RUNNERS, indirect=["queue"])
def test_a_short_read_is_finished_in_its_slot_then_the_end_of_the_file_fails_the_phase(
    tmp_path: Path, queue: tuple[AioContext, AioSlots, int], runner: Runner
) -> None:
    context, slots, _fd = queue
    (tmp_path / "data").write_bytes(b"x" * (BLOCK + BLOCK // 2))  # one block and a half
    plan, progress = SequentialPlan(PREAD, 0, 2 * BLOCK, BLOCK), Progress(1)
    failure = runner(context, slots, plan, progress, lambda: False, LatencyHistogram())
    assert failure is not None
    error, offset = failure
    assert error.errno == errno.ENODATA and offset == BLOCK + BLOCK // 2
    assert progress.snapshot().read_bytes == BLOCK + BLOCK // 2


@pytest.mark.parametrize(("runner", "queue"), RUNNERS, indirect=["queue"])
def test_a_misaligned_io_fails_the_phase_and_the_context_stays_usable(
    tmp_path: Path, queue: tuple[AioContext, AioSlots, int], runner: Runner
) -> None:
    context, slots, _fd = queue
    plan = SequentialPlan(PWRITE, 1, BLOCK + 1, BLOCK)  # byte 1: not on a sector boundary
    failure = runner(context, slots, plan, Progress(1), lambda: False, LatencyHistogram())
    assert failure is not None and failure[0].errno == errno.EINVAL and failure[1] == 1
    plan = SequentialPlan(PWRITE, 0, 2 * BLOCK, BLOCK)
    assert runner(context, slots, plan, Progress(1), lambda: False, LatencyHistogram()) is None
    assert (tmp_path / "data").stat().st_size == 2 * BLOCK


@pytest.mark.parametrize(("runner", "depth"), RUNNERS)
def test_an_iocb_the_kernel_refuses_outright_is_the_phases_failure(
    runner: Runner, depth: int
) -> None:
    context = AioContext.open(depth)
    if context is None:
        pytest.skip("this kernel or architecture has no native AIO")
    slots = AioSlots(depth, BLOCK, -1 & 0xFFFFFFFF, bytes(BLOCK))  # no such fd
    try:
        plan = SequentialPlan(PREAD, 0, 8 * BLOCK, BLOCK)
        failure = runner(context, slots, plan, Progress(1), lambda: False, LatencyHistogram())
        assert failure is not None and failure[0].errno == errno.EBADF
    finally:
        context.close()
        slots.close()


def test_halting_stops_submitting_and_drains_what_is_in_flight(
    queue: tuple[AioContext, AioSlots, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    context, slots, _fd = queue
    seen = in_flight_counter(context, monkeypatch)
    plan, asked = Numbered(slots, 1000), [0]

    def halted() -> bool:
        asked[0] += 1
        return asked[0] > 3

    progress = Progress(1)
    assert run_queued(context, slots, plan, progress, halted, LatencyHistogram()) is None
    assert plan.next_block < 1000  # stopped early
    done = progress.snapshot().write_ops
    assert done == plan.next_block  # every submitted write was reaped and counted
    assert len(seen()) <= 4


def count_submits(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counted = {"ios": 0, "largest batch": 0}
    original = AioContext.submitter

    def submitter(self: AioContext, slots: AioSlots) -> Callable[[int], int]:
        submit = original(self, slots)

        def counting(count: int) -> int:
            counted["ios"] += count
            counted["largest batch"] = max(counted["largest batch"], count)
            return submit(count)

        return counting

    def one_io(self: AioContext, slots: AioSlots) -> Callable[[int, int, int, int], int]:
        move = original_one(self, slots)

        def counting(opcode: int, offset: int, nbytes: int, into: int) -> int:
            counted["ios"] += 1
            counted["largest batch"] = max(counted["largest batch"], 1)
            return move(opcode, offset, nbytes, into)

        return counting

    original_one = AioContext.one_io
    monkeypatch.setattr(AioContext, "submitter", submitter)
    monkeypatch.setattr(AioContext, "one_io", one_io)
    return counted


@pytest.mark.parametrize("depth", [1, 8])
def test_the_engine_submits_direct_phases_through_aio_at_the_queue_depth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, depth: int
) -> None:
    if AioContext.open(1) is None:
        pytest.skip("this kernel or architecture has no native AIO")
    counted = count_submits(monkeypatch)
    size = 16 * BLOCK
    spec = BenchSpec(
        target=str(tmp_path),
        size_bytes=size,
        block_bytes=BLOCK,
        random_block_bytes=4096,
        streams=1,
        queue_depth=depth,
    )
    engine, target = builtin.BuiltinEngine(), hold_path(str(tmp_path / "file"))
    ios = {}
    for phase in (Phase.SEQ_WRITE, Phase.REWRITE, Phase.SEQ_READ, Phase.RANDOM_READ):
        before = counted["ios"]
        outcome = engine.run_phase(spec, phase, 0, target, Progress(size), threading.Event())
        assert outcome.error is None
        ios[phase] = counted["ios"] - before
    target.close()
    assert ios == {
        Phase.SEQ_WRITE: 16,
        Phase.REWRITE: 32,
        Phase.SEQ_READ: 16,
        Phase.RANDOM_READ: size // 4096,
    }
    assert counted["largest batch"] == depth
    assert engine.last_mode == "direct" and engine.notes == []


def test_without_aio_the_engine_falls_back_to_preadv_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(AioContext, "open", classmethod(lambda cls, depth: None))
    size = 8 * BLOCK
    spec = BenchSpec(
        target=str(tmp_path), size_bytes=size, block_bytes=BLOCK, streams=1, queue_depth=4
    )
    engine, target = builtin.BuiltinEngine(), hold_path(str(tmp_path / "file"))
    write = engine.run_phase(spec, Phase.SEQ_WRITE, 0, target, Progress(size), threading.Event())
    read = engine.run_phase(spec, Phase.RANDOM_READ, 0, target, Progress(size), threading.Event())
    target.close()
    assert (write.error, read.error) == (None, None)
    assert (write.write_bytes, read.read_bytes) == (size, size)
    assert any("Linux AIO was not available" in note for note in engine.notes)


def test_a_context_refused_for_one_stream_runs_the_whole_phase_one_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fs.aio-max-nr is system-wide: any local user can use it up between two streams."""
    if AioContext.open(1) is None:
        pytest.skip("this kernel or architecture has no native AIO")
    original, opened = AioContext.open.__func__, [0]

    def second_refused(cls: type[AioContext], depth: int) -> AioContext | None:
        opened[0] += 1
        return None if opened[0] == 2 else original(cls, depth)

    monkeypatch.setattr(AioContext, "open", classmethod(second_refused))
    submits = count_submits(monkeypatch)
    size = 8 * BLOCK
    spec = BenchSpec(
        target=str(tmp_path), size_bytes=size, block_bytes=BLOCK, streams=3, queue_depth=4
    )
    engine, target = builtin.BuiltinEngine(), hold_path(str(tmp_path / "file"))
    before = aio_rings()
    write = engine.run_phase(spec, Phase.SEQ_WRITE, 0, target, Progress(size), threading.Event())
    engine.cleanup()
    target.close()
    assert write.error is None and write.write_bytes == 8 * BLOCK
    assert submits["ios"] == 0  # not one stream through AIO
    assert aio_rings() == before  # the first stream's context was given back, then freed
    assert any("fs.aio-max-nr" in note for note in engine.notes)

"""The built-in engine for real: files, a raw loop device, ext4 and xfs made on loop devices.

Loop images live in /dev/shm (RAM) so the runs are quick; every loop device is detached and
every mount unmounted in finally blocks, also when a test fails (tests/fixtures/loops.py).
"""

from __future__ import annotations

import errno
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import stripewise
from stripewise.helper.engines import builtin
from stripewise.helper.engines.base import EngineError, Progress
from stripewise.helper.engines.builtin import BuiltinEngine
from stripewise.helper.target import Target
from stripewise.model.bench import BenchSpec, Phase, PhaseOutcome
from tests.fixtures.bench_specs import spec_for

# Loop is unused here: tests/test_cli_tune_write.py imports it from this module for now
from tests.fixtures.loops import Loop, MiB, loop_device, mounted, needs_loop  # noqa: F401

Hold = Callable[[str], Target]


def run(engine: BuiltinEngine, spec: BenchSpec, phase: Phase, target: Target) -> PhaseOutcome:
    progress = Progress(engine.planned_bytes(spec, phase))
    outcome = engine.run_phase(spec, phase, 0, target, progress, threading.Event())
    if outcome.error is None:
        assert progress.fraction == 1.0
    return outcome


def check_every_phase(engine: BuiltinEngine, spec: BenchSpec, target: Target) -> None:
    size, random_total = spec.size_bytes, engine.planned_bytes(spec, Phase.RANDOM_READ)
    outcomes = {phase: run(engine, spec, phase, target) for phase in Phase}
    for phase, outcome in outcomes.items():
        assert outcome.error is None, (phase, outcome.error)
        assert outcome.elapsed_s > 0 and outcome.mb_s > 0
        assert outcome.lat_p50_us is not None and outcome.lat_p99_us is not None
        assert 0 < outcome.lat_p50_us <= outcome.lat_p99_us
    moved = {p: (o.read_bytes, o.write_bytes) for p, o in outcomes.items()}
    assert moved[Phase.SEQ_WRITE] == (0, size)
    assert moved[Phase.REWRITE] == (size, size)
    assert moved[Phase.SEQ_READ] == (size, 0)
    assert moved[Phase.RANDOM_READ] == (random_total, 0)
    assert moved[Phase.RANDOM_WRITE] == (0, random_total)
    reads, writes = moved[Phase.MIXED]
    assert reads + writes == random_total and 0.6 < reads / random_total < 0.8
    assert outcomes[Phase.SEQ_READ].read_ops == size // spec.block_bytes
    assert outcomes[Phase.RANDOM_READ].read_ops == random_total // spec.random_block_bytes


def test_version_is_stripewise_version() -> None:
    assert BuiltinEngine().version() == stripewise.__version__


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "buffered"])
def test_every_phase_on_a_file(tmp_path: Path, direct: bool, hold: Hold) -> None:
    engine = BuiltinEngine()
    spec = spec_for(str(tmp_path), direct=direct)
    target = hold(str(tmp_path / ".stripewise-bench-test"))
    engine.prepare(spec, target)
    check_every_phase(engine, spec, target)
    assert engine.last_mode == ("direct" if direct else "buffered")
    engine.cleanup()
    target.close()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("depth", [1, 8])
def test_rewrite_changes_every_block_in_place(tmp_path: Path, hold: Hold, depth: int) -> None:
    engine, path = BuiltinEngine(), str(tmp_path / "file")
    spec = spec_for(str(tmp_path), size=4 * MiB, streams=1, queue_depth=depth)
    run(engine, spec, Phase.SEQ_WRITE, hold(path))
    before = Path(path).read_bytes()
    assert run(engine, spec, Phase.REWRITE, hold(path)).error is None
    after = Path(path).read_bytes()
    assert len(after) == len(before) == 4 * MiB
    for block in range(4):
        start = block * MiB
        assert after[start] == before[start] ^ 0xFF
        assert after[start + 1 : start + MiB] == before[start + 1 : start + MiB]


def test_read_phases_need_the_file_laid_out(tmp_path: Path, hold: Hold) -> None:
    engine, path = BuiltinEngine(), str(tmp_path / "file")
    spec = spec_for(str(tmp_path), phases=(Phase.SEQ_READ,))
    target = hold(path)  # created empty
    with pytest.raises(EngineError, match="missing or sparse"):
        run(engine, spec, Phase.SEQ_READ, target)
    os.truncate(path, spec.size_bytes)  # sparse: holes would read as fast zeros
    with pytest.raises(EngineError, match="sparse"):
        run(engine, spec, Phase.SEQ_READ, target)
    progress = Progress(spec.size_bytes)
    engine.layout(spec, target, progress, threading.Event())
    assert progress.snapshot().write_bytes == spec.size_bytes
    written = os.stat(path).st_mtime_ns
    engine.layout(spec, target, Progress(spec.size_bytes), threading.Event())  # already there
    assert os.stat(path).st_mtime_ns == written
    assert run(engine, spec, Phase.SEQ_READ, target).read_bytes == spec.size_bytes


def test_o_direct_refused_falls_back_to_buffered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hold: Hold
) -> None:
    real_open = os.open

    def no_direct(path: str, flags: int, mode: int = 0o777) -> int:
        if flags & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_open(path, flags, mode)

    target = hold(str(tmp_path / "file"))
    monkeypatch.setattr(builtin.os, "open", no_direct)
    engine = BuiltinEngine()
    spec = spec_for(str(tmp_path), size=4 * MiB)
    engine.prepare(spec, target)
    assert engine.last_mode == "buffered"
    assert run(engine, spec, Phase.SEQ_WRITE, target).error is None
    assert engine.last_mode == "buffered"
    assert any("refuses O_DIRECT" in note for note in engine.notes)


def test_progress_counting_is_cheap() -> None:
    """Progress.add runs after every I/O: it must cost well under 1 % of a 1 MiB I/O."""
    progress, count = Progress(1), 200_000
    started = time.perf_counter()
    for _ in range(count):
        progress.add(read_bytes=MiB, read_ops=1)
    per_call = (time.perf_counter() - started) / count
    assert per_call < 2e-6  # a 1 MiB I/O takes >= 100 us even from RAM here


@needs_loop
@pytest.mark.parametrize(("streams", "depth"), [(1, 1), (2, 2), (3, 32)])
def test_every_phase_on_a_raw_loop_device(hold: Hold, streams: int, depth: int) -> None:
    with loop_device(32 * MiB) as loop:
        engine, target = BuiltinEngine(), hold(loop.device)
        spec = spec_for(loop.device, streams=streams, queue_depth=depth)
        engine.prepare(spec, target)
        check_every_phase(engine, spec, target)
        target.close()
        assert engine.last_mode == "direct"
        engine.cleanup()
        assert os.path.exists(loop.device)


@needs_loop
def test_small_blocks_on_a_4k_sector_device_fall_back_to_buffered(hold: Hold) -> None:
    with loop_device(8 * MiB, "--sector-size", "4096") as loop:
        engine, target = BuiltinEngine(), hold(loop.device)
        spec = spec_for(loop.device, size=4 * MiB, random_block_bytes=512)
        assert builtin.logical_block_bytes(target.fd) == 4096
        engine.prepare(spec, target)
        assert engine.last_mode == "buffered"
        assert run(engine, spec, Phase.RANDOM_WRITE, target).error is None
        target.close()
        assert any("4096 B logical block size" in note for note in engine.notes)


@needs_loop
@pytest.mark.parametrize(("fstype", "size"), [("ext4", 64 * MiB), ("xfs", 320 * MiB)])
def test_every_phase_on_a_filesystem(fstype: str, size: int, hold: Hold) -> None:
    if shutil.which(f"mkfs.{fstype}") is None:
        pytest.skip(f"mkfs.{fstype} is not installed")
    with loop_device(size) as loop, mounted(loop, fstype) as mountpoint:
        engine, target = BuiltinEngine(), hold(os.path.join(mountpoint, ".stripewise-bench-1"))
        spec = spec_for(mountpoint)
        engine.prepare(spec, target)
        check_every_phase(engine, spec, target)
        assert engine.last_mode == "direct"
        engine.cleanup()
        target.close()
        assert [n for n in os.listdir(mountpoint) if n != "lost+found"] == []


@needs_loop
@pytest.mark.parametrize("direct", [True, False], ids=["direct", "buffered"])
def test_a_full_disk_ends_the_phase_with_a_clear_error(direct: bool, hold: Hold) -> None:
    with loop_device(32 * MiB) as loop, mounted(loop, "ext4") as mountpoint:
        engine, target = BuiltinEngine(), hold(os.path.join(mountpoint, "big"))
        spec = spec_for(mountpoint, size=64 * MiB, direct=direct)
        outcome = run(engine, spec, Phase.SEQ_WRITE, target)
        target.close()
        assert outcome.error is not None and "the disk filled up after" in outcome.error
        assert 8 * MiB < outcome.write_bytes < 64 * MiB  # the partial figures are kept
        assert outcome.elapsed_s > 0 and outcome.mb_s > 0
        engine.cleanup()


@needs_loop
def test_cancel_stops_within_a_second_and_keeps_partial_figures(hold: Hold) -> None:
    with loop_device(2**30) as loop:  # sparse: random reads of holes, nothing allocated
        engine, target = BuiltinEngine(), hold(loop.device)
        spec = spec_for(loop.device, size=2**30, queue_depth=4)
        progress, cancel = (
            Progress(engine.planned_bytes(spec, Phase.RANDOM_READ)),
            threading.Event(),
        )
        cancelled_at: list[float] = []

        def press_cancel() -> None:
            cancelled_at.append(time.perf_counter())
            cancel.set()

        threading.Timer(0.3, press_cancel).start()
        outcome = engine.run_phase(spec, Phase.RANDOM_READ, 0, target, progress, cancel)
        returned = time.perf_counter()
        target.close()
        assert cancelled_at, "the phase ended before cancel: make it longer"
        assert returned - cancelled_at[0] < 1.0
        assert outcome.error == "cancelled"
        assert 0 < outcome.read_ops < 2**30 // 4096  # partial figures kept
        assert outcome.read_bytes == progress.snapshot().read_bytes


@needs_loop
def test_the_runtime_cap_ends_a_phase_without_error(hold: Hold) -> None:
    with loop_device(2**30) as loop:
        engine, target = BuiltinEngine(), hold(loop.device)
        spec = spec_for(loop.device, size=2**30, runtime_cap_s=1.0, streams=1, queue_depth=1)
        progress = Progress(engine.planned_bytes(spec, Phase.RANDOM_READ))
        outcome = engine.run_phase(spec, Phase.RANDOM_READ, 0, target, progress, threading.Event())
        target.close()
        assert outcome.error is None
        assert progress.fraction < 1.0
        assert 1.0 <= outcome.elapsed_s < 1.5
        assert 0 < outcome.read_ops < 2**30 // 4096
        assert any("runtime cap" in note for note in engine.notes)

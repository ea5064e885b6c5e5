"""FioEngine with the real fio: files, a raw loop device, ext4 on a loop device, a disk that
fills up, cancelling; recorded failures replayed through a stand-in fio script."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stripewise.fio.report import totals
from stripewise.fio.stream import StatusStream
from stripewise.helper.engines.base import Counters, EngineError, Progress
from stripewise.helper.engines.builtin import logical_block_bytes
from stripewise.helper.engines.fio import FioEngine
from stripewise.helper.target import Target
from stripewise.model.bench import BenchSpec, Phase, PhaseOutcome

MiB = 2**20
FIXTURES = Path(__file__).parents[2] / "fixtures" / "fio"
Attach = Callable[[int], str]
Hold = Callable[[str], Target]

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not all(map(shutil.which, ("losetup", "mkfs.ext4", "mount"))),
    reason="loop devices and mounts need root, losetup and mkfs.ext4",
)


@pytest.fixture
def engine() -> Iterator[FioEngine]:
    found = FioEngine()
    yield found
    found.cleanup()


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[bytes]]:
    """Every fio run the engine starts (not its probes)."""
    found: list[subprocess.Popen[bytes]] = []
    real = subprocess.Popen

    class Recording(real):  # type: ignore[valid-type,misc]
        def __init__(self, args: list[str], **kwargs: object) -> None:
            super().__init__(args, **kwargs)
            if any(str(a).startswith("--status-interval=") for a in args):
                found.append(self)

    monkeypatch.setattr(subprocess, "Popen", Recording)
    return found


@pytest.fixture
def attach(tmp_path: Path, request: pytest.FixtureRequest) -> Attach:
    """Loop devices over sparse files (direct I/O on the backing file), detached afterwards."""

    def attach(size: int) -> str:
        image = tmp_path / f"loop-{len(list(tmp_path.glob('loop-*')))}.img"
        image.touch()
        os.truncate(image, size)
        request.addfinalizer(image.unlink)
        done = subprocess.run(
            ["losetup", "-f", "--show", "--direct-io=on", str(image)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            pytest.skip(f"no loop device: {done.stderr.strip()}")
        device = done.stdout.strip()
        request.addfinalizer(lambda: subprocess.run(["losetup", "-d", device], check=True))
        return device

    return attach


@pytest.fixture
def ext4(attach: Attach, tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[int], Path]:
    """ext4 on a loop device, mounted on a temporary folder; unmounted before the detach."""

    def make(size: int) -> Path:
        device = attach(size)
        subprocess.run(["mkfs.ext4", "-q", device], check=True)
        mountpoint = tmp_path / f"mnt-{Path(device).name}"
        mountpoint.mkdir()
        subprocess.run(["mount", device, str(mountpoint)], check=True)
        request.addfinalizer(lambda: subprocess.run(["umount", str(mountpoint)], check=True))
        return mountpoint

    return make


def run(
    engine: FioEngine,
    spec: BenchSpec,
    phase: Phase,
    target: Target,
    cancel: threading.Event | None = None,
) -> tuple[PhaseOutcome, Progress]:
    progress = Progress(engine.planned_bytes(spec, phase))
    outcome = engine.run_phase(spec, phase, 1, target, progress, cancel or threading.Event())
    label = f"{spec.target} {phase} {'direct' if spec.direct else 'buffered'}"
    print(f"{label}: {outcome.mb_s:.0f} MB/s, {outcome.iops:.0f} IOPS, p50 {outcome.lat_p50_us} us")
    return outcome, progress


def counters(outcome: PhaseOutcome) -> Counters:
    return Counters(outcome.read_bytes, outcome.write_bytes, outcome.read_ops, outcome.write_ops)


def write_then_read(engine: FioEngine, spec: BenchSpec, target: Target) -> None:
    engine.prepare(spec, target)
    for phase, moved in ((Phase.SEQ_WRITE, "write"), (Phase.SEQ_READ, "read")):
        outcome, progress = run(engine, spec, phase, target)
        assert outcome.error is None
        assert getattr(outcome, f"{moved}_bytes") == spec.size_bytes
        assert getattr(outcome, f"{moved}_ops") == spec.size_bytes // spec.block_bytes
        assert outcome.read_bytes + outcome.write_bytes == spec.size_bytes
        assert progress.snapshot() == counters(outcome)
        assert outcome.elapsed_s > 0
        if spec.direct:
            assert outcome.lat_p50_us is not None and outcome.lat_p99_us is not None
            assert 0 < outcome.lat_p50_us <= outcome.lat_p99_us


def group_members(pgid: int) -> list[str]:
    """Process states of a process group ('Z' zombies wait for init to reap them)."""
    out = subprocess.run(["ps", "-o", "stat=", "-g", str(pgid)], capture_output=True, text=True)
    return out.stdout.split()


def fake_fio(
    tmp_path: Path, name: str | None, returncode: int = 0, stubborn: bool = False
) -> FioEngine:
    """A stand-in fio printing a recording (`stubborn`: the first object, then it ignores
    SIGINT and SIGTERM and sleeps in two processes)."""
    script = tmp_path / "fake-fio"
    lines = ["#!/bin/bash"]
    if name is not None:
        out, err = FIXTURES / f"{name}.json.txt", FIXTURES / f"{name}.stderr.txt"
        lines.append(f"sed '/^}}$/q' {out}" if stubborn else f"cat {out}")
        if err.exists():
            lines.append(f"cat {err} >&2")
    if stubborn:
        lines += ["trap '' INT TERM", "sleep 30 &", "sleep 30"]
    lines.append(f"exit {returncode}")
    script.write_text("\n".join(lines) + "\n")
    script.chmod(0o755)
    return FioEngine(fio=str(script), ioengine="libaio")


# --- real fio on files ---------------------------------------------------------------------


@needs_fio
@pytest.mark.parametrize(
    ("direct", "ioengine"), [(True, "io_uring"), (True, "libaio"), (False, None)]
)
def test_file_write_then_read(
    tmp_path: Path, direct: bool, ioengine: str | None, hold: Hold
) -> None:
    engine = FioEngine(ioengine=ioengine)
    try:
        spec = BenchSpec(str(tmp_path), 64 * MiB, direct=direct, queue_depth=4, engine="fio")
        write_then_read(engine, spec, hold(str(tmp_path / "stripewise.test")))
    finally:
        engine.cleanup()


@needs_fio
def test_every_phase_with_two_streams(tmp_path: Path, engine: FioEngine, hold: Hold) -> None:
    spec = BenchSpec(str(tmp_path), 32 * MiB, streams=2, queue_depth=4, phases=tuple(Phase))
    target = hold(str(tmp_path / "stripewise.test"))
    engine.prepare(spec, target)
    for phase in Phase:
        outcome, _ = run(engine, spec, phase, target)
        assert outcome.error is None
        moved = outcome.read_bytes + outcome.write_bytes
        assert moved == engine.planned_bytes(spec, phase)
        assert bool(outcome.read_bytes) is phase.reads
        assert bool(outcome.write_bytes) is phase.writes
        if phase is Phase.REWRITE:  # every block read and written about once
            assert spec.size_bytes * 0.25 < outcome.read_bytes < spec.size_bytes * 1.75
        if phase is Phase.MIXED:
            assert 0.6 < outcome.read_bytes / moved < 0.8
        if phase in (Phase.RANDOM_READ, Phase.RANDOM_WRITE, Phase.MIXED):
            assert outcome.read_ops + outcome.write_ops == moved // spec.random_block_bytes


def small_random_reads(
    tmp_path: Path, engine: FioEngine, cap_s: float, hold: Hold
) -> tuple[BenchSpec, Target]:
    """64 MiB in 512 B random reads at depth 1: over a second even on a fast NVMe disk."""
    target = hold(str(tmp_path / "stripewise.test"))
    if logical_block_bytes(target.fd) > 512:
        pytest.skip("the temporary folder's disk has logical blocks above 512 B")
    spec = BenchSpec(str(tmp_path), 64 * MiB, random_block_bytes=512, runtime_cap_s=cap_s)
    engine.prepare(spec, target)
    engine.layout(spec, target, Progress(64 * MiB), threading.Event())
    return spec, target


@needs_fio
def test_progress_grows_while_fio_runs(tmp_path: Path, engine: FioEngine, hold: Hold) -> None:
    spec, target = small_random_reads(tmp_path, engine, 2, hold)
    progress = Progress(engine.planned_bytes(spec, Phase.RANDOM_READ))
    seen: list[int] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            seen.append(progress.snapshot().read_bytes)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        outcome = engine.run_phase(spec, Phase.RANDOM_READ, 1, target, progress, threading.Event())
    finally:
        done.set()
        sampler.join()
    assert outcome.error is None and 1 <= outcome.elapsed_s <= 2.2  # runtime cap 2 s
    assert seen == sorted(seen)
    assert any(0 < moved < outcome.read_bytes for moved in seen)  # a status object mid-run
    assert progress.snapshot().read_bytes == outcome.read_bytes
    print(f"512 B random reads: {outcome.iops:.0f} IOPS, p99 {outcome.lat_p99_us} us")


@needs_fio
def test_cancel_stops_fio_within_a_second(
    tmp_path: Path, engine: FioEngine, started: list[subprocess.Popen[bytes]], hold: Hold
) -> None:
    spec, target = small_random_reads(tmp_path, engine, 60, hold)
    progress, cancel = Progress(64 * MiB), threading.Event()
    outcomes: list[PhaseOutcome] = []
    worker = threading.Thread(
        target=lambda: outcomes.append(
            engine.run_phase(spec, Phase.RANDOM_READ, 1, target, progress, cancel)
        )
    )
    worker.start()
    deadline = time.monotonic() + 5
    while progress.snapshot().read_bytes == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    cancel.set()
    asked = time.monotonic()
    worker.join(5)
    assert time.monotonic() - asked < 1.0
    (outcome,) = outcomes
    assert outcome.error == "cancelled"
    assert outcome.read_bytes >= progress.snapshot().read_bytes > 0
    fio = started[-1]
    assert fio.returncode is not None
    assert group_members(fio.pid) == []
    mine = subprocess.run(
        ["pgrep", "-x", "-P", str(os.getpid()), "fio"], capture_output=True, text=True
    )
    assert mine.stdout == ""  # no fio left among this process's children


# --- real fio on loop devices ------------------------------------------------------------


@needs_fio
@needs_root
def test_raw_loop_device(attach: Attach, engine: FioEngine, hold: Hold) -> None:
    device = attach(128 * MiB)
    spec = BenchSpec(device, 64 * MiB, queue_depth=4, random_block_bytes=4096)
    target = hold(device)
    write_then_read(engine, spec, target)
    outcome, _ = run(engine, spec, Phase.RANDOM_READ, target)
    assert outcome.error is None and outcome.read_bytes == 64 * MiB


@needs_fio
@needs_root
@pytest.mark.parametrize("direct", [True, False])
def test_ext4_on_a_loop_device(
    ext4: Callable[[int], Path], engine: FioEngine, direct: bool, hold: Hold
) -> None:
    mountpoint = ext4(128 * MiB)
    spec = BenchSpec(str(mountpoint), 64 * MiB, direct=direct, queue_depth=4)
    target = hold(str(mountpoint / "stripewise.test"))
    write_then_read(engine, spec, target)
    target.close()


@needs_fio
@needs_root
@pytest.mark.parametrize("direct", [True, False])
def test_a_filling_disk_is_named(
    ext4: Callable[[int], Path], engine: FioEngine, direct: bool, hold: Hold
) -> None:
    mountpoint = ext4(24 * MiB)
    spec = BenchSpec(str(mountpoint), 64 * MiB, direct=direct, streams=2)
    target = hold(str(mountpoint / "stripewise.test"))
    engine.prepare(spec, target)
    outcome, _ = run(engine, spec, Phase.SEQ_WRITE, target)
    target.close()
    assert outcome.error is not None
    assert outcome.error.startswith("the disk filled up: ")
    assert "No space left on device" in outcome.error
    assert 0 < outcome.write_bytes < 24 * MiB


# --- checks before fio runs --------------------------------------------------------------


@needs_fio
def test_reads_need_a_laid_out_file(tmp_path: Path, engine: FioEngine, hold: Hold) -> None:
    spec = BenchSpec(str(tmp_path), 8 * MiB)
    path = tmp_path / "stripewise.test"
    target = hold(str(path))  # created empty
    with pytest.raises(EngineError, match="lay out the test file first"):
        run(engine, spec, Phase.SEQ_READ, target)
    assert path.stat().st_size == 0  # fio never ran
    os.truncate(path, 8 * MiB)  # sparse: reads would measure holes
    with pytest.raises(EngineError, match="missing or sparse"):
        run(engine, spec, Phase.RANDOM_READ, target)
    engine.layout(spec, target, Progress(8 * MiB), threading.Event())
    written = path.stat().st_mtime_ns
    engine.layout(spec, target, Progress(8 * MiB), threading.Event())  # already full
    assert path.stat().st_mtime_ns == written
    assert run(engine, spec, Phase.SEQ_READ, target)[0].read_bytes == 8 * MiB


@needs_fio
def test_prepare(tmp_path: Path, engine: FioEngine, hold: Hold) -> None:
    target = hold(str(tmp_path / "stripewise.test"))
    engine.prepare(BenchSpec(str(tmp_path), 8 * MiB), target)
    assert engine._ioengine in ("io_uring", "libaio")
    with pytest.raises(EngineError, match="streams"):
        engine.prepare(BenchSpec(str(tmp_path), 8 * MiB, streams=65), target)
    tiny = BenchSpec(str(tmp_path), 8192, block_bytes=4096, random_block_bytes=65536)
    with pytest.raises(EngineError, match="smaller than one block"):
        engine.prepare(tiny, target)
    assert list(tmp_path.iterdir()) == [tmp_path / "stripewise.test"]  # no probe file left


@needs_fio
def test_version_and_a_job_given_as_arguments(
    tmp_path: Path, started: list[subprocess.Popen[bytes]], hold: Hold
) -> None:
    """No job file, no folder: fio gets its job on the command line and the test file as the
    held descriptor it inherits, under its own number."""
    engine = FioEngine()
    assert re.fullmatch(r"\d+\.\d+\S*", engine.version())
    target = hold(str(tmp_path / "f"))
    outcome, _ = run(engine, BenchSpec(str(tmp_path), MiB), Phase.SEQ_WRITE, target)
    assert outcome.error is None and outcome.write_bytes == MiB
    argv = started[-1].args
    assert argv[: argv.index("--") + 1] == ["setpriv", "--pdeathsig=KILL", "--"]
    assert f"--filename=/proc/self/fd/{target.fd}" in argv and "--name=seq_write" in argv
    assert not any(a.endswith(".fio") for a in argv)
    assert os.listdir(tmp_path) == ["f"] and (tmp_path / "f").stat().st_size == MiB


def test_fio_missing_is_an_engine_error(tmp_path: Path, hold: Hold) -> None:
    engine = FioEngine(fio=str(tmp_path / "no-fio"), ioengine="libaio")
    with pytest.raises(EngineError, match="fio cannot run"):
        engine.version()
    outcome, _ = run(
        engine, BenchSpec(str(tmp_path), MiB), Phase.SEQ_WRITE, hold(str(tmp_path / "f"))
    )
    assert outcome.error is not None and "no-fio" in outcome.error
    engine.cleanup()


# --- recorded output through a stand-in fio ---------------------------------------------------


@pytest.mark.parametrize(
    ("name", "returncode", "error"),
    [
        (
            "enospc_buffered",
            1,
            "the disk filled up: fio: io_u error on file /tmp/fiorec/tiny/f: "
            "No space left on device: write offset=16777216, buflen=1048576",
        ),
        ("not_a_directory", 1, "fio: failed to create dir (/tmp/fiorec/plainfile/sub): Not a"),
        ("direct_randread", 0, None),
        ("direct_randread", 3, "fio exited with status 3"),
        (None, 0, "fio printed no result"),
    ],
)
def test_recorded_outcomes(
    tmp_path: Path, name: str | None, returncode: int, error: str | None, hold: Hold
) -> None:
    engine = fake_fio(tmp_path, name, returncode)
    target = hold(str(tmp_path / "x"))
    outcome, progress = run(engine, BenchSpec(str(tmp_path), MiB), Phase.SEQ_WRITE, target)
    engine.cleanup()
    assert outcome.error == error or (error and outcome.error and outcome.error.startswith(error))
    assert progress.snapshot() == counters(outcome)
    if name == "direct_randread":
        assert (outcome.read_bytes, outcome.elapsed_s) == (128 * MiB, 2.029)
        assert outcome.lat_p50_us is not None and outcome.lat_p99_us is not None


def test_a_stubborn_fio_is_killed(
    tmp_path: Path, started: list[subprocess.Popen[bytes]], hold: Hold
) -> None:
    engine = fake_fio(tmp_path, "direct_randread", stubborn=True)
    target = hold(str(tmp_path / "x"))
    progress, cancel = Progress(128 * MiB), threading.Event()
    outcomes: list[PhaseOutcome] = []
    spec = BenchSpec(str(tmp_path), MiB)
    worker = threading.Thread(
        target=lambda: outcomes.append(
            engine.run_phase(spec, Phase.SEQ_WRITE, 1, target, progress, cancel)
        )
    )
    worker.start()
    deadline = time.monotonic() + 5
    while progress.snapshot().read_bytes == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    cancel.set()
    asked = time.monotonic()
    worker.join(5)
    assert 0.9 < time.monotonic() - asked < 1.5  # SIGINT, SIGTERM ignored: SIGKILL at 1 s
    engine.cleanup()
    (outcome,) = outcomes
    assert outcome.error == "cancelled"
    first = StatusStream().feed((FIXTURES / "direct_randread.json.txt").read_bytes())[0]
    moved = totals(first)  # the one status object it printed
    assert counters(outcome) == Counters(
        moved.read_bytes, moved.write_bytes, moved.read_ops, moved.write_ops
    )
    assert set(group_members(started[-1].pid)) <= {"Z"}  # orphans left for init to reap


def test_a_hostile_fio_is_an_error_outcome_with_bounded_memory(tmp_path: Path) -> None:
    """A fio made to print 200 MB of one object, a 10 MiB line, NaN figures, a result of the
    wrong types and 5 MiB of complaints: the phase ends with an error, the helper keeps going."""
    script = tmp_path / "hostile-fio"
    script.write_text(
        "#!/usr/bin/python3\n"
        "import sys\n"
        "o = sys.stdout\n"
        "o.write('{\\n')\n"
        "for i in range(200000): o.write('  \"x%d\": \"%s\",\\n' % (i, 'a' * 1000))\n"
        "o.write('}\\n' + 'b' * (10 * 2**20) + '\\n')\n"
        'o.write(\'{\\n  "jobs": [{"read": {"io_bytes": NaN}}]\\n}\\n\')\n'
        'o.write(\'{\\n  "jobs": [{"job_runtime": "soon", "read": {}}]\\n}\\n\')\n'
        "sys.stderr.write('e' * (5 * 2**20) + '\\nlast complaint\\n')\n"
    )
    script.chmod(0o755)
    # in a fresh process, whose peak memory is this phase's alone
    code = (
        "import resource, threading\n"
        "from stripewise.helper.engines.base import Progress\n"
        "from stripewise.helper.engines.fio import FioEngine\n"
        "from stripewise.model.bench import BenchSpec, Phase\n"
        "from tests.fixtures.held import hold_path\n"
        f"target = hold_path({str(tmp_path / 'f')!r})\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        f"engine = FioEngine(fio={str(script)!r}, ioengine='libaio')\n"
        f"spec = BenchSpec({str(tmp_path)!r}, 2**20)\n"
        "o = engine.run_phase(spec, Phase.SEQ_WRITE, 1, target, Progress(2**20), "
        "threading.Event())\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
        "print(o.error)\n"
        "target.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    grown_kib, error = done.stdout.splitlines()
    assert "could not be read" in error
    assert int(grown_kib) < 64 * 1024, f"reading fio's output grew the process by {grown_kib} KiB"

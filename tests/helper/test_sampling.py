"""The sampler against a real engine run, and disk resolution through loop devices and mounts,
each disk with its layer (tests/helper/test_live_rates.py: when rates are taken).

Tests of what the sampler makes of its readings over time run it on a fake clock: time jumps
from tick to tick, with the test's events (a progress growing, a new phase) in between, so
they take no wall-clock time and every tick is where it is meant to be."""

from __future__ import annotations

import itertools
import os
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from stripewise.helper.disk_layers import layers_of, resolve_disks, resolve_layers
from stripewise.helper.engines.base import Counters, Progress
from stripewise.helper.engines.builtin import BuiltinEngine
from stripewise.helper.sampling import SampledPhase, Sampler
from stripewise.model.bench import Phase
from stripewise.protocol.events import DiskLayer, Sample, event_to_json
from tests.fixtures.bench_specs import spec_for
from tests.fixtures.held import hold_path
from tests.fixtures.loops import Loop, MiB, loop_device, mounted, needs_loop
from tests.fixtures.machines import sun_x4500
from tests.fixtures.umock import needs_umockdev, run_in_testbed


class FakeClock:
    """The sampler's clock and wait for a test: time moves only when the sampler waits. A wait
    jumps to its deadline, running the events due on the way (in the sampler's thread), and
    time stands still at `until`, where the sampler waits for stop()."""

    def __init__(
        self, until: float, events: Iterable[tuple[float, Callable[[], None]]] = ()
    ) -> None:
        self.now = 0.0
        self.until = until
        self._events = sorted(events, key=lambda event: event[0])

    def __call__(self) -> float:
        return self.now

    def wait(self, stop: threading.Event, timeout: float) -> bool:
        target = min(self.now + timeout, self.until)
        while self._events and self._events[0][0] <= target:
            when, event = self._events.pop(0)
            self.now = max(self.now, when)
            event()
        self.now = target
        if target < self.until:
            return False
        stop.wait(60)  # the test calls stop() once it started the sampler
        return True


SAMPLED = SampledPhase("0123abcd", Phase.SEQ_WRITE, 1)


def sent_to(samples: list[dict[str, Any]]) -> Callable[[Sample], None]:
    """An emit that keeps each sample as the wire carries it (the figures as sent)."""
    return lambda sample: samples.append(event_to_json(sample))


def collect(
    rate_hz: float,
    disks: tuple[str, ...],
    provider: Any,
    work: Any,
    clock: FakeClock | None = None,
) -> tuple:
    """Samples of a sampler run around `work(sampler)`, the sampler, and the seconds it ran (on
    `clock` when given: then `work` has nothing to wait for)."""
    samples: list[dict[str, Any]] = []
    timing: dict[str, Any] = {} if clock is None else {"clock": clock, "wait": clock.wait}
    now = time.monotonic if clock is None else clock
    sampler = Sampler(disks, rate_hz, sent_to(samples), **timing)
    started = now()
    sampler.start(provider, SAMPLED)
    try:
        work(sampler)
    finally:
        sampler.close()
    return samples, sampler, now() - started


@needs_loop
def test_samples_follow_a_real_run_at_the_chosen_rate() -> None:
    with loop_device(64 * MiB) as loop, hold_path(loop.device) as target:
        engine, spec = BuiltinEngine(), spec_for(loop.device, size=64 * MiB, streams=1)
        progress = Progress(100 * spec.size_bytes)  # one for all runs: the deltas stay whole
        moved = [0]

        def work(sampler: Sampler) -> None:
            sampler.mark_phase()
            until = time.monotonic() + 1.2
            while time.monotonic() < until:
                for phase in (Phase.SEQ_WRITE, Phase.SEQ_READ):
                    outcome = engine.run_phase(spec, phase, 0, target, progress, threading.Event())
                    moved[0] += outcome.read_bytes + outcome.write_bytes
            busy = sampler.cpu_busy_pct()
            assert busy is not None and 0 < busy <= 100

        samples, _, elapsed = collect(10, resolve_disks(loop.device), lambda: progress, work)
    # at most one a tick; a tick in the engine's pause between two phases waits for the next
    # (its clock stands still there: no rate over less than a period of it)
    assert 0.6 * elapsed * 10 - 2 <= len(samples) <= elapsed * 10 + 2
    times = [0.0] + [s["t_s"] for s in samples]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert 0.09 <= statistics.median(gaps) <= 0.11
    for sample in samples:
        assert sum(sample["cpu"].values()) == pytest.approx(100, abs=0.5)
        assert set(sample["cpu"]) >= {"user", "system", "iowait", "idle"}
        assert set(sample["disks"]) == {loop.name}
        busy = sample["disks"][loop.name]["busy_pct"]
        assert busy is None or 0 <= busy <= 100
    # the engine's bytes, integrated over the samples' spans of its clock, are what it moved
    # (but for the closing sample, whose rate reaches back over the interval before it)
    engine_bytes = sum(
        (s["engine_read_mb_s"] + s["engine_write_mb_s"]) * 1e6 * s["span_s"] for s in samples
    )
    assert engine_bytes == pytest.approx(moved[0], rel=0.05)
    # and the kernel saw the same traffic on the loop device
    disk_bytes = sum(
        (s["disks"][loop.name]["read_mb_s"] + s["disks"][loop.name]["write_mb_s"]) * 1e6 * gap
        for s, gap in zip(samples, gaps, strict=True)
    )
    assert disk_bytes == pytest.approx(engine_bytes, rel=0.35)
    assert max(s["engine_write_mb_s"] for s in samples) > 50
    assert max(s["engine_read_mb_s"] for s in samples) > 50


def test_progress_eta_at_10_hz() -> None:
    """A progress fed at a steady 200 MB/s (2 MB every 10 ms): the ETA follows it."""
    progress = Progress(10**9)

    def feed() -> None:
        progress.add(write_bytes=2 * 10**6, write_ops=2)

    clock = FakeClock(2.0, [((n - 0.5) / 100, feed) for n in range(1, 201)])
    samples, sampler, _ = collect(10, ("nosuchdisk",), lambda: progress, lambda _s: None, clock)
    late = samples[len(samples) // 2 :]
    assert all(s["disks"] == {} for s in samples)  # unknown disks are left out, not invented
    assert [s["progress"] for s in samples] == sorted(s["progress"] for s in samples)
    for sample in late:
        assert 100 < sample["engine_write_mb_s"] < 300
        expected = (1 - sample["progress"]) * 10**9 / 200e6
        assert sample["eta_s"] == pytest.approx(expected, rel=0.35)
    assert sampler.error is None


def test_own_cost_at_10_hz() -> None:
    """In real time, with a progress fed at 200 MB/s: the sampler sleeps between its ticks.
    Its cost against the issue's 2 % is a figure of `python -m bench` (`helper sampling at
    10 Hz`); here a bound no sleeping sampler comes near, so the test fails for a sampler that
    spins, not for a VM whose host takes its CPU for a while (CPU time grows with it here:
    2.7 % was measured so, for a sampler the bench puts at 0.27 %)."""
    progress, stop = Progress(10**9), threading.Event()

    def feed() -> None:
        while not stop.wait(0.01):
            progress.add(write_bytes=2 * 10**6, write_ops=2)

    def work(_sampler: Sampler) -> None:
        feeder = threading.Thread(target=feed)
        feeder.start()
        time.sleep(2.0)
        stop.set()
        feeder.join()

    samples, sampler, elapsed = collect(10, ("nosuchdisk",), lambda: progress, work)
    assert len(samples) >= 10, "it ticked at 10 Hz"
    assert sampler.own_cpu_s / elapsed < 0.10
    assert sampler.error is None


def test_a_new_phase_counts_from_zero_and_a_failing_emit_stops_nothing() -> None:
    first, second = Progress(100), Progress(100)
    first.add(read_bytes=50 * 10**6)
    current = [first]
    emitted: list[dict[str, Any]] = []

    def emit(sample: Sample) -> None:
        emitted.append(event_to_json(sample))
        if len(emitted) == 2:
            raise BrokenPipeError("consumer went away")

    def switch() -> None:
        current.append(second)
        second.add(read_bytes=10**6)  # 1 MB in the new phase's first 0.05 s

    clock = FakeClock(0.5, [(0.25, switch)])
    sampler = Sampler((), 10, emit, clock=clock, wait=clock.wait)
    sampler.start(lambda: current[-1], SAMPLED)
    sampler.close()
    assert isinstance(sampler.error, BrokenPipeError)
    assert len(emitted) >= 4
    assert all(s["engine_read_mb_s"] >= 0 for s in emitted)
    assert emitted[0]["engine_read_mb_s"] == 500  # 50 MB in the first 0.1 s
    # the new phase counts from where it was first seen (0.3): its 1 MB in its first 0.1 s,
    # then nothing more until it ends
    assert [s["engine_read_mb_s"] for s in emitted[-2:]] == [10, 0]
    assert emitted[-1]["progress"] == 1.0


def test_one_thread_samples_each_phase_of_a_run_and_nothing_between_them() -> None:
    """A run's sampler takes one phase after another on one thread: each phase's samples name
    it, the closing one comes at its stop(), and nothing is sampled while the run is between
    phases (its caches dropped, its results sent)."""
    sent: list[tuple[float, int, Sample]] = []
    sampler = Sampler((), 20, lambda s: sent.append((time.monotonic(), threading.get_ident(), s)))
    phases = [SampledPhase("run", Phase.SEQ_WRITE, 1), SampledPhase("run", Phase.SEQ_READ, 1)]
    between: list[tuple[float, float]] = []
    for sampled in phases:
        progress = Progress(10**9)
        sampler.start(lambda progress=progress: progress, sampled)
        for _ in range(6):
            time.sleep(0.05)
            progress.add(read_bytes=10**6, read_ops=1)
        sampler.stop()
        stopped = time.monotonic()
        time.sleep(0.3)
        between.append((stopped, time.monotonic()))
    sampler.close()
    assert sampler.error is None
    assert not any(start < at < end for at, _thread, _s in sent for start, end in between)
    for sampled in phases:
        mine = [
            s
            for _at, _thread, s in sent
            if (s.run, s.phase, s.repetition) == (sampled.run, sampled.phase, sampled.repetition)
        ]
        assert len(mine) >= 4  # about 6 ticks and the closing sample
        assert mine[-1].progress is not None
    ticking = {thread for _at, thread, _s in sent} - {threading.get_ident()}  # closing: here
    assert len(ticking) == 1
    assert not any(t.name == "stripewise-sampler" and t.is_alive() for t in threading.enumerate())


def test_work_beside_the_samples_is_ticked_on_its_own_period() -> None:
    """The guards' per-CPU watch ticks every 0.2 s on the sampler's thread, at 1 Hz as at
    10 Hz: the samples keep their own period."""

    class Beside:
        tick_s = 0.2

        def __init__(self, clock: FakeClock) -> None:
            self.clock, self.ticks = clock, list[float]()

        def tick(self) -> None:
            self.ticks.append(self.clock())

    for rate_hz, samples_in_a_second in ((10, 10), (1, 1)):
        progress = Progress(10**9)
        feed = [(n / 100, lambda p=progress: p.add(write_bytes=10**6)) for n in range(105)]
        clock = FakeClock(1.05, feed)
        beside = Beside(clock)
        emitted: list[dict[str, Any]] = []
        sampler = Sampler((), rate_hz, sent_to(emitted), clock=clock, wait=clock.wait)
        sampler.start(lambda progress=progress: progress, SAMPLED, beside)
        sampler.close()
        assert beside.ticks == pytest.approx([0.2, 0.4, 0.6, 0.8, 1.0])
        assert len(emitted) == samples_in_a_second + 1  # and the closing one
        assert sampler.error is None


def test_resolve_disks_without_a_disk_or_on_the_root_filesystem(tmp_path: Path) -> None:
    assert resolve_disks("/proc") == ()
    if os.path.ismount("/dev/shm"):
        assert resolve_disks("/dev/shm") == ()
    for name in resolve_disks(str(tmp_path)):
        assert os.path.isdir(f"/sys/block/{name}")  # whole disks only, never partitions


@needs_loop
def test_resolve_disks_through_loop_devices_and_filesystems(tmp_path: Path) -> None:
    with loop_device(64 * MiB) as loop, mounted(loop, "ext4") as mountpoint:
        test_file = Path(mountpoint, "file")
        test_file.write_bytes(b"x")
        assert resolve_disks(str(test_file)) == (loop.name,)
        assert resolve_disks(mountpoint) == (loop.name,)
        assert resolve_disks(loop.device) == (loop.name,)  # its image lies in RAM


@needs_loop
def test_a_partition_resolves_to_its_disk() -> None:
    with loop_device(16 * MiB, "-P") as loop:
        subprocess.run(["addpart", loop.device, "1", "2048", "8192"], check=True)
        try:
            assert resolve_disks(f"{loop.device}p1") == (loop.name,)
        finally:
            subprocess.run(["delpart", loop.device, "1"], check=True)


@needs_loop
def test_a_loop_device_on_a_disk_file_resolves_to_the_loop_and_that_disk(tmp_path: Path) -> None:
    disk = resolve_disks(str(tmp_path))
    if not disk:
        pytest.skip("the temporary directory is on no block device")
    image = tmp_path / "disk.img"
    image.write_bytes(b"")
    os.truncate(image, 8 * MiB)
    done = subprocess.run(
        ["losetup", "-f", "--show", str(image)], capture_output=True, text=True, check=True
    )
    device = done.stdout.strip()
    try:
        assert resolve_disks(device) == (os.path.basename(device), *disk)
    finally:
        subprocess.run(["losetup", "-d", device], check=True)


def test_a_phase_shorter_than_one_period_still_gets_a_sample() -> None:
    progress = Progress(10**6)
    emitted: list[dict[str, Any]] = []
    clock = FakeClock(0.05)  # the phase ends 50 ms into a 1 s period
    sampler = Sampler((), 1, sent_to(emitted), clock=clock, wait=clock.wait)
    sampler.start(lambda: progress, SAMPLED)
    progress.add(write_bytes=10**6, write_ops=1)
    sampler.close()
    assert len(emitted) == 1 and emitted[0]["engine_write_mb_s"] > 0
    assert emitted[0]["progress"] == 1.0


@pytest.mark.parametrize("stepped", [True, False], ids=["step-aware", "continuous"])
def test_an_engine_updating_once_a_second_reads_as_a_steady_rate(stepped: bool) -> None:
    """fio's totals arrive once a second: 100 MB each time is 100 MB/s, not one 1 GB/s spike
    followed by nine zeros."""
    progress = Progress(10**12)
    if stepped:
        progress.update_period_s = 0.5
    total = [0]

    def fio_like() -> None:  # its totals, every 0.5 s, a little after a tick
        total[0] += 50 * 10**6
        progress.set_totals(Counters(write_bytes=total[0], write_ops=total[0] // MiB))

    clock = FakeClock(3.2, [(0.5 * n + 0.01, fio_like) for n in range(1, 7)])
    samples, _sampler, _ = collect(10, (), lambda: progress, lambda _s: None, clock)
    rates = [s["engine_write_mb_s"] for s in samples[7:]]  # after the first step arrived
    steady = [r for r in rates if 60 <= r <= 140]
    if stepped:
        assert len(steady) >= 0.8 * len(rates)
    else:  # what the step-unaware sampler shows: mostly zeros and spikes
        assert len(steady) < 0.3 * len(rates)


# --- layers: each disk with its place under the target --------------------------------------


def image_on(directory: str, size: int) -> Loop:
    """A loop device over a file in `directory` (detached by the caller)."""
    image = os.path.join(directory, "disk.img")
    with open(image, "wb") as handle:
        handle.truncate(size)
    done = subprocess.run(
        ["losetup", "-f", "--show", image], capture_output=True, text=True, check=True
    )
    return Loop(done.stdout.strip(), image)


@needs_loop
def test_a_loop_device_on_a_disk_file_is_a_layer_above_that_disk(tmp_path: Path) -> None:
    disk = resolve_disks(str(tmp_path))
    if not disk:
        pytest.skip("the temporary directory is on no block device")
    loop = image_on(str(tmp_path), 8 * MiB)
    try:
        layers = resolve_layers(loop.device)
    finally:
        subprocess.run(["losetup", "-d", loop.device], check=True)
    assert layers == (
        DiskLayer(loop.name, "target", None, 0),
        *(DiskLayer(name, "backing", loop.name, 1) for name in disk),
    )


@needs_loop
def test_a_loop_on_a_file_on_a_filesystem_on_a_loop_is_two_layers() -> None:
    with loop_device(64 * MiB) as lower, mounted(lower, "ext4") as mountpoint:
        upper = image_on(mountpoint, 8 * MiB)
        try:
            layers = resolve_layers(upper.device)
            test_file = Path(mountpoint, "file")
            test_file.write_bytes(b"x")
            on_lower = resolve_layers(str(test_file))
        finally:
            subprocess.run(["losetup", "-d", upper.device], check=True)
    assert layers == (
        DiskLayer(upper.name, "target", None, 0),
        DiskLayer(lower.name, "backing", upper.name, 1),  # its image lies in RAM: the bottom
    )
    assert on_lower == (DiskLayer(lower.name, "target", None, 0),)


@needs_loop
def test_a_btrfs_on_two_devices_has_both_at_the_top(tmp_path: Path) -> None:
    with loop_device(256 * MiB) as first, loop_device(256 * MiB) as second:
        subprocess.run(
            ["mkfs.btrfs", "-q", "-f", "-d", "raid0", first.device, second.device],
            check=True,
            capture_output=True,
        )
        mountpoint = tmp_path / "mnt"
        mountpoint.mkdir()
        subprocess.run(["mount", first.device, str(mountpoint)], check=True)
        try:
            layers = resolve_layers(str(mountpoint))
        finally:
            subprocess.run(["umount", str(mountpoint)], check=True)
    assert sorted(layers, key=lambda layer: layer.name) == sorted(
        [DiskLayer(first.name, "target"), DiskLayer(second.name, "target")],
        key=lambda layer: layer.name,
    )


_MD_LAYERS = """
import json
from stripewise.helper.disk_layers import layers_of
print(json.dumps({name: [vars(layer) for layer in layers_of(name)] for name in ("md4", "md5")}))
"""


@needs_umockdev
def test_md_arrays_stand_for_their_members_each_under_its_array() -> None:
    """The X4500 testbed's md4 (RAID 6 on eight partitions) and md5 (RAID 0 over md2, md3)."""
    import json
    import sys

    done = run_in_testbed(sun_x4500(), [sys.executable, "-c", _MD_LAYERS])
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    md4 = [DiskLayer(**layer) for layer in found["md4"]]
    assert [layer.name for layer in md4] == ["sdb", "sdd", "sdf", "sdh", "sdl", "sdo", "sdr", "sdu"]
    assert {(layer.role, layer.under, layer.depth) for layer in md4} == {("member", "md4", 1)}
    md5 = [DiskLayer(**layer) for layer in found["md5"]]
    assert {layer.under for layer in md5} == {"md2", "md3"}  # md5 itself and md2/md3 are not
    assert {(layer.role, layer.depth) for layer in md5} == {("member", 2)}  # sampled: members


def test_layers_of_a_name_that_is_no_device() -> None:
    assert layers_of("nosuchdisk") == (DiskLayer("nosuchdisk", "target"),)


@needs_loop
def test_samples_say_each_disks_layer() -> None:
    progress = Progress(10**6)
    with loop_device(8 * MiB) as loop:
        layers = (DiskLayer(loop.name, "target"), DiskLayer("nosuchdisk", "backing", loop.name, 1))
        samples, _sampler, _ = collect(10, layers, lambda: progress, lambda _s: time.sleep(0.25))
    for sample in samples:
        rates = sample["disks"][loop.name]
        completed = rates["read_iops"] + rates["write_iops"] > 0
        assert rates | {"read_mb_s": 0} == {
            "read_mb_s": 0,
            "write_mb_s": rates["write_mb_s"],
            "read_iops": rates["read_iops"],
            "write_iops": rates["write_iops"],
            "busy_pct": rates["busy_pct"],
            "role": "target",
            "under": None,
            "depth": 0,
            "queue_size": rates["queue_size"],
        } | ({"await_ms": rates["await_ms"]} if completed else {})
        assert "nosuchdisk" not in sample["disks"]

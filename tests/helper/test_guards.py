"""The guards on real runs of the helper's BenchRun (in this process, so a figure can be
stood in for): RAM-backed loop devices, a loop device whose backing file a cache answers for,
tmpfs, btrfs with compression. Then the verdicts' rules on counters given to them."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from threading import Event
from typing import Any

import pytest

from stripewise.helper import guards as guards_module
from stripewise.helper.bench_run import BenchRun
from stripewise.helper.ceilings import Ceiling, Layer
from stripewise.helper.engines.base import Progress
from stripewise.helper.engines.builtin import BuiltinEngine
from stripewise.helper.engines.fio import FioEngine
from stripewise.helper.guards import (
    Compression,
    PhaseWatch,
    RunGuards,
    TargetFacts,
    compressible,
    data_period,
    target_facts,
)
from stripewise.model.bench import BenchSpec, Phase, PhaseOutcome
from stripewise.model.guards import GUARDS
from stripewise.protocol.events import event_to_json
from tests.fixtures.bench_specs import spec_for
from tests.fixtures.held import hold_path
from tests.fixtures.loops import Loop, MiB, loop_device, mounted, needs_loop

needs_btrfs = pytest.mark.skipif(shutil.which("mkfs.btrfs") is None, reason="needs mkfs.btrfs")
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def run_bench(spec: BenchSpec, *, privileged: bool = True) -> list[dict[str, Any]]:
    """A whole run as the helper makes it, its events in order."""
    events: list[dict[str, Any]] = []
    run = BenchRun(spec, lambda event: events.append(event_to_json(event)), privileged=privileged)
    run.start()
    run.thread.join(300)
    assert run.finished.is_set(), "the run did not end"
    assert events[-1]["event"] == "run_result" and events[-1]["status"] == "complete", events
    return events


def flags_of(events: list[dict[str, Any]]) -> dict[str, list[str]]:
    """phase -> the flags its (last) phase_result carried."""
    return {e["phase"]: e.get("flags", []) for e in events if e["event"] == "phase_result"}


def warnings_of(events: list[dict[str, Any]], code: str) -> list[str]:
    return [e["message"] for e in events if e["event"] == "warning" and e["code"] == code]


@contextlib.contextmanager
def tmpfs() -> Iterator[str]:
    point = tempfile.mkdtemp(prefix="stripewise-tmpfs-")
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1200M", "tmpfs", point], check=True)
        try:
            yield point
        finally:
            subprocess.run(["umount", point], check=True)
    finally:
        os.rmdir(point)


@contextlib.contextmanager
def loop_over_disk_file(directory: Path, size: int) -> Iterator[Loop]:
    """A loop device WITHOUT direct I/O over a file on this disk's filesystem: its reads are
    answered by the backing file's page cache whenever it holds the blocks."""
    image = directory / "backing.img"
    image.touch()
    os.truncate(image, size)
    done = subprocess.run(
        ["losetup", "-f", "--show", "--direct-io=off", str(image)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"no loop device: {done.stderr.strip()}")
    device = done.stdout.strip()
    try:
        yield Loop(device, str(image))
    finally:
        subprocess.run(["losetup", "-d", device], check=True)
        image.unlink()


# --- real runs -----------------------------------------------------------------------------


@needs_loop
def test_a_ram_backed_loop_is_capped_by_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    with loop_device(256 * MiB) as loop, mounted(loop, "ext4") as point:
        spec = spec_for(point, 64 * MiB, phases=(Phase.SEQ_WRITE, Phase.SEQ_READ), streams=1)
        held = hold_path(os.path.join(point, "facts"))
        try:
            facts = target_facts(replace(held, disks=(loop.name,)))
        finally:
            held.close()
        assert facts.layer.ram == (loop.name,) and facts.ceiling is not None
        assert facts.ceiling.what.startswith("memory")
        # the measured figure: a RAM disk stays under it
        assert not tripped(run_bench(spec), "above_ceiling")
        # a memory figure no run can stay under: every phase is flagged, and said why
        monkeypatch.setattr(guards_module, "memory_mb_s", lambda: 1.0)
        events = run_bench(spec)
    assert all("above_ceiling" in flags for flags in flags_of(events).values())
    said = warnings_of(events, "above_ceiling")
    assert len(said) == 2 and "above the ceiling of memory" in said[0]
    (result,) = [e for e in events if e["event"] == "run_result"]
    assert all("above_ceiling" in r["flags"] for r in result["results"])


def tripped(events: list[dict[str, Any]], name: str) -> list[str]:
    """The phases whose results carry the flag."""
    return [phase for phase, flags in flags_of(events).items() if name in flags]


@needs_loop
def test_reads_a_cache_below_answered_are_flagged(tmp_path: Path) -> None:
    """ext4 on a loop device over a file on this disk: without dropping caches (an ordinary
    user's helper), the backing file's pages answer the reads, and the disk reads nothing."""
    with (
        loop_over_disk_file(tmp_path, 256 * MiB) as loop,
        mounted(loop, "ext4") as point,
    ):
        spec = spec_for(point, 64 * MiB, phases=(Phase.SEQ_WRITE, Phase.SEQ_READ), streams=1)
        for _attempt in range(3):  # another root process dropping caches meanwhile (tests
            cached = run_bench(spec, privileged=False)  # do) makes the reads real: again
            if "cached_reads" in flags_of(cached)["seq_read"]:
                break
        dropped = run_bench(spec, privileged=True)  # caches dropped before the read
    assert "cached_reads" in flags_of(cached)["seq_read"]
    assert "cached_reads" not in flags_of(cached)["seq_write"]
    (said,) = warnings_of(cached, "cached_reads")
    assert "Sequential Input, Block, pass 1: the engine read 67 MB" in said
    assert "cached_reads" not in flags_of(dropped)["seq_read"]


def test_buffered_io_on_tmpfs_is_cpu_bound_and_a_small_file() -> None:
    """Small random reads from tmpfs wait for nothing: a million system calls from Python,
    one at a time, are all the work there is."""
    if os.geteuid() != 0:
        pytest.skip("mounting tmpfs needs root")
    with tmpfs() as point:
        spec = spec_for(
            point,
            1024 * MiB,
            phases=(Phase.SEQ_WRITE, Phase.RANDOM_READ),
            streams=1,
            queue_depth=1,
            random_block_bytes=1024,
            direct=False,
        )
        events = run_bench(spec)
    flags = flags_of(events)
    assert "cpu_bound" in flags["random_read"]
    assert "small_buffered_file" in flags["random_read"]  # 1 GiB under 2 x RAM
    assert "small_buffered_file" not in flags["seq_write"]  # writes end with fsync
    assert "the figure is the CPU's limit" in warnings_of(events, "cpu_bound")[0]
    assert warnings_of(events, "page_cache")  # said once at the start instead


@needs_loop
@needs_btrfs
def test_compressible_writes_to_btrfs_with_compression(tmp_path: Path) -> None:
    """Buffered 64 KiB blocks at queue depth 1 shrink under compress=zstd, the built-in
    engine's and fio's alike (flagged); direct writes are compressed one by one, and one
    block of random bytes does not shrink (not flagged)."""
    with loop_device(512 * MiB) as loop, mounted(loop, "btrfs", "-o", "compress=zstd") as point:
        base = spec_for(
            point, 64 * MiB, phases=(Phase.SEQ_WRITE,), streams=1, block_bytes=65536, queue_depth=1
        )
        buffered = run_bench(replace(base, direct=False))
        direct = run_bench(base)
        fio = run_bench(replace(base, direct=False, engine="fio")) if shutil.which("fio") else []
        fio_direct = run_bench(replace(base, engine="fio")) if fio else []
    assert flags_of(buffered)["seq_write"] == ["compressed_writes"]
    (said,) = warnings_of(buffered, "compressed_writes")
    assert "btrfs compress=zstd" in said and "repeats every 65,536 bytes" in said
    assert "compressed_writes" not in flags_of(direct)["seq_write"]
    assert not fio or "compressed_writes" in flags_of(fio)["seq_write"]
    assert not fio_direct or "compressed_writes" not in flags_of(fio_direct)["seq_write"]


@contextlib.contextmanager
def zram_disk(size: int) -> Iterator[str]:
    """A zram device of our own (hot_add), removed afterwards."""
    control = "/sys/class/zram-control"
    if os.geteuid() != 0 or not os.path.isdir(control):
        pytest.skip("needs root and the zram module")
    number = Path(f"{control}/hot_add").read_text().strip()
    name = f"zram{number}"
    try:
        Path(f"/sys/block/{name}/disksize").write_text(str(size))
        yield name
    finally:
        Path(f"{control}/hot_remove").write_text(number)


def test_zram_is_ram_and_compresses_pages() -> None:
    """ext4 on zram: capped by memory; 2 KiB blocks repeat within a page, so buffered writes
    of them are compressible (flagged), 4 KiB blocks are not."""
    with (
        zram_disk(256 * MiB) as name,
        mounted(Loop(f"/dev/{name}", ""), "ext4") as point,
    ):
        base = spec_for(point, 32 * MiB, phases=(Phase.SEQ_WRITE,), streams=1, direct=False)
        small = run_bench(replace(base, block_bytes=2048))
        page = run_bench(replace(base, block_bytes=4096))
        held = hold_path(os.path.join(point, "facts"))
        try:
            found = target_facts(replace(held, disks=(name,)))
        finally:
            held.close()
    assert found.layer.ram == (name,) and found.ceiling is not None
    assert found.compression == Compression(name, 4096, True)
    assert "compressed_writes" in flags_of(small)["seq_write"]
    assert "compressed_writes" not in flags_of(page)["seq_write"]


@needs_loop
@needs_btrfs
def test_what_the_guard_assumes_of_the_engines_holds_on_btrfs(tmp_path: Path) -> None:
    """compress-force=zstd stores buffered data that repeats within 128 KiB in a fraction of
    its size (the built-in engine's 64 KiB blocks, fio's 4 KiB blocks at queue depth 2), and
    data that does not (1 MiB blocks of either) nearly whole (fio's scrambled buffers save a
    few %: not flagged)."""

    def stored(point: str, engine: Any, spec: BenchSpec) -> float:
        subprocess.run(["btrfs", "filesystem", "sync", point], check=True, capture_output=True)
        before = os.statvfs(point)
        target = hold_path(os.path.join(point, f"f-{engine.name}-{spec.block_bytes}"))
        try:
            progress = Progress(spec.size_bytes)
            outcome = engine.run_phase(spec, Phase.SEQ_WRITE, 1, target, progress, Event())
            assert outcome.error is None
            subprocess.run(["btrfs", "filesystem", "sync", point], check=True, capture_output=True)
            after = os.statvfs(point)
            used = (before.f_bfree - after.f_bfree) * after.f_frsize
            print(f"{engine.name} {spec.block_bytes} B blocks: {used / spec.size_bytes:.2f} stored")
            return used / spec.size_bytes
        finally:
            target.close()

    with (
        loop_device(1024 * MiB) as loop,
        mounted(loop, "btrfs", "-o", "compress-force=zstd") as point,
    ):
        spec = spec_for(point, 64 * MiB, streams=1, direct=False, block_bytes=65536)
        assert stored(point, BuiltinEngine(), spec) < 0.7
        assert data_period("builtin", spec, Phase.SEQ_WRITE) == 65536
        assert stored(point, BuiltinEngine(), replace(spec, block_bytes=MiB)) > 0.9
        if shutil.which("fio"):
            four_k = replace(spec, block_bytes=4096, random_block_bytes=4096)
            assert stored(point, FioEngine(), four_k) < 0.7
            assert data_period("fio", four_k, Phase.SEQ_WRITE) == 8192
            assert stored(point, FioEngine(), replace(spec, block_bytes=MiB)) > 0.85


# --- the rules, on counters given to them ----------------------------------------------------


def facts(**changes: Any) -> TargetFacts:
    values: dict[str, Any] = {
        "layer": Layer(("sda",), (), ()),
        "ceiling": Ceiling(600.0, "sda's SATA link (600 MB/s)"),
        "compression": None,
        "ram_bytes": 8 * 2**30,
    }
    values.update(changes)
    return TargetFacts(**values)


def watched(**values: Any) -> PhaseWatch:
    watch = PhaseWatch(())
    for key, value in values.items():
        setattr(watch, key, value)
    return watch


def judge(
    outcome: PhaseOutcome,
    watch: PhaseWatch | None = None,
    *,
    buffered: bool = False,
    spec: BenchSpec | None = None,
    engine: str = "builtin",
    **fact_changes: Any,
) -> tuple[tuple[str, ...], list[tuple[str, str]]]:
    said: list[tuple[str, str]] = []
    guards = RunGuards(
        spec or BenchSpec("/x", 16 * 2**30), engine, facts(**fact_changes),
        lambda code, message: said.append((code, message)),
    )  # fmt: skip
    judged = guards.judge(outcome, watch or watched(), buffered=buffered)
    return judged.flags, said


def test_above_the_ceiling_with_its_margin() -> None:
    at = PhaseOutcome(Phase.SEQ_READ, 1, 1.0, read_bytes=650 * 10**6)  # 650 MB/s: within 10 %
    assert judge(at)[0] == ()
    over = replace(at, read_bytes=700 * 10**6)
    flags, said = judge(over)
    assert flags == ("above_ceiling",)
    assert said == [
        (
            "above_ceiling",
            "Sequential Input, Block, pass 1: 700 MB/s is more than 10 % above the ceiling of "
            "sda's SATA link (600 MB/s): the figure is not the disks'",
        )
    ]
    mixed = PhaseOutcome(Phase.MIXED, 1, 1.0, read_bytes=700 * 10**6, write_bytes=300 * 10**6)
    assert judge(mixed)[0] == ()  # both directions at once: twice the ceiling
    assert judge(over, ceiling=None)[0] == ()
    assert judge(replace(over, error="cancelled"))[0] == ()


def test_cached_reads_from_the_counters() -> None:
    read = PhaseOutcome(Phase.RANDOM_READ, 1, 10.0, read_bytes=100 * MiB)
    assert judge(read, watched(device_read_bytes=60 * MiB))[0] == ()
    flags, said = judge(read, watched(device_read_bytes=10 * MiB))
    assert flags == ("cached_reads",) and "sda read 10 MB" in said[0][1]
    assert judge(read, watched(device_read_bytes=None))[0] == ()  # no counters: no verdict
    small = replace(read, read_bytes=4 * MiB)
    assert judge(small, watched(device_read_bytes=0))[0] == ()


def test_cpu_bound_by_ticks_by_the_engines_time_and_by_the_interpreter() -> None:
    phase = PhaseOutcome(Phase.SEQ_WRITE, 1, 2.0, write_bytes=MiB)
    assert judge(phase, watched(ticks=10, saturated_ticks=5, busiest={"cpu1": 5}))[0] == ()
    flags, said = judge(phase, watched(ticks=10, saturated_ticks=8, busiest={"cpu1": 8}))
    assert flags == ("cpu_bound",) and "cpu1 most often" in said[0][1]
    assert judge(phase, watched(ticks=10, own_cpu_s=1.95))[0] == ("cpu_bound",)
    assert judge(phase, watched(ticks=10, own_cpu_s=1.95), engine="fio")[0] == ()
    fio = judge(phase, watched(ticks=10, children_cpu_s=1.95), engine="fio")
    assert fio[0] == ("cpu_bound",) and "on 1 thread" in fio[1][0][1]
    two = BenchSpec("/x", 16 * 2**30, streams=2)
    assert judge(phase, watched(ticks=10, own_cpu_s=1.95), spec=two)[0] == ()
    python = judge(phase, watched(ticks=10, own_cpu_s=2.0, own_user_s=1.95), spec=two)
    assert python[0] == ("cpu_bound",) and "Python" in python[1][0][1]
    short = replace(phase, elapsed_s=0.2)
    assert judge(short, watched(ticks=0, whole=("cpu0", 1.0)))[0] == ()


def test_small_buffered_files_only_for_reads_through_the_cache() -> None:
    read = PhaseOutcome(Phase.SEQ_READ, 1, 1.0, read_bytes=MiB)
    small = BenchSpec("/x", 2**30)
    assert judge(read, buffered=True, spec=small)[0] == ("small_buffered_file",)
    assert judge(read, buffered=False, spec=small)[0] == ()
    assert judge(read, buffered=True, spec=BenchSpec("/x", 16 * 2**30))[0] == ()
    write = PhaseOutcome(Phase.SEQ_WRITE, 1, 1.0, write_bytes=MiB)
    assert judge(write, buffered=True, spec=small)[0] == ()


def test_compression_needs_a_compressor_and_data_it_can_shrink() -> None:
    btrfs = Compression("btrfs compress=zstd:3", 128 * 1024, False)
    zram = Compression("zram0", 4096, True)
    assert compressible(65536, btrfs, direct=False)
    assert not compressible(65536, btrfs, direct=True)  # each direct write alone: one copy
    assert not compressible(MiB, btrfs, direct=False)
    assert not compressible(None, btrfs, direct=False)  # data that never repeats
    assert compressible(2048, zram, direct=True) and not compressible(4096, zram, direct=True)
    write = PhaseOutcome(Phase.SEQ_WRITE, 1, 1.0, write_bytes=MiB)
    spec = BenchSpec("/x", 16 * 2**30, block_bytes=65536)
    assert judge(write, buffered=True, spec=spec, compression=btrfs)[0] == ("compressed_writes",)
    assert judge(write, buffered=True, spec=spec)[0] == ()
    read = PhaseOutcome(Phase.SEQ_READ, 1, 1.0, read_bytes=MiB)
    assert judge(read, buffered=True, spec=spec, compression=btrfs)[0] == ()
    fio = judge(write, buffered=True, spec=spec, compression=btrfs, engine="fio")
    assert fio[0] == ("compressed_writes",)
    two = replace(spec, queue_depth=2)  # two buffers in flight: 128 KiB before it repeats
    assert judge(write, buffered=True, spec=two, compression=btrfs, engine="fio")[0] == ()


def test_one_warning_per_guard_and_phase_and_every_name_is_in_the_table() -> None:
    said: list[tuple[str, str]] = []
    guards = RunGuards(
        BenchSpec("/x", 16 * 2**30), "builtin", facts(), lambda c, m: said.append((c, m))
    )
    over = PhaseOutcome(Phase.SEQ_READ, 1, 1.0, read_bytes=10**9)
    for repetition in (1, 2):
        assert guards.judge(replace(over, repetition=repetition), watched(), buffered=False).flags
    assert [code for code, _ in said] == ["above_ceiling"]
    for name in ("above_ceiling", "cached_reads", "cpu_bound", "small_buffered_file"):
        assert name in GUARDS
    assert "compressed_writes" in GUARDS

"""Each I/O thread of a phase stays on a CPU of its own, when there are enough of them."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from stripewise.helper.engines import io_runners
from stripewise.helper.engines.base import Progress
from stripewise.helper.engines.builtin import BuiltinEngine
from stripewise.helper.engines.cpu_placement import (
    cpus_for,
    device_node_cpus,
    parse_cpulist,
    stay_on,
)
from stripewise.helper.target import Target
from stripewise.model.bench import Phase
from tests.fixtures.bench_specs import spec_for
from tests.fixtures.loops import MiB, loop_device, needs_loop

ALLOWED = sorted(os.sched_getaffinity(0))
needs_two_cpus = pytest.mark.skipif(len(ALLOWED) < 2, reason="one CPU: nothing to place")


@needs_two_cpus
def test_one_cpu_each_highest_first() -> None:
    assert cpus_for(1) == [ALLOWED[-1]]
    assert cpus_for(len(ALLOWED)) == ALLOWED[::-1]


def test_no_placement_when_threads_would_share_a_cpu() -> None:
    assert cpus_for(len(ALLOWED) + 1) is None
    assert cpus_for(0) is None


@needs_two_cpus
def test_only_the_calling_thread_moves() -> None:
    before = os.sched_getaffinity(0)
    seen: list[set[int]] = []

    def placed() -> None:
        assert stay_on(ALLOWED[0])
        seen.append(os.sched_getaffinity(0))

    thread = threading.Thread(target=placed)
    thread.start()
    thread.join()
    assert seen == [{ALLOWED[0]}]
    assert os.sched_getaffinity(0) == before


def test_a_cpu_that_cannot_be_had_is_declined() -> None:
    assert stay_on(4096 + (os.cpu_count() or 1)) is False  # past every CPU here


def _placements(
    monkeypatch: pytest.MonkeyPatch, run_phase: Callable[[], None]
) -> list[tuple[int, set[int]]]:
    """(CPU asked for, the thread's affinity after) for each I/O thread the phase placed."""
    placed: list[tuple[int, set[int]]] = []

    def spy(cpu: int) -> bool:
        done = stay_on(cpu)
        placed.append((cpu, os.sched_getaffinity(0)))
        return done

    monkeypatch.setattr(io_runners, "stay_on", spy)
    run_phase()
    return placed


@needs_two_cpus
@pytest.mark.parametrize("streams", [1, 2, len(ALLOWED) + 1])
def test_a_phase_places_its_streams(
    tmp_path: Path, hold: Callable[[str], Target], monkeypatch: pytest.MonkeyPatch, streams: int
) -> None:
    engine = BuiltinEngine()
    spec = spec_for(str(tmp_path), direct=True, streams=streams)
    target = hold(str(tmp_path / "test-file"))
    engine.prepare(spec, target)

    def run_phase() -> None:
        progress = Progress(engine.planned_bytes(spec, Phase.SEQ_WRITE))
        outcome = engine.run_phase(spec, Phase.SEQ_WRITE, 0, target, progress, threading.Event())
        assert outcome.error is None

    placed = _placements(monkeypatch, run_phase)
    engine.cleanup()
    target.close()
    if streams > len(ALLOWED):
        assert placed == []  # stacking threads would undo the scheduler's spreading
    else:
        assert sorted(placed) == sorted((cpu, {cpu}) for cpu in ALLOWED[::-1][:streams])
    assert os.sched_getaffinity(0) == set(ALLOWED)


@needs_two_cpus
def test_the_devices_node_first_when_it_has_enough() -> None:
    low = {ALLOWED[0]}
    assert cpus_for(1, low) == [ALLOWED[0]]
    assert cpus_for(2, low) == ALLOWED[::-1][:2]  # too few there: any the process may use
    assert cpus_for(1, {ALLOWED[-1] + 4096}) == [ALLOWED[-1]]  # a node of none it may use


def test_cpulists_as_the_kernel_writes_them() -> None:
    assert parse_cpulist("0-3,8-11\n") == {0, 1, 2, 3, 8, 9, 10, 11}
    assert parse_cpulist("5") == {5}
    for odd in ("", "3-1", "-1", "0-99999999", "a"):
        with pytest.raises(ValueError):
            parse_cpulist(odd)


@needs_loop
def test_no_node_for_a_virtual_device() -> None:
    """A loop device: nothing up its sysfs path (/sys/devices/virtual) names a node."""
    with loop_device(MiB) as loop:
        fd = os.open(loop.device, os.O_RDONLY)
        try:
            assert device_node_cpus(fd) is None
        finally:
            os.close(fd)


def test_the_node_of_the_controller_up_the_path(tmp_path: Path) -> None:
    """sysfs as the kernel lays it out for a SATA disk on a PCI controller of node 1: the
    disk and its ATA parts have no numa_node, the controller has."""
    sysfs = tmp_path / "sys"
    controller = sysfs / "devices/pci0000:80/0000:80:1f.2"
    disk = controller / "ata1/host0/target0:0:0/0:0:0:0/block/sda"
    disk.mkdir(parents=True)
    (controller / "numa_node").write_text("1\n")
    (sysfs / "devices/system/node/node1").mkdir(parents=True)
    (sysfs / "devices/system/node/node1/cpulist").write_text("8-11,24-27\n")
    (sysfs / "dev/block").mkdir(parents=True)
    number = os.stat(tmp_path).st_dev
    (sysfs / f"dev/block/{os.major(number)}:{os.minor(number)}").symlink_to(disk)
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        assert device_node_cpus(fd, str(sysfs)) == {8, 9, 10, 11, 24, 25, 26, 27}
        (controller / "numa_node").write_text("-1\n")  # one node: the kernel names none
        assert device_node_cpus(fd, str(sysfs)) is None
    finally:
        os.close(fd)


def _cpu_tree(sysfs: Path, cores: list[tuple[list[int], int]]) -> None:
    """/sys/devices/system/cpu for cores given as (their CPUs, capacity)."""
    for cpus, capacity in cores:
        for cpu in cpus:
            base = sysfs / f"devices/system/cpu/cpu{cpu}"
            (base / "topology").mkdir(parents=True)
            (base / "cpu_capacity").write_text(f"{capacity}\n")
            siblings = ",".join(map(str, cpus))
            (base / "topology/thread_siblings_list").write_text(siblings + "\n")


def test_fast_cores_of_their_own_first(tmp_path: Path) -> None:
    """A hybrid CPU: four performance cores with two threads each (0-7), four efficiency
    cores (8-11). Every thread gets a core of its own while there are cores, the performance
    cores first; only then do SMT siblings share one (a sibling gives about half a core)."""
    _cpu_tree(tmp_path, [([0, 1], 1024), ([2, 3], 1024), ([4, 5], 1024), ([6, 7], 1024)])
    _cpu_tree(tmp_path, [([cpu], 400) for cpu in range(8, 12)])
    every = set(range(12))
    assert cpus_for(2, sysfs=str(tmp_path), allowed=every) == [7, 5]
    assert cpus_for(4, sysfs=str(tmp_path), allowed=every) == [7, 5, 3, 1]
    assert cpus_for(6, sysfs=str(tmp_path), allowed=every) == [7, 5, 3, 1, 11, 10]
    assert cpus_for(10, sysfs=str(tmp_path), allowed=every) == [7, 5, 3, 1, 11, 10, 9, 8, 6, 4]
    assert cpus_for(2, sysfs=str(tmp_path), allowed={8, 9, 10}) == [10, 9]
    assert cpus_for(13, sysfs=str(tmp_path), allowed=every) is None


def test_without_topology_the_highest_numbered(tmp_path: Path) -> None:
    assert cpus_for(3, sysfs=str(tmp_path), allowed={0, 1, 2, 3}) == [3, 2, 1]

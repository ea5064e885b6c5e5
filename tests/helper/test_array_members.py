"""Each member's share of a run on a real array: a btrfs over three loop devices, two backed by
files in /dev/shm and one by a file a FUSE server really paces slower (tests/fixtures/
throttled_fuse.py), benchmarked with `stripewise bench --json --save` through the real helper.
The members' figures come from the kernel's counters; the slow member is named, and the run's
samples, flags and named member come back from the history."""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore
from stripewise.model.members import stored_stand_outs
from tests.fixtures.loops import MiB, loop_device, needs_loop
from tests.fixtures.throttled_fuse import needs_fuse, throttled_disks

needs_btrfs = pytest.mark.skipif(shutil.which("mkfs.btrfs") is None, reason="needs mkfs.btrfs")

DEVICE_BYTES = 256 * MiB
SLOW_MB_S = 25.0  # the paced member's reads; the others read at memory speed
RATIO = r"(\d+\.\d)x the others' (await|utilisation)"


@contextlib.contextmanager
def btrfs_over(devices: list[str], data: str) -> Iterator[str]:
    subprocess.run(
        ["mkfs.btrfs", "-f", "-q", "-d", data, "-m", "raid1", *devices],
        check=True, capture_output=True,
    )  # fmt: skip
    mountpoint = tempfile.mkdtemp(prefix="stripewise-btrfs-")
    options = ",".join(f"device={device}" for device in devices)
    try:
        subprocess.run(["mount", "-o", options, devices[0], mountpoint], check=True)
        try:
            yield mountpoint
        finally:
            subprocess.run(["umount", mountpoint], check=True)
    finally:
        Path(mountpoint).rmdir()


def bench_saved(target: str, db: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "stripewise", "bench", "--target", target, "--size", "96M",
         "--engine", "builtin", "--phases", "seq_write,seq_read", "--rate", "10",
         "--json", "--save", "--db", db],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def middle(events: list[dict[str, Any]], phase: str) -> list[tuple[float, dict[str, Any]]]:
    """The phase's samples but its first and last, each with the seconds since the one before:
    the interval its kernel rates are over. (The first's began with the phase, which no event
    dates; the last may reach back over the one before when the phase ended just after it.)"""
    samples = [e for e in events if e["event"] == "sample" and e["phase"] == phase]
    return [(s["t_s"] - b["t_s"], s) for b, s in itertools.pairwise(samples[:-1])]


def engine_mb(events: list[dict[str, Any]], phase: str, key: str) -> float:
    """MB the engine moved over those samples: each rate times the time it stands for."""
    return sum(s[key] * s["span_s"] for _interval, s in middle(events, phase))


def members_mb(events: list[dict[str, Any]], phase: str, members: list[str], key: str) -> float:
    """MB the members moved over the same samples: not a sum of rates, which weighs a short
    interval's as much as a long one's."""
    return sum(
        interval * sum(s["disks"][m][key] for m in members if m in s["disks"])
        for interval, s in middle(events, phase)
    )


@needs_loop
@needs_fuse
@needs_btrfs
@pytest.mark.parametrize("data", ["raid0", "raid1"])
def test_the_slow_member_of_a_btrfs_is_named_live_and_in_the_history(
    tmp_path: Path, data: str
) -> None:
    with (
        throttled_disks(1, DEVICE_BYTES, total_mb_s=SLOW_MB_S, disk_mb_s=SLOW_MB_S, slow={})
        as paced,
        loop_device(DEVICE_BYTES) as first,
        loop_device(DEVICE_BYTES) as last,
    ):  # fmt: skip
        slow = paced.names[0]
        members = [first.name, slow, last.name]
        with btrfs_over([first.device, f"/dev/{slow}", last.device], data) as mountpoint:
            db = f"sqlite:///{tmp_path / 'history.db'}"
            events = bench_saved(mountpoint, db)

    reads = [e for e in events if e["event"] == "sample" and e["phase"] == "seq_read"]
    writes = [e for e in events if e["event"] == "sample" and e["phase"] == "seq_write"]
    assert len(reads) >= 5
    for sample in reads:  # every member, at the top of the array, with its kernel figures
        assert set(sample["disks"]) == set(members)
        for name in members:
            rates = sample["disks"][name]
            assert rates["role"] == "target" and rates["depth"] == 0
            assert rates["queue_size"] >= 0 and 0 <= rates["busy_pct"] <= 100
            if rates["read_iops"] + rates["write_iops"] > 0:
                assert rates["await_ms"] >= 0
            else:
                assert "await_ms" not in rates
    # the members' reads add up to what the engine read: each block is read from one copy
    # (raid1 too), plus what btrfs reads of its own (checksums, metadata); in MB, not in sums
    # of rates over intervals of different lengths
    engine_read = engine_mb(events, "seq_read", "engine_read_mb_s")
    read = members_mb(events, "seq_read", members, "read_mb_s")
    assert 0.85 * engine_read <= read <= 1.3 * engine_read, (read, engine_read)
    # writes: raid0 writes each byte once, raid1 twice (plus metadata, written twice)
    copies = 1 if data == "raid0" else 2
    engine_written = engine_mb(events, "seq_write", "engine_write_mb_s")
    written = members_mb(events, "seq_write", members, "write_mb_s")
    assert 0.8 * copies * engine_written <= written <= 1.5 * copies * engine_written, (
        written,
        engine_written,
    )

    said = [e["message"] for e in events if e["event"] == "warning"]
    result = events[-1]
    flags = {r["phase"]: r.get("flags", []) for r in result["results"]}
    for phase, title in (("seq_write", "Sequential Output"), ("seq_read", "Sequential Input")):
        samples = writes if phase == "seq_write" else reads
        busy = {m: sum(1 for s in samples if "await_ms" in s["disks"][m]) for m in members}
        named = [m for m in said if m.startswith(title) and "the others'" in m]
        # judged only beside another member that worked: raid1 reads one copy, chosen by the
        # reader's pid, and may leave all but one member idle; and only from 5 intervals with
        # I/O: the writes (the pacer slows reads only) may be done in under half a second
        if busy[slow] < 5 or all(busy[m] < 5 for m in members if m != slow):
            assert phase == "seq_write" or data == "raid1", busy
            assert not named and "member_stands_out" not in flags[phase]
            continue
        (message,) = named
        assert f": {slow}: " in message
        assert all(f"{m}: " not in message for m in members if m != slow)
        match = re.search(RATIO, message)
        assert match is not None and float(match.group(1)) > 2.0
        # the figures in brackets are the slow one's, then the others' median: in that order
        figures = re.search(r"\(([\d.]+) (?:ms|%) vs ([\d.]+) (?:ms|%)\)", message)
        assert figures is not None and float(figures.group(1)) > 2 * float(figures.group(2))
        assert "member_stands_out" in flags[phase]
    if data == "raid0":  # its reads are split over every member: the slow one is always named
        assert "member_stands_out" in flags["seq_read"]

    database = open_database(db)
    try:
        store = HistoryStore(database)
        (run,) = store.list_runs()
        detail = store.get_run(run.id)
        stored = store.samples(run.id)
    finally:
        database.close()
    stored_reads = [row for row in stored if row.phase == "seq_read"]
    assert len(stored_reads) == len(reads)
    for row, sample in zip(stored_reads, reads, strict=True):
        for name in members:
            rates = sample["disks"][name]
            assert row.data[f"disks.{name}.queue_size"] == rates["queue_size"]
            assert row.data.get(f"disks.{name}.await_ms") == rates.get("await_ms")
    kept = {v.phase for v in detail.results if "member_stands_out" in v.flags}
    assert kept == {p for p, f in flags.items() if "member_stands_out" in f}
    assert detail.context.disks is not None
    places = {d.name: d for d in detail.context.disks if d.name is not None}
    assert {places[m].role for m in members} == {"target"}
    named_again = stored_stand_outs(places, ((r.phase, r.repetition, r.data) for r in stored))
    for phase, phase_flags in flags.items():
        assert ((phase, 1) in named_again) == ("member_stands_out" in phase_flags)
    if "member_stands_out" in flags["seq_read"]:
        assert named_again[("seq_read", 1)].startswith(f"{slow}: ")


@needs_loop
@needs_fuse
@needs_btrfs
def test_the_cli_text_and_history_show_name_the_slow_member(tmp_path: Path) -> None:
    with (
        throttled_disks(1, DEVICE_BYTES, total_mb_s=SLOW_MB_S, disk_mb_s=SLOW_MB_S, slow={})
        as paced,
        loop_device(DEVICE_BYTES) as first,
        loop_device(DEVICE_BYTES) as last,
    ):  # fmt: skip
        slow = paced.names[0]
        db = f"sqlite:///{tmp_path / 'history.db'}"
        with btrfs_over([first.device, f"/dev/{slow}", last.device], "raid0") as mountpoint:
            done = subprocess.run(
                [sys.executable, "-m", "stripewise", "bench", "--target", mountpoint,
                 "--size", "64M", "--engine", "builtin", "--phases", "seq_read", "--rate", "10",
                 "--save", "--db", db],
                capture_output=True, text=True, timeout=300, check=False,
            )  # fmt: skip
    assert done.returncode == 0, done.stderr
    history = subprocess.run(
        [sys.executable, "-m", "stripewise", "history", "show", "1",
         "--db", db],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert "member_stands_out: a member stands out" in history.stdout
    assert f"  Sequential Input, Block, pass 1: {slow}: " in history.stdout
    assert f"warning: Sequential Input, Block, pass 1: {slow}: " in done.stdout
    assert "x the others' await (" in done.stdout
    assert "seq_read: a member stands out: one member of the array" in done.stdout

"""A scaling pass's window (helper/scaling.read_together) on files standing in for disks: it
reads through held descriptors only, so a file's is as good as a disk's. The window opens once
every disk has read a block, and a disk that read nothing in it fails the pass: a fast disk
read whole while another thread was still starting made one disk's figure pass for two."""

from __future__ import annotations

import mmap
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from stripewise.helper import scaling
from stripewise.helper.engines.base import Progress
from stripewise.helper.scaling import HeldDisk, read_together

MiB = 1 << 20


@pytest.fixture
def disks(tmp_path: Path) -> Iterator[list[HeldDisk]]:
    held = []
    for name in ("fast", "slow"):
        path = tmp_path / name
        path.write_bytes(os.urandom(MiB) * 8)
        held.append(HeldDisk(name, os.open(path, os.O_RDONLY), 8 * MiB))
    yield held
    for disk in held:
        os.close(disk.fd)


def buffers(count: int) -> list[mmap.mmap]:
    return [mmap.mmap(-1, MiB) for _ in range(count)]


def paced(monkeypatch: pytest.MonkeyPatch, pace: dict[int, tuple[float, float]]) -> None:
    """Reads of each descriptor take (its first, each after) seconds longer, as a disk's
    would: a file in the page cache is read whole in less time than a thread takes to wake."""
    real, seen = os.preadv, dict.fromkeys(pace, 0)

    def preadv(handle: int, views: list[memoryview], offset: int) -> int:
        seen[handle] += 1
        first, then = pace[handle]
        time.sleep(first if seen[handle] == 1 else then)
        return real(handle, views, offset)

    monkeypatch.setattr(scaling.os, "preadv", preadv)


def test_a_disk_slow_to_start_is_waited_for_before_the_window_opens(
    disks: list[HeldDisk], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = disks
    paced(monkeypatch, {fast.fd: (0.01, 0.01), slow.fd: (0.3, 0.01)})
    figures = read_together(disks, buffers(2), 8 * MiB, MiB, threading.Event(), Progress(0))
    assert figures.error is None
    assert figures.disk_bytes[fast.name] > 0 and figures.disk_bytes[slow.name] > 0
    assert figures.window_s < 0.3, "the slow disk's start is not inside the window"


def test_a_disk_that_reads_nothing_in_the_window_fails_the_pass(
    disks: list[HeldDisk], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = disks
    paced(monkeypatch, {fast.fd: (0.0, 0.0), slow.fd: (0.0, 0.5)})
    figures = read_together(disks, buffers(2), 8 * MiB, MiB, threading.Event(), Progress(0))
    assert figures.disk_bytes[slow.name] == 0
    assert figures.error == (
        "slow read nothing before fast had read 8 MiB: the disks were not read together; "
        "read more per pass"
    )


def test_one_disk_alone_counts_every_byte(disks: list[HeldDisk]) -> None:
    figures = read_together(disks[:1], buffers(1), 8 * MiB, MiB, threading.Event(), Progress(0))
    assert figures.error is None and figures.disk_bytes == {"fast": 8 * MiB}

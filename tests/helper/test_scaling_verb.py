"""`bench.scaling` through the real helper on loop devices: what it reads, what it refuses."""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from stripewise.protocol.events import event_from_json
from stripewise.protocol.scaling import ScalingEnd, ScalingPass, ScalingStarted, ScalingStep
from tests.fixtures.helper_process import Helper
from tests.fixtures.loops import MiB, loop_device, needs_loop
from tests.fixtures.throttled_fuse import needs_fuse, throttled_disks

pytestmark = needs_loop


def _until_end(helper: Helper) -> list[Any]:
    events = []
    while True:
        message = helper.read()
        if "event" in message:
            events.append(event_from_json(message))
            if message["event"] == "scaling_end":
                return events


@contextlib.contextmanager
def _helper() -> Iterator[Helper]:
    helper = Helper()
    try:
        yield helper
    finally:
        helper.close()


@needs_fuse
def test_it_reads_each_disk_alone_then_together_and_writes_nothing() -> None:
    # Paced disks (tests/fixtures/throttled_fuse.py), not RAM-backed loops: one of those read
    # 64 MiB before the other disk's thread ran on a loaded machine, and that pass failed, as
    # it should (tests/helper/test_scaling_window.py), which is not what this test is about.
    with (
        throttled_disks(2, 8 * MiB, total_mb_s=30.0, disk_mb_s=20.0, slow={}) as disks,
        _helper() as helper,
    ):
        first, second = disks.names
        before = disks.checksums()
        reply = helper.ask("bench.scaling", {"devices": [first, second], "size": "4M", "repeat": 2})
        started = ScalingStarted.from_json(reply["result"])
        assert [s.disks for s in started.steps] == [(first,), (second,), (first, second)]
        assert started.visits == 6
        events = _until_end(helper)
        assert disks.checksums() == before  # nothing written, byte for byte
    passes = [e for e in events if isinstance(e, ScalingPass)]
    assert [(p.step, p.repetition) for p in passes] == [
        (0, 1), (1, 1), (2, 1), (2, 2), (1, 2), (0, 2),
    ]  # fmt: skip
    assert all(p.error is None and p.mb_s > 0 and p.read_bytes > 0 for p in passes)
    assert all(p.read_bytes == 4 * MiB for p in passes if len(p.disks) == 1)
    assert len([e for e in events if isinstance(e, ScalingStep)]) == 6
    end = events[-1]
    assert isinstance(end, ScalingEnd) and end.status == "complete" and end.written_bytes == 0
    assert 0 < end.measured_s <= end.elapsed_s


def _refusal(helper: Helper, devices: list[str], size: str = "1M") -> str:
    reply = helper.ask("bench.scaling", {"devices": devices, "size": size})
    assert not reply["ok"]
    assert reply["error"]["code"] == "refused", reply
    return str(reply["error"]["message"])


@contextlib.contextmanager
def _dev_entry(make: list[str]) -> Iterator[str]:
    """A name in /dev made by `make` (its last word is where), removed afterwards."""
    name = f"swtest{secrets.token_hex(4)}"
    path = f"/dev/{name}"
    subprocess.run([*make, path], check=True)
    try:
        yield name
    finally:
        os.unlink(path)


def test_a_missing_device_a_partition_a_link_and_a_swapped_node_are_refused() -> None:
    with loop_device(16 * MiB, "-P") as loop, _helper() as helper:
        assert "does not exist" in _refusal(helper, ["sdzz9"])
        assert "less than" in _refusal(helper, [loop.name], "64M")
        subprocess.run(["addpart", loop.device, "1", "2048", "8192"], check=True)
        try:
            assert "a partition" in _refusal(helper, [f"{loop.name}p1"])
        finally:
            subprocess.run(["delpart", loop.device, "1"], check=True)
        with _dev_entry(["ln", "-s", loop.name]) as link:
            assert "symbolic link" in _refusal(helper, [link])
        number = os.stat(loop.device).st_rdev  # another name for the same disk's node
        mknod = f'mknod "$0" b {os.major(number)} {os.minor(number)}'
        with _dev_entry(["sh", "-c", mknod]) as node:
            assert f"node of {loop.name}" in _refusal(helper, [node])
        assert helper.process.poll() is None  # refusals end nothing


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
def test_an_unprivileged_helper_refuses_block_devices() -> None:
    with loop_device(4 * MiB) as loop:
        helper = Helper("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
        try:
            assert "privileged helper only" in _refusal(helper, [loop.name])
        finally:
            helper.close()


def test_one_run_at_a_time_and_cancel_ends_it_within_a_pass() -> None:
    with loop_device(256 * MiB) as first, loop_device(256 * MiB) as second, _helper() as helper:
        devices = [first.name, second.name]
        reply = helper.ask("bench.scaling", {"devices": devices, "size": "256M", "repeat": 20})
        assert reply["ok"], reply
        busy = helper.ask("bench.scaling", {"devices": devices, "size": "1M"})
        assert busy["error"]["code"] == "busy"
        assert helper.ask("bench.start", {"target": "/tmp", "size": "1M"})["error"]["code"] == (
            "busy"
        )
        while not any(e.get("event") == "scaling_pass" for e in helper.events):
            helper.events.append(helper.read())
        asked = time.monotonic()
        assert helper.ask("bench.cancel", {})["result"]["cancelling"] is True
        events = _until_end(helper)
        took = time.monotonic() - asked
    end = events[-1]
    assert isinstance(end, ScalingEnd) and end.status == "cancelled" and end.error is None
    assert took < 2.0
    passes = [e for e in events if isinstance(e, ScalingPass)]
    assert len(passes) <= 1 and all(p.error in (None, "cancelled") for p in passes)

"""`disk.health` through the real helper and the real smartctl on this machine's devices (a
virtio disk and loop devices: no SMART), and how smartctl children are bounded."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

import stripewise.helper.health as health_verb
from stripewise.model.health import DiskHealth
from stripewise.protocol.health import DiskHealthReply
from tests.fixtures.helper_process import Helper

pytestmark = pytest.mark.skipif(shutil.which("smartctl") is None, reason="needs smartmontools")

LOOPS = sorted(p.name for p in Path("/sys/block").glob("loop*"))[:2]
VIRTIO = sorted(p.name for p in Path("/sys/block").glob("vd*"))[:1]
NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")


@pytest.mark.parametrize("prefix", [(), NOBODY], ids=["root", "unprivileged"])
def test_devices_without_smart_say_so_in_one_line(prefix: tuple[str, ...]) -> None:
    if os.geteuid() != 0 and prefix:
        pytest.skip("needs root to start a helper as another user")
    devices = VIRTIO + LOOPS
    assert devices, "this machine has neither a virtio disk nor loop devices"
    helper = Helper(*prefix)
    try:
        answer = helper.ask("disk.health", {"devices": devices})
    finally:
        helper.close()
    assert answer["ok"], answer
    reply = DiskHealthReply.from_json(answer["result"])
    kinds = {"vd": "virtio disk", "loop": "loop device"}
    expected = [
        DiskHealth(
            name,
            False,
            f"no SMART ({next(k for p, k in kinds.items() if name.startswith(p))})",
            exit_status=1,  # bit 1: smartctl could not tell what the device is
        )
        for name in devices
    ]
    assert list(reply.disks) == expected


def test_names_outside_sys_block_are_refused_before_anything_runs() -> None:
    helper = Helper()
    try:
        missing = helper.ask("disk.health", {"devices": [*LOOPS, "sdzzz"]})
        climbing = helper.ask("disk.health", {"devices": ["../loop0"]})
    finally:
        helper.close()
    assert (missing["ok"], missing["error"]["code"]) == (False, "not_found")
    assert "sdzzz" in missing["error"]["message"]
    assert climbing["error"]["code"] == "bad_args"


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def test_a_smartctl_that_hangs_is_killed_at_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health_verb, "smartctl_argv", lambda name: ["sleep", "60"])
    monkeypatch.setattr(health_verb, "TIMEOUT_S", 0.5)
    began = time.monotonic()
    answers = health_verb.read_health(("sda", "sdb"))
    assert time.monotonic() - began < 5
    assert [a.reason for a in answers] == ["smartctl did not answer within 0.5 s"] * 2
    assert _children_of(os.getpid()) == []  # killed and reaped


def test_output_is_bounded_and_must_be_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health_verb, "MAX_OUTPUT_BYTES", 100_000)
    monkeypatch.setattr(health_verb, "smartctl_argv", lambda name: ["yes"])
    (flood,) = health_verb.read_health(("sda",))
    assert flood.reason == "smartctl said more than 100000 bytes"
    monkeypatch.setattr(health_verb, "smartctl_argv", lambda name: ["echo", "SMART ok"])
    (text,) = health_verb.read_health(("sda",))
    assert text.reason == "smartctl's output is not JSON (smartmontools < 7?)"
    assert _children_of(os.getpid()) == []


def test_many_disks_are_asked_a_few_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """20 children that each take 0.3 s: 3 rounds of 8, not 20 in turn nor 20 at once."""
    recorded = Path(__file__).parents[1] / "fixtures" / "smart" / "nvme_samsung_healthy.json"
    script = f"sleep 0.3; cat {recorded}"
    monkeypatch.setattr(health_verb, "smartctl_argv", lambda name: ["sh", "-c", script])
    names = tuple(f"nvme{n}n1" for n in range(20))
    began = time.monotonic()
    answers = health_verb.read_health(names)
    took = time.monotonic() - began
    assert [a.device for a in answers] == list(names)
    assert all(a.available and a.percentage_used == 16 for a in answers)
    assert 0.85 < took < 3.0, took


def test_no_disk_is_read_while_a_benchmark_runs(tmp_path: Path) -> None:
    """The helper's loop carries the run's events, and smartctl would disturb its disks."""
    helper = Helper()
    try:
        spec = {"target": str(tmp_path), "size": "256M", "phases": ["seq_write"]}
        started = helper.ask("bench.start", {**spec, "engine": "builtin", "runtime_cap_s": 30})
        assert started["ok"], started
        busy = helper.ask("disk.health", {"devices": LOOPS})
        helper.ask("bench.cancel", {})
        helper.until_result()
        after = helper.ask("disk.health", {"devices": LOOPS})
    finally:
        helper.close()
    assert (busy["ok"], busy["error"]["code"]) == (False, "busy")
    assert "benchmark is running" in busy["error"]["message"]
    assert after["ok"], after

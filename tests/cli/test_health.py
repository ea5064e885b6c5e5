"""`stripewise health [--device DEV ...] [--json]`: the contract's JSON keys and exit 0 on this
machine's real devices (its own loop device: no SMART), and the table a failing disk makes,
from real published smartctl output."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stripewise.cli.health import health_json, health_text
from stripewise.model.health import DiskHealth, parse_smartctl
from tests.fixtures.loops import MiB, loop_device, needs_loop

SMART = Path(__file__).resolve().parents[1] / "fixtures" / "smart"
needs_smartctl = pytest.mark.skipif(shutil.which("smartctl") is None, reason="smartmontools")
CONTRACT = {"device", "available", "reason", "passed", "attributes"}


def stripewise(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stripewise", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@needs_smartctl
@needs_loop
def test_json_of_named_devices_keeps_the_contract() -> None:
    with loop_device(8 * MiB) as loop:
        name = Path(loop.device).name
        done = stripewise("health", "--device", loop.device, "--device", name, "--json")
        assert done.returncode == 2 and "named twice" in done.stderr  # /dev/x and x: one disk
        done = stripewise("health", "--device", loop.device, "--json")
    assert done.returncode == 0, done.stderr
    (disk,) = json.loads(done.stdout)["disks"]
    assert set(disk) >= CONTRACT
    assert disk["device"] == name and disk["available"] is False and disk["passed"] is None
    assert disk["reason"] == "no SMART (loop device)" and disk["attributes"] == {}


@needs_smartctl
def test_every_disk_of_the_map_is_answered() -> None:
    done = stripewise("health", "--json")
    assert done.returncode == 0, done.stderr
    disks = json.loads(done.stdout)["disks"]
    assert disks and all(set(d) >= CONTRACT for d in disks)
    assert all(d["available"] or d["reason"] for d in disks)
    text = stripewise("health")
    assert text.returncode == 0
    if Path("/sys/block/vda").exists():
        assert "vda: no SMART (virtio disk)\n" in text.stdout


def test_a_disk_not_in_sys_block_is_refused() -> None:
    done = stripewise("health", "--device", "sdzzz")
    assert done.returncode == 2 and "sdzzz" in done.stderr and done.stdout == ""
    bad = stripewise("health", "--device", "../etc/passwd")
    assert bad.returncode == 2 and "kernel name" in bad.stderr


def test_a_failing_disk_in_the_table_and_the_json() -> None:
    def read(name: str, device: str) -> DiskHealth:
        return parse_smartctl(device, json.loads((SMART / name).read_text()))

    failing = read("sata_hdd_failing_pending.json", "sdc")
    healthy = read("nvme_samsung_healthy.json", "nvme0n1")
    virtio = read("virtio_unknown_type.json", "vda")
    text = health_text((failing, healthy, virtio))
    assert text.splitlines() == [
        "DISK     HEALTH   SMART   °C  HOURS   MODEL",  # SMART: the drive's overall assessment
        "sdc      failing  FAILED  25  65,592  Hitachi HDS721050DLE630",
        "nvme0n1  ok       passed  30  10,407  SAMSUNG MZVL21T0HCLR-00B00",
        "  sdc: the drive's own SMART assessment says FAILING",
        "  sdc: a pre-failure attribute is at or below its threshold now",
        "  sdc: 8 pending sectors",
        "  sdc: 1,975 reallocated sectors",
        "  sdc: the drive's self-test log holds errors",
        "vda: no SMART (virtio disk)",
    ]
    printed = health_json(failing)
    assert printed["passed"] is False and printed["verdict"] == "failing"
    assert printed["attributes"]["pending_sectors"] == 8
    assert printed["attributes"]["reallocated_sectors"] == 1975


@needs_smartctl
@needs_loop
def test_a_saved_benchmark_keeps_its_disks_health(tmp_path: Path) -> None:
    """`bench --save` asks the helper for its target's disks' health before the run starts
    (a loop device here: no SMART, said in the run's context)."""
    db = f"sqlite:///{tmp_path / 'history.db'}"
    with loop_device(16 * MiB) as loop:
        done = stripewise(
            *("bench", "--target", loop.device, "--size", "8M", "--phases", "seq_read"),
            *("--engine", "builtin", "--save", "--db", db),
        )
        assert done.returncode == 0, done.stderr
    shown = stripewise("--db", db, "history", "show", "1", "--json")
    assert shown.returncode == 0, shown.stderr
    (disk,) = json.loads(shown.stdout)["context"]["disks"]
    assert disk["name"] == Path(loop.device).name
    assert disk["health"] == {
        "verdict": "unknown",
        "passed": None,
        "reason": "no SMART (loop device)",
    }

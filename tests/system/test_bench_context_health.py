"""Each run's context keeps its disks' SMART health: on a real loop device, with health values
from real published smartctl output; contexts recorded before health was read load as before."""

from __future__ import annotations

import json
from pathlib import Path

from stripewise.inventory.bench_context import collect_context
from stripewise.model.health import parse_smartctl
from stripewise.model.run_context import HealthContext, HealthFigures, RunContext
from tests.fixtures.loops import MiB, loop_device, needs_loop

SMART = Path(__file__).resolve().parents[1] / "fixtures" / "smart"


@needs_loop
def test_a_runs_disks_keep_their_health() -> None:
    with loop_device(8 * MiB) as loop:
        name = Path(loop.device).name
        failing = parse_smartctl(
            name, json.loads((SMART / "sata_hdd_failing_pending.json").read_text())
        )
        other = parse_smartctl("vda", json.loads((SMART / "virtio_unknown_type.json").read_text()))
        stored = collect_context(
            loop.device,
            [name],
            engine="builtin",
            engine_version="1.0",
            health={name: failing, "vda": other},
        )
    (disk,) = stored["disks"]
    assert disk["health"] == {
        "verdict": "failing",
        "passed": False,
        "reasons": [
            "the drive's own SMART assessment says FAILING",
            "a pre-failure attribute is at or below its threshold now",
            "8 pending sectors",
            "1,975 reallocated sectors",
            "the drive's self-test log holds errors",
        ],
        "attributes": {
            "temperature_c": 25,
            "power_on_hours": 65592,
            "reallocated_sectors": 1975,
            "pending_sectors": 8,
            "offline_uncorrectable": 0,
            "udma_crc_errors": 0,
        },
    }
    typed = RunContext.from_json(json.loads(json.dumps(stored)))  # as the history stores it
    assert typed.disks is not None
    health = typed.disks[0].health
    assert health == HealthContext(
        "failing",
        False,
        tuple(disk["health"]["reasons"]),
        None,
        HealthFigures(25, 65592, 1975, 8, 0, 0),
    )
    assert typed.to_json() == json.loads(json.dumps(stored))  # written back unchanged


def test_an_unreadable_disk_keeps_its_reason_and_old_contexts_load() -> None:
    older = {"disks": [{"name": "sdb", "model": "X"}], "kernel": "6.1"}
    typed = RunContext.from_json(older)
    assert typed.disks is not None and typed.disks[0].health is None
    assert typed.to_json() == older
    health = {"verdict": "unknown", "passed": None, "reason": "no SMART (virtio disk)"}
    unread = {"disks": [{"name": "vda", "health": health}]}
    read = RunContext.from_json(unread)
    assert read.disks is not None and read.disks[0].health is not None
    assert read.disks[0].health.reason == "no SMART (virtio disk)"
    assert read.to_json() == unread  # an explicit null (passed) is kept as stored

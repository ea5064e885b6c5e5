"""The Sun X4500 of the field notes: 48 disks, six 8-port controllers, names unlike slots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stripewise.inventory import load_inventory
from stripewise.inventory.snapshot import to_json
from tests.fixtures.machines import X4500_CONTROLLERS, X4500_SLOT_MAP, sun_x4500
from tests.fixtures.umock import needs_umockdev
from tests.inventory.conftest import disk, inventory_json, slots_by_disk

pytestmark = needs_umockdev


@pytest.fixture(scope="module")
def x4500() -> dict[str, Any]:
    return inventory_json(sun_x4500())


def test_six_controllers_of_eight_slots_in_port_order(x4500: dict[str, Any]) -> None:
    controllers = x4500["controllers"]
    assert [c["id"] for c in controllers] == list(X4500_CONTROLLERS)
    for entry in controllers:
        assert entry["driver"] == "sata_mv" and entry["port_count"] == 8
        assert [s["slot"] for s in entry["slots"]] == list(range(8))
        assert [s["port"] for s in entry["slots"]] == [f"port {i}" for i in range(8)]
        assert all(s["disk"] for s in entry["slots"])
        assert entry["link_mb_s"] is None  # PCI-X reports no link speed: unknown, not guessed


def test_every_disk_in_its_slot(x4500: dict[str, Any]) -> None:
    placed = slots_by_disk(x4500)
    assert len(placed) == 48
    for name, (controller_index, port) in X4500_SLOT_MAP.items():
        controller_id, slot, _port = placed[name]
        assert (X4500_CONTROLLERS.index(controller_id), slot) == (controller_index, port), name


def test_kernel_names_are_not_in_slot_order(x4500: dict[str, Any]) -> None:
    first = [s["disk"]["name"] for s in x4500["controllers"][0]["slots"]]
    assert first != sorted(first), "the testbed must scramble names as the real machine does"


def test_system_disk_and_arrays(x4500: dict[str, Any]) -> None:
    system = [d for d in (disk(x4500, n) for n in X4500_SLOT_MAP) if d["system_disk"]]
    assert [d["name"] for d in system] == ["sdi"]
    assert any(r.startswith("/ on sdi") for r in system[0]["system_reasons"])
    assert any(r.startswith("swap on sdi") for r in system[0]["system_reasons"])
    assert slots_by_disk(x4500)["sdi"][:2] == (X4500_CONTROLLERS[3], 0)  # bootable disk 0
    arrays = {a["name"]: a for a in x4500["arrays"]}
    assert arrays["md1"]["level"] == "raid5"
    assert arrays["md1"]["members"] == ["sdm1", "sdp1", "sds1", "sdv1"]
    assert arrays["md4"]["level"] == "raid6" and len(arrays["md4"]["members"]) == 8
    assert arrays["md5"]["members"] == ["md2", "md3"]
    assert disk(x4500, "sdm")["state"] == "array_member"
    assert disk(x4500, "sdm")["in_use"] is True


def test_buses_and_bridges(x4500: dict[str, Any]) -> None:
    by_id = {c["id"]: c for c in x4500["controllers"]}
    assert {c["root"] for c in x4500["controllers"]} == {"pci0000:00", "pci0000:80"}
    # two controllers behind one AMD-8132 bridge share that PCI-X bus
    assert by_id["0000:02:01.0"]["bus"] == by_id["0000:02:02.0"]["bus"]
    assert by_id["0000:01:01.0"]["bus"] != by_id["0000:02:01.0"]["bus"]


def test_identity_and_tuning_values(x4500: dict[str, Any]) -> None:
    sdi = disk(x4500, "sdi")
    assert sdi["serial"] and sdi["model"].startswith("HITACHI")
    assert sdi["size_bytes"] == 976773168 * 512
    assert sdi["transport"] == "sata" and sdi["rotational"] is True
    assert sdi["scheduler"] == "mq-deadline" and "bfq" in sdi["schedulers"]
    assert isinstance(sdi["read_ahead_kb"], int)
    assert any(p.startswith("disk/by-path/") for p in sdi["by_path"])


def _placement(path: Path) -> dict[str, tuple[str, int]]:
    inventory = to_json(load_inventory(path))
    return {name: placed[:2] for name, placed in slots_by_disk(inventory).items()}


def test_dumps_and_recordings_draw_the_same_map(x4500: dict[str, Any], tmp_path: Path) -> None:
    """An admin plans from `udevadm info --export-db` or `umockdev-record` of the server."""
    machine = sun_x4500()
    expected = {name: placed[:2] for name, placed in slots_by_disk(x4500).items()}
    for name, text in (
        ("export-db.txt", machine.export_db()),
        ("record.umockdev", machine.umockdev(style="record")),  # no ataN directories
        ("live.umockdev", machine.umockdev()),
    ):
        path = tmp_path / name
        path.write_text(text)
        assert _placement(path) == expected, name


def test_export_db_knows_no_sizes_or_mounts(tmp_path: Path) -> None:
    path = tmp_path / "export-db.txt"
    path.write_text(sun_x4500().export_db())
    inventory = load_inventory(path)
    sdi = inventory.find_disk("sdi")
    assert sdi is not None and sdi.size_bytes is None
    assert sdi.state.value == "unknown", "a dump must not claim the system disk is free"
    assert any("mount" in w for w in inventory.warnings)
    assert inventory.find_disk("sdm").state.value == "array_member"  # md members are in the dump

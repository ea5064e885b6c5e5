"""Ten X4500s side by side (480 disks), read through libudev in one umockdev testbed."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.fixtures.machines import X4500_SLOT_MAP, x4500_controllers, x4500_row
from tests.fixtures.testbed_block import sd_index, sd_name
from tests.fixtures.umock import needs_umockdev
from tests.inventory.conftest import disk, inventory_json, slots_by_disk

pytestmark = needs_umockdev

CHASSIS = 10


@pytest.fixture(scope="module")
def row() -> dict[str, Any]:
    return inventory_json(x4500_row(CHASSIS))


def test_sixty_controllers_of_eight_ports_each_full(row: dict[str, Any]) -> None:
    ids = [c["id"] for c in row["controllers"]]
    assert ids == [address for n in range(CHASSIS) for address in x4500_controllers(n)]
    for entry in row["controllers"]:
        assert entry["driver"] == "sata_mv" and entry["port_count"] == 8
        assert [s["port"] for s in entry["slots"]] == [f"port {i}" for i in range(8)]
        assert all(s["disk"] for s in entry["slots"])


def test_every_disk_on_its_chassis_controller_and_port(row: dict[str, Any]) -> None:
    placed = slots_by_disk(row)
    assert len(placed) == 48 * CHASSIS
    for chassis in range(CHASSIS):
        controllers = x4500_controllers(chassis)
        for local, (controller, port) in X4500_SLOT_MAP.items():
            name = sd_name(48 * chassis + sd_index(local))
            assert placed[name][:2] == (controllers[controller], port), name


def test_every_disk_has_an_identity_of_its_own(row: dict[str, Any]) -> None:
    disks = [disk(row, name) for name in slots_by_disk(row)]
    for key in ("serial", "devnode", "major_minor", "hctl"):
        values = Counter(d[key] for d in disks)
        assert None not in values and max(values.values()) == 1, key
    wwns = [d["wwn"] for d in disks if d["wwn"]]
    assert len(wwns) == 4 * CHASSIS == len(set(wwns))  # the four 750 GB disks of each
    paths = [p for d in disks for p in d["by_path"]]
    assert len(paths) == len(set(paths))
    hosts = Counter(d["hctl"].split(":")[0] for d in disks)
    assert len(hosts) == 48 * CHASSIS  # a SCSI host per port, none shared across chassis


def test_system_disk_and_each_chassis_arrays(row: dict[str, Any]) -> None:
    system = [name for name in slots_by_disk(row) if disk(row, name)["system_disk"]]
    assert system == ["sdi"]
    arrays = {a["name"]: a for a in row["arrays"]}
    assert len(arrays) == 5 * CHASSIS
    for chassis in range(1, CHASSIS):
        first = 48 * chassis
        raid6 = arrays[f"md{10 * chassis + 4}"]
        assert raid6["level"] == "raid6" and len(raid6["members"]) == 8
        members = [sd_name(first + sd_index(n)) + "1" for n in ("sdm", "sdp", "sds", "sdv")]
        assert arrays[f"md{10 * chassis + 1}"]["members"] == members
        assert arrays[f"md{10 * chassis + 5}"]["members"] == [
            f"md{10 * chassis + 2}",
            f"md{10 * chassis + 3}",
        ]

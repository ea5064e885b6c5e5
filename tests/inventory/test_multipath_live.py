"""Issue 16 point 2, live: dm-multipath maps read through udev and sysfs (`slaves/`), and the
same machine's dumps and recordings drawing the same map."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stripewise.inventory import load_inventory
from tests.fixtures.machines_multipath import DISK_SECTORS, multipath_server
from tests.fixtures.umock import needs_umockdev
from tests.inventory.conftest import controller, disk, inventory_json, slots_by_disk

PAIRS = [("dm-0", "sda", "sdb"), ("dm-1", "sdc", "sdd"), ("dm-2", "sde", "sdf")]


@pytest.fixture(scope="module")
def live() -> dict[str, Any]:
    return inventory_json(multipath_server())


@needs_umockdev
def test_each_dual_ported_disk_is_one_disk_with_a_path_per_hba(live: dict[str, Any]) -> None:
    assert slots_by_disk(live) == {
        name: ("0000:03:00.0", index, f"phy {index}") for index, (name, _a, _b) in enumerate(PAIRS)
    }
    for index, (name, first, second) in enumerate(PAIRS):
        shown = disk(live, name)
        assert shown["size_bytes"] == DISK_SECTORS * 512  # the map's own size, read from sysfs
        assert shown["devnode"] == f"/dev/mapper/mpath{'abc'[index]}"
        assert shown["model"] == "ST4000NM0025" and shown["transport"] == "sas"
        assert shown["wwn"] == f"0x5000c500a1b2c3{index}7"
        assert shown["state"] == "free" and shown["holders"] == []
        assert [(p["name"], p["controller"], p["port"]) for p in shown["paths"]] == [
            (first, "0000:03:00.0", f"phy {index}"),
            (second, "0000:04:00.0", f"phy {index}"),
        ]
    second_hba = controller(live, "0000:04:00.0")["slots"]
    assert [(s["port"], s["path_of"]) for s in second_hba if s["path_of"]] == [
        (f"phy {index}", name) for index, (name, _a, _b) in enumerate(PAIRS)
    ]
    assert [a["members"] for a in live["arrays"]] == [[a, b] for _n, a, b in PAIRS]


@needs_umockdev
def test_dumps_and_recordings_of_the_machine_pair_the_same_paths(
    live: dict[str, Any], tmp_path: Path
) -> None:
    """export-db records no slaves/: the paths are found by the WWID in DM_UUID."""
    machine = multipath_server()
    expected = {name: [p["name"] for p in disk(live, name)["paths"]] for name, _a, _b in PAIRS}
    for name, text in (
        ("export-db.txt", machine.export_db()),
        ("record.umockdev", machine.umockdev(style="record")),
        ("live.umockdev", machine.umockdev()),
    ):
        path = tmp_path / name
        path.write_text(text)
        inventory = load_inventory(path)
        assert {d.name: [p.name for p in d.paths] for d in inventory.disks} == expected, name

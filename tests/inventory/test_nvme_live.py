"""Issue 27, points 5 and 10 live: native NVMe multipath namespaces and storage controllers with
nothing attached, read through libudev in a umockdev testbed, and the same machine's dumps and
recordings drawing the same map."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from stripewise.inventory import load_inventory
from tests.fixtures.machines_nvme import nvme_server
from tests.fixtures.umock import needs_umockdev, run_in_testbed
from tests.inventory.conftest import controller, disk, inventory_json, slots_by_disk

EMPTY = {"0000:00:17.0": 4, "0000:81:00.0": 8, "0000:82:00.0": 0}  # controller -> empty slots


@pytest.fixture(scope="module", params=[True, False], ids=["multipath-dir", "path-disks-only"])
def live(request: pytest.FixtureRequest) -> dict[str, Any]:
    return inventory_json(nvme_server(paths_dir=request.param))


@needs_umockdev
def test_namespaces_sit_on_their_pci_functions(live: dict[str, Any]) -> None:
    assert slots_by_disk(live) == {
        "nvme0n1": ("0000:01:00.0", 0, "namespace 1"),
        "nvme1n1": ("0000:02:00.0", 0, "namespace 1"),
    }
    assert not [d["name"] for d in live["virtual"] if d["name"].startswith("nvme")]
    shown = disk(live, "nvme1n1")
    assert shown["serial"] == "X0R0A0TXT1M8" and shown["transport"] == "nvme"
    assert [(p["name"], p["controller"], p["port"]) for p in shown["paths"]] == [
        ("nvme1c1n1", "0000:02:00.0", "namespace 1"),
        ("nvme1c2n1", "0000:03:00.0", "namespace 1"),
    ]
    port_b = controller(live, "0000:03:00.0")["slots"]
    assert [(s["port"], s["disk"], s["path_of"]) for s in port_b] == [
        ("namespace 1", None, "nvme1n1")
    ]
    assert disk(live, "nvme0n1")["paths"] == []
    assert controller(live, "0000:01:00.0")["link_mb_s"] == 7876  # PCIe 4.0 x4


@needs_umockdev
def test_storage_controllers_with_nothing_attached_are_listed(live: dict[str, Any]) -> None:
    empty = {
        c["id"]: len(c["slots"])
        for c in live["controllers"]
        if not any(s["disk"] or s["path_of"] for s in c["slots"])
    }
    assert empty == EMPTY
    hba = controller(live, "0000:81:00.0")
    assert (hba["driver"], hba["port_count"], hba["link_mb_s"]) == ("mpt3sas", 8, 7876)
    assert [s["port"] for s in hba["slots"]] == [f"phy {n}" for n in range(8)]
    assert controller(live, "0000:82:00.0")["model"] == "MegaRAID Tri-Mode SAS3508"
    ids = {c["id"] for c in live["controllers"]}
    assert not ids & {"0000:83:00.0", "0000:84:00.0"}, "a NIC, and an NVMe handed to a VM"


@needs_umockdev
def test_dumps_and_recordings_of_the_machine_draw_the_same_map(tmp_path: Path) -> None:
    machine = nvme_server()
    for name, text in (
        ("export-db.txt", machine.export_db()),
        ("record.umockdev", machine.umockdev(style="record")),
        ("live.umockdev", machine.umockdev()),
    ):
        path = tmp_path / name
        path.write_text(text)
        inventory = load_inventory(path)
        where = {d.name: c.id for c in inventory.controllers for d in c.disks}
        assert where == {"nvme0n1": "0000:01:00.0", "nvme1n1": "0000:02:00.0"}, name
        paths = [p.controller for p in inventory.disks[1].paths]
        assert paths == ["0000:02:00.0", "0000:03:00.0"], name
        empty = {
            c.id: len(c.slots)
            for c in inventory.controllers
            if not any(s.disk or s.path_of for s in c.slots)
        }
        assert empty == EMPTY, name


@needs_umockdev
def test_a_multipath_namespace_without_udevs_identity_has_its_subsystems(
    tmp_path: Path,
) -> None:
    """Without udev's ID_ properties (a container, a database not yet written), the serial
    and model of a namespace head under /devices/virtual/nvme-subsystem/ are read through
    its `device` link: virtual, but not an md or dm device with no parent to ask."""
    text = nvme_server().umockdev()
    unknown = ("E: ID_SERIAL_SHORT=", "E: ID_SERIAL=", "E: ID_MODEL=")
    kept = [line for line in text.splitlines() if not line.startswith(unknown)]
    done = run_in_testbed(
        "\n".join(kept) + "\n", [sys.executable, "-m", "stripewise", "inventory", "--json"]
    )
    assert done.returncode == 0, done.stderr
    shown = disk(json.loads(done.stdout), "nvme1n1")
    assert shown["serial"] == "X0R0A0TXT1M8" and shown["model"] == "KIOXIA KCM6XRUL3T84"

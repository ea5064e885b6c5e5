"""Real layouts from the field notes and from today's machines, through the real libudev."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.machines import raid_cards
from tests.fixtures.machines_odd import odd_devices
from tests.fixtures.machines_sas import sas_enclosure
from tests.fixtures.machines_workstation import nvme_sata_workstation
from tests.fixtures.umock import needs_umockdev
from tests.inventory.conftest import (
    controller,
    disk,
    inventory_json,
    slots_by_disk,
)


@needs_umockdev
@pytest.mark.parametrize("shared", [True, False])
def test_two_raid_cards_on_one_bus_or_two(shared: bool) -> None:
    """seeds/000: the 3ware cards in slots 1 and 3 share a PCI bus; in 1 and 6 they do not."""
    inventory = inventory_json(raid_cards(shared_bus=shared))
    cards = [c for c in inventory["controllers"] if c["driver"] == "3w-xxxx"]
    assert len(cards) == 2
    assert (cards[0]["bus"] == cards[1]["bus"]) is shared
    assert [d["name"] for c in cards for d in (s["disk"] for s in c["slots"])] == ["sdb", "sdc"]
    system = disk(inventory, "sda")
    assert system["system_disk"] and system["transport"] == "pata"
    assert {a["name"]: a["members"] for a in inventory["arrays"]} == {"md0": ["sdb", "sdc"]}


@pytest.fixture(scope="module")
def workstation() -> dict[str, Any]:
    return inventory_json(nvme_sata_workstation())


@needs_umockdev
def test_workstation_ahci_ports_with_empty_ones(workstation: dict[str, Any]) -> None:
    ahci = controller(workstation, "0000:00:17.0")
    assert ahci["port_count"] == 6
    assert [s["port"] for s in ahci["slots"]] == [f"port {i}" for i in range(6)]
    used = {s["slot"]: s["disk"]["name"] for s in ahci["slots"] if s["disk"]}
    assert used == {0: "sda", 3: "sdb"}  # ID_PATH ata-1 and ata-4


@needs_umockdev
def test_workstation_nvme_system_disk_through_lvm(workstation: dict[str, Any]) -> None:
    nvme0 = disk(workstation, "nvme0n1")  # native multipath: found through nvme-subsys0
    assert slots_by_disk(workstation)["nvme0n1"][0] == "0000:01:00.0"
    assert any(r.startswith("/ on dm-0") for r in nvme0["system_reasons"])
    assert any(r.startswith("/boot/efi on nvme0n1p1") for r in nvme0["system_reasons"])
    assert nvme0["transport"] == "nvme" and nvme0["rotational"] is False
    assert controller(workstation, "0000:01:00.0")["link_mb_s"] == 3938  # PCIe 3.0 x4
    assert disk(workstation, "nvme1n1")["state"] == "free"
    names = [
        d["name"] for c in workstation["controllers"] for d in (s["disk"] for s in c["slots"]) if d
    ]
    assert "nvme0c0n1" not in names, "the hidden path device is not a second disk"
    lvm = {a["name"]: a for a in workstation["arrays"]}["dm-0"]
    assert lvm["level"] == "lvm" and lvm["members"] == ["nvme0n1p2"]


@needs_umockdev
def test_workstation_usb_and_virtual(workstation: dict[str, Any]) -> None:
    assert disk(workstation, "sdc")["transport"] == "usb"
    virtual = {d["name"]: d for d in workstation["virtual"]}
    assert virtual["loop0"]["size_bytes"] > 0
    assert virtual["zram0"]["swap"] is True


@needs_umockdev
def test_sas_enclosure_bays_and_direct_phys() -> None:
    inventory = inventory_json(sas_enclosure())
    hba = controller(inventory, "0000:03:00.0")
    bays = [s for s in hba["slots"] if s["enclosure"]]
    assert [b["enclosure"]["name"] for b in bays] == [f"Slot {n:02d}" for n in range(12)]
    assert {b["enclosure"]["name"] for b in bays if not b["disk"]} == {
        "Slot 03",
        "Slot 09",
        "Slot 10",
        "Slot 11",
    }
    assert all(b["enclosure"]["locate_path"] for b in bays)
    phys = {s["port"]: s for s in hba["slots"] if not s["enclosure"]}
    assert phys["phy 4"]["disk"]["name"] == "sdi"
    assert phys["phy 0"]["note"] == "cable to expander 0:0" and phys["phy 0"]["disk"] is None
    assert hba["link_mb_s"] == 7876  # PCIe 3.0 x8


@needs_umockdev
def test_odd_devices_show_unknowns_and_never_crash(tmp_path: Path) -> None:
    inventory = inventory_json(odd_devices())
    assert disk(inventory, "sda")["size_bytes"] is None
    assert disk(inventory, "sdb")["model"] is None and disk(inventory, "sdb")["serial"] is None
    assert disk(inventory, "sdc")["serial"]  # from the SCSI serial number page, no udev data
    asm = controller(inventory, "0000:03:00.0")
    assert asm["link_mb_s"] is None  # "Unknown" link speed
    platform = [c for c in inventory["controllers"] if c["root"] is None]
    assert {c["id"] for c in platform} == {"f8000000.sata", "fe340000.mmc"}
    assert disk(inventory, "mmcblk0")["transport"] == "mmc"
    empty = tmp_path / "empty.txt"  # a regular file: /dev/null is refused unread
    empty.touch()
    text = subprocess.run(  # the human-readable form copes with the same unknowns
        [sys.executable, "-m", "stripewise", "inventory", "--from", str(empty)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert text.returncode == 2 and "no devices found" in text.stderr


def test_this_machine_live() -> None:
    """(d): whatever this machine has, the map must agree with /sys."""
    done = subprocess.run(
        [sys.executable, "-m", "stripewise", "inventory", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    inventory = json.loads(done.stdout)
    on_map = {
        d["name"]: d for c in inventory["controllers"] for s in c["slots"] if (d := s["disk"])
    }
    listed = (
        set(on_map)
        | {d["name"] for d in inventory["virtual"]}
        | {a["name"] for a in inventory["arrays"]}
    )
    for entry in Path("/sys/block").iterdir():
        if entry.name.startswith(("sr", "fd")):
            continue
        assert entry.name in listed, entry.name
        if entry.name in on_map:
            sectors = int((entry / "size").read_text())
            assert on_map[entry.name]["size_bytes"] == sectors * 512
    root_device = os.stat("/").st_dev
    root_name = Path(f"/sys/dev/block/{os.major(root_device)}:{os.minor(root_device)}").resolve()
    holders = [d for d in on_map.values() if d["system_disk"]]
    if root_name.exists() and (root_name.name in on_map or root_name.parent.name in on_map):
        assert any(d["name"] in (root_name.name, root_name.parent.name) for d in holders)

"""Issue 27, points 5, 6 and 10 in `udevadm info --export-db` dumps of NVMe servers.

A DGX-class machine (eight multipathed U.2 namespaces behind PCIe switches, two classic M.2 boot
drives, md arrays whose members only udisks' keys name) and a storage server (ten U.2 drives,
one dual-ported onto two PCI functions, an empty SAS HBA and an empty RAID card): see the
README beside the dumps.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from stripewise.inventory import load_inventory
from stripewise.model.topology import Inventory
from tests.inventory.conftest import controller, disk, slots_by_disk
from tests.test_cli import run_cli

DUMPS = Path(__file__).parent.parent / "fixtures" / "udev"
DGX = DUMPS / "dgx_nvme_raid.txt"
SERVER = DUMPS / "nvme_storage_server.txt"

# DGX data drives: PCI function -> namespace (controller numbers follow probe order, not PCI
# order), the two boot drives last.
DGX_NAMESPACES = {
    "0000:08:00.0": "nvme1n1",
    "0000:09:00.0": "nvme0n1",
    "0000:48:00.0": "nvme5n1",
    "0000:49:00.0": "nvme4n1",
    "0000:88:00.0": "nvme6n1",
    "0000:89:00.0": "nvme7n1",
    "0000:c8:00.0": "nvme9n1",
    "0000:c9:00.0": "nvme8n1",
    "0000:22:00.0": "nvme2n1",
    "0000:23:00.0": "nvme3n1",
}
RAID_MEMBERS = ["nvme0n1", "nvme1n1", "nvme4n1", "nvme5n1", "nvme6n1", "nvme7n1", "nvme8n1"]
RAID_MEMBERS.append("nvme9n1")
SERVER_NAMESPACES = {
    "nvme0n1": "0000:01:00.0",
    "nvme1n1": "0000:02:00.0",
    "nvme3n1": "0000:03:00.0",
    "nvme2n1": "0000:04:00.0",
    "nvme4n1": "0000:41:00.0",
    "nvme5n1": "0000:42:00.0",
    "nvme6n1": "0000:43:00.0",
    "nvme7n1": "0000:44:00.0",
    "nvme8n1": "0000:81:00.0",
    "nvme10n1": "0000:83:00.0",
}


def read(text: str, tmp_path: Path, name: str = "dump.txt") -> Inventory:
    path = tmp_path / name
    path.write_text(text)
    return load_inventory(path)


def records(text: str) -> list[str]:
    return [r for r in text.split("\n\n") if r.strip()]


def placed(inventory: Inventory) -> dict[str, str]:
    """Namespace -> the PCI function it is drawn under."""
    return {d.name: c.id for c in inventory.controllers for d in c.disks}


# --- point 5: namespaces of the native multipath layout are on their PCI controller ------------


def test_dgx_namespaces_sit_on_their_pci_functions_behind_the_switches() -> None:
    inventory = load_inventory(DGX)
    assert placed(inventory) == {name: pci for pci, name in DGX_NAMESPACES.items()}
    assert not [d.name for d in inventory.virtual if d.name.startswith("nvme")]
    nvme0 = next(c for c in inventory.controllers if c.id == "0000:09:00.0")
    assert (nvme0.root, nvme0.bridges) == (
        "pci0000:00",
        ("0000:00:01.1", "0000:01:00.0", "0000:02:08.0"),
    )
    assert [s.port for s in nvme0.slots] == ["namespace 1"]
    shown = nvme0.disks[0]
    assert (shown.serial, shown.model, shown.transport.value) == (
        "S4YPNE0R700102",
        "SAMSUNG MZWLJ3T8HBLS-00007",
        "nvme",
    )
    assert shown.by_path == ("disk/by-path/pci-0000:09:00.0-nvme-1",)
    assert shown.paths == (), "one controller: a plain disk, no list of paths"


def test_storage_server_dual_ported_drive_is_one_disk_with_a_path_per_function() -> None:
    inventory = load_inventory(SERVER)
    assert placed(inventory) == {**SERVER_NAMESPACES, "sda": "0000:05:00.2"}
    cm6 = inventory.find_disk("nvme8n1")
    assert cm6 is not None and cm6.serial == "X0R0A0TXT1M8"
    assert [(p.name, p.controller, p.port) for p in cm6.paths] == [
        ("nvme8c8n1", "0000:81:00.0", "namespace 1"),
        ("nvme8c9n1", "0000:82:00.0", "namespace 1"),
    ]
    port_b = next(c for c in inventory.controllers if c.id == "0000:82:00.0")
    assert [(s.port, s.disk, s.path_of, s.note) for s in port_b.slots] == [
        ("namespace 1", None, "nvme8n1", "nvme8c9n1: path to nvme8n1")
    ]
    assert len(inventory.disks) == 11  # ten drives and the SATA system disk, each once


def test_without_the_path_disks_id_path_places_each_namespace(tmp_path: Path) -> None:
    """A dump cut by hand to the block devices that have a node: ID_PATH alone."""
    kept = [
        r for r in records(SERVER.read_text()) if not re.search(r"^M: nvme\d+c\d+n\d+$", r, re.M)
    ]
    inventory = read("\n\n".join(kept) + "\n", tmp_path)
    assert placed(inventory) == {**SERVER_NAMESPACES, "sda": "0000:05:00.2"}
    port_b = next(c for c in inventory.controllers if c.id == "0000:82:00.0")
    assert port_b.slots == (), "the second port is not named by ID_PATH: shown empty"


def test_before_systemd_252_the_path_disks_place_each_namespace(tmp_path: Path) -> None:
    """Older path_id gave a namespace under /devices/virtual/ no ID_PATH (nor a by-path link);
    its hidden path disks under the PCI function are what is left."""
    heads = "P: /devices/virtual/nvme-subsystem/"
    kept = [_without_id_path(r) if r.startswith(heads) else r for r in records(DGX.read_text())]
    assert not any("pci-0000" in r for r in kept if r.startswith(heads))
    assert any("ID_PATH=pci-0000:09:00.0-nvme-1" in r for r in kept)  # the path disk's
    inventory = read("\n\n".join(kept) + "\n", tmp_path)
    assert placed(inventory) == {name: pci for pci, name in DGX_NAMESPACES.items()}


def _without_id_path(record: str) -> str:
    lines = [
        re.sub(r" ?/dev/disk/by-path/\S+", "", line) if line.startswith("E: DEVLINKS=") else line
        for line in record.split("\n")
        if not line.startswith(("E: ID_PATH", "S: disk/by-path/"))
    ]
    return "\n".join(lines)


def test_the_json_form_of_export_db_places_the_same_namespaces(tmp_path: Path) -> None:
    objects = []
    for record in records(SERVER.read_text()):
        fields = dict(
            line[3:].partition("=")[::2] for line in record.split("\n") if line[:3] == "E: "
        )
        objects.append(json.dumps(fields))
    inventory = read("\n".join(objects) + "\n", tmp_path, "export.json")
    assert inventory.source == "udev-dump"
    assert placed(inventory) == placed(load_inventory(SERVER))
    assert [p.name for p in inventory.find_disk("nvme8n1").paths] == ["nvme8c8n1", "nvme8c9n1"]


# --- point 6: md members named only by udisks' keys -------------------------------------------


def test_md_members_listed_only_by_udisks_keys() -> None:
    inventory = load_inventory(DGX)
    arrays = {a.name: a for a in inventory.arrays}
    raid = arrays["md126"]
    assert (raid.level, raid.members, raid.member_disks) == (
        "raid0",
        tuple(RAID_MEMBERS),
        tuple(RAID_MEMBERS),
    )
    assert (raid.raid_devices, raid.label) == (8, "raid")
    boot = arrays["md0"]
    assert (boot.level, boot.members, boot.member_disks) == (
        "raid1",
        ("nvme2n1p2", "nvme3n1p2"),
        ("nvme2n1", "nvme3n1"),
    )
    for name in [*RAID_MEMBERS, "nvme2n1", "nvme3n1"]:
        assert inventory.find_disk(name).state.value == "array_member", name


def test_an_md_record_with_udisks_keys_alone_keeps_level_uuid_and_members(tmp_path: Path) -> None:
    """Where mdadm's own rule imported nothing: every MD_ property comes from udisks."""
    text = "\n".join(line for line in DGX.read_text().split("\n") if not line.startswith("E: MD_"))
    raid = {a.name: a for a in read(text, tmp_path).arrays}["md126"]
    assert (raid.level, raid.uuid, raid.raid_devices) == (
        "raid0",
        "7d3a1c52:9e4b0f61:8a2d5c7e:9b3f1a04",
        8,
    )
    assert raid.members == tuple(RAID_MEMBERS)


def test_blank_member_values_fall_back_to_the_names_in_the_keys(tmp_path: Path) -> None:
    text = re.sub(r"^(E: UDISKS_MD_DEVICE_\w+_DEV=).*$", r"\1", DGX.read_text(), flags=re.M)
    arrays = {a.name: a for a in read(text, tmp_path).arrays}
    assert arrays["md126"].members == tuple(RAID_MEMBERS)
    assert arrays["md0"].members == ("nvme2n1p2", "nvme3n1p2")


@pytest.mark.parametrize(
    "properties, expected",
    [
        ({"MD_DEVICE_sda3_ROLE": "0", "MD_DEVICE_sda3_DEV": "/dev/sda3"}, ["sda3"]),  # mdadm 3
        ({"MD_DEVICE_ev_sda2_DEV": "/dev/sda2"}, ["sda2"]),
        ({"MD_DEVICE_dev_sdb1_DEV": "/dev/disk/by-id/ata-X-part1"}, ["sdb1"]),  # a link
        ({"UDISKS_MD_DEVICE_dev_nvme1n1_DEV": "/dev/nvme1n1"}, ["nvme1n1"]),
        ({"UDISKS_MD_DEVICE_dev_nvme1n1_ROLE": "0"}, ["nvme1n1"]),  # the role line alone
        ({"UDISKS_MD_DEVICE_dev_nvme9n1_ROLE": "spare"}, []),  # a name the source does not know
        (
            {"MD_DEVICES": "2", "UDISKS_MD_DEVICES": "2", "MD_DEVICE_": "x", "MD_DEVICE__DEV": ""},
            [],
        ),
        ({"UDISKS_MD_MEMBER_ROLE": "0", "MD_DEV_UUID": "a:b:c:d"}, []),  # a member's own keys
    ],
)
def test_member_keys_of_every_spelling(
    properties: dict[str, str], expected: list[str], tmp_path: Path
) -> None:
    ahci = "/devices/pci0000:00/0000:00:17.0"
    disks = [
        (f"{ahci}/ata1/host0/target0:0:0/0:0:0:0/block/sda", "disk", []),
        (f"{ahci}/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda3", "partition", []),
        (f"{ahci}/ata2/host1/target1:0:0/1:0:0:0/block/sdb", "disk", []),
        (f"{ahci}/ata2/host1/target1:0:0/1:0:0:0/block/sdb/sdb1", "partition", ["ata-X-part1"]),
        ("/devices/pci0000:00/0000:00:1d.0/0000:01:00.0/nvme/nvme1/nvme1n1", "disk", []),
    ]
    text = "".join(
        f"P: {path}\n"
        + "".join(f"S: disk/by-id/{link}\n" for link in links)
        + f"E: SUBSYSTEM=block\nE: DEVTYPE={kind}\n\n"
        for path, kind, links in disks
    )
    md = "".join(f"E: {key}={value}\n" for key, value in properties.items())
    text += f"P: /devices/virtual/block/md126\nE: SUBSYSTEM=block\nE: DEVTYPE=disk\n{md}\n"
    arrays = {a.name: a for a in read(text, tmp_path).arrays}
    assert list(arrays["md126"].members) == expected


# --- point 10: storage controllers with nothing attached --------------------------------------


def inventory_json(path: Path) -> dict[str, Any]:
    done = run_cli("inventory", "--from", str(path), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_empty_hba_and_raid_card_are_controllers_with_no_disks() -> None:
    inventory = inventory_json(SERVER)
    hba = controller(inventory, "0000:c1:00.0")
    assert (hba["driver"], hba["kind"], hba["port_count"]) == ("mpt3sas", "mpt3sas", 8)
    assert hba["model"] == "SAS3008 PCI-Express Fusion-MPT SAS-3 (AOC-S3008L-L8e)"
    assert [(s["port"], s["disk"], s["path_of"]) for s in hba["slots"]] == [
        (f"phy {n}", None, None) for n in range(8)
    ]
    assert hba["bus"] == "pci0000:c0 / 0000:c0:03.1"
    raid = controller(inventory, "0000:c2:00.0")
    assert (raid["driver"], raid["model"], raid["slots"]) == (
        "megaraid_sas",
        "MegaRAID Tri-Mode SAS3508",
        [],
    )
    assert slots_by_disk(inventory)["sda"] == ("0000:05:00.2", 0, "port 0")
    assert disk(inventory, "nvme8n1")["paths"][1]["controller"] == "0000:82:00.0"


def test_text_output_says_no_disks_attached(tmp_path: Path) -> None:
    done = run_cli("inventory", "--from", str(SERVER))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "unknown host: 11 disks on 14 controllers (from udev-dump)"
    raid = next(i for i, line in enumerate(lines) if line.startswith("  0000:c2:00.0  MegaRAID"))
    assert lines[raid + 1] == "    (no disks attached)"
    hba = next(i for i, line in enumerate(lines) if line.startswith("  0000:c1:00.0  SAS3008"))
    assert "(mpt3sas, 8 ports)" in lines[hba] and lines[hba + 1].split() == ["phy", "0", "(empty)"]


def test_empty_controllers_survive_a_snapshot(tmp_path: Path) -> None:
    saved = tmp_path / "server.json"
    done = run_cli("inventory", "--from", str(SERVER), "--save", str(saved))
    assert done.returncode == 0, done.stderr
    again = load_inventory(saved)
    empty = {
        c.id: len(c.slots)
        for c in again.controllers
        if not c.disks and not any(s.path_of for s in c.slots)
    }
    assert empty == {"0000:c1:00.0": 8, "0000:c2:00.0": 0}


def test_only_storage_functions_with_a_driver_are_controllers(tmp_path: Path) -> None:
    """A storage function with no driver bound, or one bound to vfio-pci, and a NIC: not shown."""
    raid = next(
        r
        for r in records(SERVER.read_text())
        if r.startswith("P: /devices/pci0000:c0/0000:c0:03.2/0000:c2:00.0\n")
    )
    unbound = re.sub(r"^(V: .*|E: DRIVER=.*)\n", "", raid, flags=re.M).replace("c2:00.0", "c3:00.0")
    vfio = raid.replace("megaraid_sas", "vfio-pci").replace("c2:00.0", "c4:00.0")
    nic = raid.replace("PCI_CLASS=10400", "PCI_CLASS=20000").replace("c2:00.0", "c5:00.0")
    inventory = read(SERVER.read_text() + "\n\n".join([unbound, vfio, nic]) + "\n\n", tmp_path)
    ids = {c.id for c in inventory.controllers}
    assert "0000:c2:00.0" in ids and not ids & {"0000:c3:00.0", "0000:c4:00.0", "0000:c5:00.0"}

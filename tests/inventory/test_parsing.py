"""Pieces of the inventory that need no devices: link speeds, /proc parsing, file formats."""

from __future__ import annotations

import json

import pytest

from stripewise.inventory.snapshot import SnapshotError, dumps, loads
from stripewise.inventory.udevdump import DumpFormatError, DumpSource
from stripewise.model.topology import Link, pcie_link_mb_s
from stripewise.system.mounts import is_system_mountpoint, parse_mountinfo, parse_swaps
from stripewise.system.pci import parse_link


@pytest.mark.parametrize(
    "speed, width, mb_s",
    [
        (2.5, 1, 250),  # PCIe 1.0: 8b/10b
        (2.5, 4, 1000),
        (5.0, 8, 4000),  # PCIe 2.0
        (8.0, 4, 3938),  # PCIe 3.0: 128b/130b
        (8.0, 8, 7876),
        (16.0, 4, 7876),  # PCIe 4.0
        (32.0, 16, 63015),
    ],
)
def test_pcie_payload_bandwidth(speed: float, width: int, mb_s: int) -> None:
    assert pcie_link_mb_s(speed, width) == mb_s


@pytest.mark.parametrize(
    "speed, width, expected",
    [
        ("8.0 GT/s PCIe", "4", Link(8.0, 4)),
        ("2.5 GT/s", "1", Link(2.5, 1)),
        ("Unknown", "4", None),  # link down or not PCIe
        ("8.0 GT/s PCIe", "0", None),
        ("16.0 GT/s PCIe", "x4", None),
        (None, None, None),  # conventional PCI / PCI-X: no attributes at all
    ],
)
def test_link_attributes(speed: str | None, width: str | None, expected: Link | None) -> None:
    assert parse_link(speed, width) == expected


MOUNTINFO = r"""
27 1 8:130 / / rw,relatime shared:1 - ext3 /dev/sdi2 rw
28 27 8:129 / /boot rw - ext2 /dev/sdi1 rw
29 27 9:5 / /data\040set rw - xfs /dev/md5 rw
30 27 0:44 /@home /home rw - btrfs /dev/nvme0n1p3 rw
31 27 0:25 / /tmp rw - tmpfs tmpfs rw
""".strip().splitlines()


def test_mountinfo_by_number_name_and_escapes() -> None:
    table = parse_mountinfo(MOUNTINFO)
    assert table.mountpoints("sdi2", "8:130") == ("/",)
    assert table.mountpoints("md5", "9:5") == ("/data set",)
    # btrfs subvolumes have anonymous 0:N numbers: matched by the source device instead
    assert table.mountpoints("nvme0n1p3", "0:44") == ("/home",)
    assert table.fs_type("sdi2", "8:130") == "ext3"
    assert table.mountpoints("tmpfs", None) == ()
    assert table.mountpoints("sda1", "8:1") == ()


def test_swaps_only_active_partitions() -> None:
    table = parse_mountinfo([])
    parse_swaps(
        [
            "Filename\tType\tSize\tUsed\tPriority",
            "/dev/sdi3  partition  2097148  0  -2",
            "/swapfile  file  1048572  0  -3",
        ],
        table,
    )
    assert table.is_swap("sdi3") and not table.is_swap("swapfile")


@pytest.mark.parametrize(
    "mountpoint, system",
    [
        ("/", True),
        ("/boot", True),
        ("/boot/efi", True),
        ("/usr", True),
        ("/srv", False),
        ("/usr2", False),
        ("/bootstrap", False),
    ],
)
def test_system_mountpoints(mountpoint: str, system: bool) -> None:
    assert is_system_mountpoint(mountpoint) is system


def _snapshot(**disk: object) -> str:
    base = {"name": "sda", "size_bytes": 1000}
    return json.dumps(
        {
            "format": "stripewise-inventory",
            "version": 1,
            "controllers": [{"id": "c0", "slots": [{"slot": 0, "disk": base | disk}]}],
        }
    )


@pytest.mark.parametrize(
    "text, message",
    [
        (_snapshot(size_bytes="big"), "controllers[0].slots[0].disk.size_bytes: expected int"),
        (_snapshot(size_bytes=-5), "controllers[0].slots[0].disk.size_bytes: -5 bytes is out of"),
        (_snapshot(size_bytes=10**30), "disk.size_bytes: 1.000e+30 bytes is out of range"),
        (_snapshot(size_bytes=10**400), "disk.size_bytes: 1.000e+400 bytes is out of range"),
        (_snapshot(by_id=["/dev/sdq"]), "disk.by_id[0]: '/dev/sdq' is not a by-id link"),
        (_snapshot(by_id=["disk/by-id/../../sdq"]), "is not a by-id link"),
        (_snapshot(by_path=["disk/by-id/wwn-1"]), "disk.by_path[0]: 'disk/by-id/wwn-1' is not"),
        (_snapshot(devnode="/dev/../etc/passwd"), "disk.devnode: '/dev/../etc/passwd' is not"),
        (_snapshot(name="../../etc/passwd"), "disk.name: '../../etc/passwd' is not a device"),
        (_snapshot(name=""), "controllers[0].slots[0].disk.name: '' is not a device name"),
        (
            '{"format": "stripewise-inventory", "version": 1, "controllers": '
            '[{"id": "c0", "slots": []}, {"id": "c0", "slots": []}]}',
            "controllers: 'c0' listed twice",
        ),
        (
            '{"format": "stripewise-inventory", "version": 1, "controllers": '
            '[{"id": "", "slots": []}, {"id": "", "slots": []}]}',
            "controllers: '' listed twice",
        ),
        (_snapshot(rotational="yes"), "controllers[0].slots[0].disk.rotational: expected bool"),
        (_snapshot(name=None), "controllers[0].slots[0].disk.name: expected str, got None"),
        (_snapshot(by_id=["ok", 3]), "controllers[0].slots[0].disk.by_id[1]: expected a string"),
        ('{"format": "other", "version": 1}', "format: expected 'stripewise-inventory'"),
        ('{"format": "stripewise-inventory", "version": 99}', "version: snapshot version 99"),
        (
            '{"format": "stripewise-inventory", "version": 1, "controllers": {}}',
            "controllers: expected list",
        ),
        ('{"format": "stripewise-inventory",\n "version": 1,\n "controllers": [', "x.json:3"),
    ],
)
def test_bad_snapshots_name_the_field(text: str, message: str) -> None:
    with pytest.raises(SnapshotError) as refused:
        loads(text, "x.json")
    assert message in str(refused.value)


def test_a_disks_diskseq_is_kept_and_a_snapshot_without_it_still_loads() -> None:
    """The kernel's number for what is in a device (a loop device attached again gets a new
    one): written with the disk, read back; snapshots written before have none."""
    inventory = loads(_snapshot(diskseq=36375), "x.json")
    assert inventory.disks[0].diskseq == 36375
    assert json.loads(dumps(inventory))["controllers"][0]["slots"][0]["disk"]["diskseq"] == 36375
    assert loads(_snapshot(), "x.json").disks[0].diskseq is None
    with pytest.raises(SnapshotError, match=r"disk\.diskseq: expected int"):
        loads(_snapshot(diskseq="9"), "x.json")


def test_unknown_transport_in_a_snapshot_is_shown_as_unknown() -> None:
    inventory = loads(_snapshot(transport="holographic"), "x.json")
    assert inventory.disks[0].transport.value == "unknown"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "E: SUBSYSTEM=block\n",  # a property outside any record
        "this is prose\nand more of it\n",
        "P: devices/x\nE: SUBSYSTEM=block\n",  # not a device path
        "[]\n",
    ],
)
def test_dumps_without_a_device_are_refused(text: str) -> None:
    """Odd lines are skipped (tests/inventory/test_udev_field_dumps.py); a file with no
    device at all is not a dump."""
    with pytest.raises(DumpFormatError) as refused:
        DumpSource(text, "dump.txt")
    assert "dump.txt: no devices found" in str(refused.value)

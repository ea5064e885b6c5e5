"""The mock machines, checked with real tools: umockdev-run, pyudev, plain /sys reads, udevadm.

One testbed process per machine (and style); its JSON report is shared by the tests.
"""

from __future__ import annotations

import functools
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.testbed_fixups import split_umockdev
from tests.fixtures.testbed_model import Style
from tests.fixtures.testbed_render import g_strescape
from tests.fixtures.testbeds import (
    ALL_MACHINES,
    SAS_BAYS,
    X4500_CONTROLLERS,
    X4500_SLOT_MAP,
    Machine,
    nvme_sata_workstation,
)
from tests.fixtures.umock import run_in_testbed, run_with_wrapper, umockdev_available

needs_umockdev = pytest.mark.skipif(not umockdev_available(), reason="umockdev not installed")
HERE = Path(__file__).parent


@functools.cache
def machine(name: str) -> Machine:
    return ALL_MACHINES[name]()


@functools.cache
def probe(name: str, style: Style = "live", fixups: bool = True) -> dict[str, Any]:
    result = run_in_testbed(
        machine(name),
        [sys.executable, "-m", "tests.testbeds_selftest.probe"],
        style=style,
        fixups=fixups,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def blocks(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["name"]: b for b in report["block"]}


def paragraphs(text: str) -> list[list[str]]:
    return [p.splitlines() for p in text.strip().split("\n\n")]


# -- every machine ----------------------------------------------------------------------------
@needs_umockdev
@pytest.mark.parametrize("name", sorted(ALL_MACHINES))
def test_pyudev_sees_exactly_the_described_block_devices(name: str) -> None:
    m, report = machine(name), probe(name)
    assert {b["sys_path"] for b in report["block"]} == {d.syspath for d in m.block_devices()}
    for dev in m.block_devices():
        seen = blocks(report)[dev.sysname]
        assert seen["props"] == dict(dev.all_props()), dev.devpath
        size = dev.attr("size")
        assert seen["size"] == (size.strip() if size is not None else None)
        if dev.devnode:
            # lookups by device number work for every node, NVMe included (see fixups)
            assert seen["by_devnum"] == dev.syspath
            assert seen["node_type"] == "block"


@needs_umockdev
@pytest.mark.parametrize("name", sorted(ALL_MACHINES))
def test_proc_files_come_from_the_machine(name: str) -> None:
    m, report = machine(name), probe(name)
    for proc_name, text in m.proc_files().items():
        assert report["proc"][proc_name] == text, proc_name


@needs_umockdev
@pytest.mark.parametrize("name", sorted(ALL_MACHINES))
def test_export_db_matches_the_testbed_and_real_udevadm(name: str) -> None:
    m = machine(name)
    ours = paragraphs(m.export_db())
    umock_block = [p[0] for p in paragraphs(m.umockdev()) if "E: SUBSYSTEM=block" in p]
    assert sorted(p[0] for p in ours if "U: block" in p) == sorted(umock_block)
    for para in ours:
        assert para[0].startswith("P: /devices/") and para[1].startswith("M: ")
        assert next(x for x in para if x.startswith("E: ")) == "E: DEVPATH=" + para[0][3:]
    if not shutil.which("udevadm"):
        pytest.skip("udevadm not installed")
    real = paragraphs(probe(name)["udevadm_export_db"])
    assert [p[0] for p in real] == [p[0] for p in ours]  # same devices, same order
    headers = {p[0]: [x for x in p if x[0] in "MRUTDNQV"] for p in ours}
    assert {p[0]: [x for x in p if x[0] in "MRUTDNQV"] for p in real} == headers


# -- Sun Fire X4500 ---------------------------------------------------------------------------
@needs_umockdev
def test_x4500_disks_sit_on_the_slot_map_controllers_and_ports() -> None:
    report = blocks(probe("sun_x4500"))
    disks = {n: b for n, b in report.items() if n.startswith("sd") and b["devtype"] == "disk"}
    assert len(disks) == 48
    assert X4500_SLOT_MAP["sda"] == (1, 0) and X4500_SLOT_MAP["sdi"] == (3, 0)
    for name, (ctrl, port) in X4500_SLOT_MAP.items():
        disk = disks[name]
        print_id = ctrl * 8 + port + 1
        assert disk["pci"] == X4500_CONTROLLERS[ctrl]
        assert disk["pci_link"] is None  # PCI-X: no link attributes
        assert disk["host"] == f"host{print_id - 1}"
        assert disk["host_parent"] == [f"ata{print_id}", "ata_port"]
        assert disk["port_no"] == f"{port + 1}\n"
        assert disk["props"]["ID_PATH"] == f"pci-{X4500_CONTROLLERS[ctrl]}-ata-{port + 1}.0"
        assert disk["scheduler"] == "none [mq-deadline] kyber bfq "
    assert disks["sdi"]["props"]["ID_PART_TABLE_TYPE"] == "dos"
    sizes = {d["size"] for d in disks.values()}
    assert sizes == {"976773168", "1465149168"}


@needs_umockdev
def test_x4500_arrays_system_disk_and_plain_sysfs_reads() -> None:
    report = probe("sun_x4500")
    by_name = blocks(report)
    for member in ("sdm1", "sdp1", "sds1", "sdv1"):
        assert by_name[member]["holders"] == ["md1"]
        assert by_name[member]["props"]["ID_FS_TYPE"] == "linux_raid_member"
    assert by_name["md2"]["holders"] == ["md5"] and by_name["md3"]["holders"] == ["md5"]
    assert by_name["md5"]["props"]["MD_LEVEL"] == "raid0"
    assert by_name["md4"]["props"]["MD_DEVICES"] == "8"
    mountinfo = report["proc"]["self/mountinfo"]
    assert " 8:129 / / " in mountinfo and "/dev/sdi1" in mountinfo  # sdi1 is 8:129
    assert report["proc"]["swaps"].splitlines()[1].startswith("/dev/sdi2 ")
    assert report["sys_block"]["sdav"] == ["1465149168\n", "none [mq-deadline] kyber bfq \n", None]
    assert report["sys_block"]["md5"][1] == "none\n"
    assert len(report["ata_ports"]) == 48


# -- workstation ------------------------------------------------------------------------------
@needs_umockdev
def test_workstation_nvme_layouts_ahci_ports_usb_and_virtual_devices() -> None:
    report = probe("nvme_sata_workstation")
    by_name = blocks(report)
    head = by_name["nvme0n1"]
    assert head["sys_path"] == "/sys/devices/virtual/nvme-subsystem/nvme-subsys0/nvme0n1"
    assert head["pci"] is None  # the head disk is not below its PCI function
    assert head["props"]["ID_PATH"] == "pci-0000:01:00.0-nvme-1"
    assert head["scheduler"] == "none"
    hidden = by_name["nvme0c0n1"]
    assert hidden["node"] is None and hidden["parents"][0][0].endswith("/nvme/nvme0")
    classic = by_name["nvme1n1"]
    assert classic["pci"] == "0000:02:00.0" and classic["pci_link"] == "8.0 GT/s PCIe"
    assert classic["scheduler"] == "[none] mq-deadline kyber bfq "
    assert by_name["nvme0n1p2"]["holders"] == ["dm-0"]
    assert by_name["dm-0"]["props"]["DM_LV_NAME"] == "root"
    ports = {p["name"]: p for p in report["ata_ports"]}
    assert sorted(ports) == [f"ata{n}" for n in range(1, 7)]
    used = sorted(b["ata_port"] for b in by_name.values() if "ata_port" in b)
    assert used == ["ata1", "ata4", "ata4"]  # sda; sdb and its partition sdb1
    assert by_name["sdc"]["props"]["ID_BUS"] == "usb"
    assert by_name["sdc"]["props"]["ID_USB_DRIVER"] == "usb-storage"
    assert "/dev/zram0 " in report["proc"]["swaps"]
    assert " 253:0 / / " in report["proc"]["self/mountinfo"]


@needs_umockdev
def test_without_fixups_nvme_namespaces_cannot_be_found_by_device_number() -> None:
    by_name = blocks(probe("nvme_sata_workstation", fixups=False))
    assert by_name["nvme1n1"]["by_devnum"].startswith("error")
    assert by_name["sda"]["by_devnum"] == by_name["sda"]["sys_path"]


@needs_umockdev
def test_hotplugged_sata_disk_is_seen_by_a_netlink_monitor(tmp_path: Path) -> None:
    base = nvme_sata_workstation()
    plugged = nvme_sata_workstation(hotplug_port=2)
    (tmp_path / "base.umockdev").write_text(base.umockdev())
    (tmp_path / "disk.umockdev").write_text(plugged.fragment_over(base))
    result = run_with_wrapper(
        HERE / "hotplug_scenario.py",
        str(tmp_path / "base.umockdev"),
        str(tmp_path / "disk.umockdev"),
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert "sdd" not in report["before"] and "sdd" in report["after"]
    disk = plugged.device("sdd")
    assert report["block_by_devnum"] == [disk.syspath, disk.syspath + "/sdd1"]
    assert report["events"] == [
        {
            "action": "add",
            "sys_path": disk.syspath,
            "devname": "/dev/sdd",
            "id_path": "pci-0000:00:17.0-ata-2.0",
            "size": "3907029168",
        },
        {
            "action": "add",
            "sys_path": disk.syspath + "/sdd1",
            "devname": "/dev/sdd1",
            "id_path": None,
            "size": "2048",
        },
    ]
    assert "sdd1" in report["after"]


# -- SAS enclosure ----------------------------------------------------------------------------
@needs_umockdev
def test_sas_enclosure_bays_link_to_their_disks() -> None:
    report = probe("sas_enclosure")
    (enclosure,) = report["enclosures"]
    bays = enclosure["bays"]
    assert sorted(bays) == [f"Slot {n:02d}" for n in range(12)]
    by_name = blocks(report)
    for number in range(12):
        bay = bays[f"Slot {number:02d}"]
        assert bay["slot"] == f"{number}\n" and bay["locate"] == "0\n"
        if number not in SAS_BAYS:
            assert bay["status"] == "not installed\n" and "device" not in bay
            continue
        assert bay["status"] == "OK\n" and bay["readlink"].startswith("../")
        (name,) = bay["block"]
        disk = by_name[name]
        assert disk["sys_path"].startswith(bay["device"] + "/block/")
        assert disk["props"]["ID_PATH"] == (
            f"pci-0000:03:00.0-sas-exp0x500304801f3b2a7f-phy{number}-lun-0"
        )
        expected_bus = "ata" if SAS_BAYS[number] == "sata" else "scsi"
        assert disk["props"]["ID_BUS"] == expected_bus
        assert disk["pci"] == "0000:03:00.0" and disk["pci_link"] == "8.0 GT/s PCIe"
    direct = by_name["sdi"]
    assert direct["props"]["ID_PATH"] == "pci-0000:03:00.0-sas-phy4-lun-0"
    assert "/host0/port-0:1/end_device-0:1/target0:0:9/" in direct["sys_path"]


# -- 3ware cards ------------------------------------------------------------------------------
@needs_umockdev
@pytest.mark.parametrize("shared", [True, False])
def test_raid_cards_share_a_bus_or_not(shared: bool) -> None:
    report = probe("raid_cards_shared" if shared else "raid_cards_split")
    by_name = blocks(report)
    cards = [by_name[n] for n in ("sdb", "sdc")]
    bridges = {c["parents"][4][0] for c in cards}  # sd, sdev, target, host, card, bridge
    assert all(c["pci_link"] is None for c in cards)
    assert all(c["props"]["ID_MODEL"] == "Logical_Disk_0" for c in cards)
    assert all("ID_SERIAL" not in c["props"] for c in cards)
    assert len(bridges) == (1 if shared else 2)
    assert by_name["md0"]["props"]["MD_LEVEL"] == "raid0"
    assert sorted(report["pci_slots"]) == (["1", "3"] if shared else ["1", "6"])
    assert by_name["sda"]["props"]["ID_PATH"] == "pci-0000:00:1f.1-ata-1.0"


# -- odd devices ------------------------------------------------------------------------------
@needs_umockdev
def test_odd_devices_are_as_described() -> None:
    report = probe("odd_devices")
    by_name = blocks(report)
    assert by_name["sda"]["size"] is None
    assert by_name["sda"]["pci_link"] == "Unknown" and by_name["sda"]["port_no"] == "1\n"
    assert {p["port_no"] for p in report["ata_ports"]} == {"1\n", "2a\n"}
    assert not {"ID_MODEL", "ID_SERIAL"} & set(by_name["sdb"]["props"])
    bare = {"DEVPATH", "SUBSYSTEM", "DEVNAME", "DEVTYPE", "MAJOR", "MINOR"}
    assert set(by_name["sdc"]["props"]) == bare and by_name["sdc"]["wwid"]
    assert set(by_name["nvme0n1"]["props"]) == bare
    assert by_name["nvme0n1"]["device_serial"] == "20284E801234\n"
    assert by_name["sdd"]["pci"] is None and by_name["sdd"]["props"]["ID_PATH"].startswith(
        "platform-f8000000.sata-ata-1"
    )
    assert by_name["mmcblk0"]["sys_path"].endswith("/mmc_host/mmc0/mmc0:0001/block/mmcblk0")
    assert by_name["mmcblk0"]["pci"] is None
    assert by_name["vda"]["props"]["ID_SERIAL"] == "vm-disk-0042"
    assert report["sys_block"]["vda"][2] == "vm-disk-0042"  # no newline, as virtio_blk has it
    assert by_name["vda"]["props"]["ID_PATH"] == "pci-0000:00:05.0"
    assert " / / " in report["proc"]["self/mountinfo"]  # overlay root, not the host's


@needs_umockdev
def test_proc_overrides_replace_and_drop_machine_files() -> None:
    code = "import os; print(open('/proc/swaps').read(), os.path.exists('/proc/mdstat'))"
    result = run_in_testbed(
        machine("sun_x4500"),
        [sys.executable, "-c", code],
        proc={"swaps": "custom swaps", "mdstat": None},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "custom swaps False\n"


# -- record style: what umockdev-record would have captured --------------------------------
@needs_umockdev
def test_record_style_has_no_subsystemless_devices() -> None:
    by_name = blocks(probe("sun_x4500", style="record"))
    assert by_name["sda"]["host_parent"] == ["0000:02:01.0", None]  # no ata1 device
    assert by_name["sda"]["port_no"] == "1\n"  # the ata_port class device is still there
    assert probe("sas_enclosure", style="record")["enclosures"][0]["bays"] == {}


# -- text format ------------------------------------------------------------------------------
def test_umockdev_text_is_in_umockdev_record_format() -> None:
    text = machine("nvme_sata_workstation").umockdev()
    for para in paragraphs(text):
        assert para[0].startswith("P: /devices/")
        kinds = [line[0] for line in para[1:]]
        order = "NSEAHL"
        firsts = [order.index(k) if k in "NSE" else 3 for k in kinds]
        assert firsts == sorted(firsts), para[0]
        props = [line for line in para if line.startswith("E: ")]
        assert props == sorted(props) and not any("DEVPATH=" in p for p in props)
        assert any(line.startswith("E: SUBSYSTEM=") for line in para)
    assert "A: size=976773168\\n" in text
    assert "A: queue/scheduler=none [mq-deadline] kyber bfq \\n" in text
    assert "".join(split_umockdev(text, 2000)).replace("\n\n", "\n") == text.replace("\n\n", "\n")


def test_g_strescape_matches_glib() -> None:
    assert g_strescape('a\\b"c\n\t\x01é') == 'a\\\\b\\"c\\n\\t\\001\\303\\251'

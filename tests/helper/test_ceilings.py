"""The physical ceiling under a target, from sysfs trees laid out as the kernel lays them out
(this machine has no SATA, SAS, NVMe or USB disk to read), and the memory figure for real."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from stripewise.helper.ceilings import (
    Layer,
    ceiling,
    lowest_layer,
    memory_mb_s,
    pcie_mb_s,
    sas_mb_s,
    sata_mb_s,
    usb_mb_s,
)

ROOT = "devices/pci0000:00"


class Sysfs:
    """A /sys in a temporary directory: attributes as files, /sys/class/block as links."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def path(self) -> str:
        return str(self.root)

    def attr(self, relative: str, value: str) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")

    def pcie(self, function: str, speed: str, width: int) -> None:
        self.attr(f"{function}/current_link_speed", f"{speed} PCIe")
        self.attr(f"{function}/current_link_width", str(width))

    def disk(self, devpath: str) -> str:
        name = devpath.rsplit("/", 1)[1]
        (self.root / devpath).mkdir(parents=True, exist_ok=True)
        link = self.root / "class" / "block" / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(self.root / devpath)
        return name


@pytest.fixture
def sysfs(tmp_path: Path) -> Sysfs:
    return Sysfs(tmp_path / "sys")


def test_line_rates_are_payload_after_encoding() -> None:
    assert sata_mb_s("6.0 Gbps") == 600 and sata_mb_s("1.5 Gbps") == 150
    assert sata_mb_s("<unknown>") is None and sata_mb_s(None) is None
    assert sas_mb_s("12.0 Gbit") == 1200 and sas_mb_s("3.0 Gbit") == 300
    assert sas_mb_s("22.5 Gbit") == pytest.approx(2400)  # SAS-4: 128b/150b
    assert sas_mb_s("Unknown") is None and sas_mb_s("Phy disabled") is None
    assert usb_mb_s("480") == 60 and usb_mb_s("5000") == 500
    assert usb_mb_s("10000") == pytest.approx(1212.1, abs=0.1)


def test_two_sata_disks_are_capped_by_their_controllers_pcie_link(sysfs: Sysfs) -> None:
    ahci = f"{ROOT}/0000:00:1f.2"
    sysfs.pcie(ahci, "5.0 GT/s", 1)  # 500 MB/s for both disks together
    assert pcie_mb_s(f"{sysfs.path}/{ahci}") == 500
    names = []
    for port, speed in (("ata1", "6.0 Gbps"), ("ata2", "3.0 Gbps")):
        link = port.replace("ata", "link")
        sysfs.attr(f"{ahci}/{port}/{link}/ata_link/{link}/sata_spd", speed)
        number = port[3:]
        names.append(
            sysfs.disk(
                f"{ahci}/{port}/host{number}/target{number}:0:0/{number}:0:0:0/block/sd"
                + "ab"[int(number) - 1]
            )
        )
    both = ceiling(Layer(tuple(names), (), ()), None, sysfs.path)
    assert both is not None and both.mb_s == 500
    assert "PCIe link of 0000:00:1f.2" in both.what
    alone = ceiling(Layer(("sdb",), (), ()), None, sysfs.path)
    assert alone is not None and alone.mb_s == 300 and "sdb's SATA link" in alone.what


def test_sas_disks_behind_an_expander_share_its_wide_port(sysfs: Sysfs) -> None:
    hba = f"{ROOT}/0000:00:03.0/0000:03:00.0"
    sysfs.pcie(hba, "8.0 GT/s", 8)  # 7,876 MB/s
    wide = f"{hba}/host0/port-0:0"
    for phy in range(4):  # a x4 wide port at 6 Gbit/s: 2,400 MB/s to the expander
        sysfs.attr(f"{wide}/phy-0:{phy}/sas_phy/phy-0:{phy}/negotiated_linkrate", "6.0 Gbit")
    names = []
    for slot in range(6):  # six disks at 6 Gbit/s: 3,600 MB/s if nothing capped them
        port = f"{wide}/expander-0:0/port-0:0:{slot}"
        phy = f"phy-0:0:{slot + 4}"
        sysfs.attr(f"{port}/{phy}/sas_phy/{phy}/negotiated_linkrate", "6.0 Gbit")
        end = f"{port}/end_device-0:0:{slot}/target0:0:{slot}/0:0:{slot}:0/block/sd{'cdefgh'[slot]}"
        names.append(sysfs.disk(end))
    found = ceiling(Layer(tuple(names), (), ()), None, sysfs.path)
    assert found is not None and found.mb_s == pytest.approx(2400)
    assert "SAS port-0:0" in found.what
    one = ceiling(Layer(("sdc",), (), ()), None, sysfs.path)
    assert one is not None and one.mb_s == 600 and "sdc's SAS link" in one.what


def test_an_nvme_drive_is_its_functions_link(sysfs: Sysfs) -> None:
    bridge, drive = f"{ROOT}/0000:00:01.1", f"{ROOT}/0000:00:01.1/0000:01:00.0"
    sysfs.pcie(bridge, "16.0 GT/s", 4)
    sysfs.pcie(drive, "8.0 GT/s", 4)  # trained below what the slot offers: 3,938 MB/s
    name = sysfs.disk(f"{drive}/nvme/nvme0/nvme0n1")
    found = ceiling(Layer((name,), (), ()), None, sysfs.path)
    assert found is not None and found.mb_s == 3938
    assert "nvme0n1's PCIe link" in found.what


def test_a_multipath_nvme_namespace_is_physical_and_sums_its_controllers(sysfs: Sysfs) -> None:
    """Native multipath: the namespace lives under /sys/devices/virtual/nvme-subsystem, with
    one controller per path; it is no virtual device without a link to read."""
    functions = [f"{ROOT}/0000:00:01.1/0000:01:00.0", f"{ROOT}/0000:00:01.2/0000:02:00.0"]
    subsystem = "devices/virtual/nvme-subsystem/nvme-subsys0"
    for number, function in enumerate(functions):
        sysfs.pcie(function, "8.0 GT/s", 4)
        (sysfs.root / subsystem / f"nvme{number}").mkdir(parents=True)
        (sysfs.root / subsystem / f"nvme{number}" / "device").symlink_to(sysfs.root / function)
    name = sysfs.disk(f"{subsystem}/nvme0n1")
    layer = lowest_layer((name,), "xfs", sysfs.path)
    assert layer.disks == (name,) and layer.unknown == ()
    found = ceiling(layer, None, sysfs.path)
    assert found is not None and found.mb_s == 2 * 3938


def test_a_usb_disk_is_its_usb_link(sysfs: Sysfs) -> None:
    device = f"{ROOT}/0000:00:14.0/usb2/2-1"
    sysfs.attr(f"{device}/speed", "5000")
    name = sysfs.disk(f"{device}/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdi")
    found = ceiling(Layer((name,), (), ()), None, sysfs.path)
    assert found is not None and found.mb_s == 500


def test_no_ceiling_where_a_link_says_nothing(sysfs: Sysfs) -> None:
    """virtio, or a SATA disk whose link speed is unknown: nothing to bound, nothing flagged."""
    vda = sysfs.disk(f"{ROOT}/0000:00:02.0/virtio1/block/vda")
    assert ceiling(Layer((vda,), (), ()), None, sysfs.path) is None
    ahci = f"{ROOT}/0000:00:1f.2"
    sysfs.attr(f"{ahci}/ata3/link3/ata_link/link3/sata_spd", "<unknown>")
    sdz = sysfs.disk(f"{ahci}/ata3/host2/target2:0:0/2:0:0:0/block/sdz")
    assert ceiling(Layer((sdz,), (), ()), None, sysfs.path) is None
    assert ceiling(Layer((), (), ()), None, sysfs.path) is None
    assert ceiling(Layer((), ("zram0",), ("nbd0",)), 9e3, sysfs.path) is None


def test_ram_devices_are_capped_by_memory_and_virtual_ones_unknown(sysfs: Sysfs) -> None:
    for name in ("zram0", "ram0", "nbd0"):
        sysfs.disk(f"devices/virtual/block/{name}")
    layer = lowest_layer(("zram0", "ram0", "nbd0"), None, sysfs.path)
    assert layer == Layer((), ("zram0", "ram0"), ("nbd0",))
    assert ceiling(layer, 20_000.0, sysfs.path) is None  # nbd0 could be anything
    ram = ceiling(lowest_layer(("zram0",), None, sysfs.path), 20_000.0, sysfs.path)
    assert ram is not None and ram.mb_s == 20_000 and ram.what.startswith("memory")
    tmpfs = lowest_layer((), "tmpfs", sysfs.path)
    assert tmpfs.ram == ("tmpfs",) and ceiling(tmpfs, 1.0, sysfs.path) is not None
    assert ceiling(tmpfs, None, sysfs.path) is None


def test_the_memory_figure_is_measured() -> None:
    figure = memory_mb_s()
    assert figure is not None and math.isfinite(figure) and figure > 100  # MB/s

"""The shipped catalog loads, holds the drives the notes measured, and a bad entry is caught."""

from __future__ import annotations

import pytest

from stripewise.model.topology import pcie_link_mb_s
from stripewise.planner.catalog import CatalogDisk, CatalogError, load_catalog, loads_catalog
from stripewise.resources import resource

DISK = """
[[disk]]
id = "d1"
vendor = "V"
model = "M 1 TB"
matches = ["M1TB"]
capacity_gb = 1000
rpm = 7200
outer_mb_s = 200
inner_mb_s = 100
random_iops = 80
price = 50
year = 2020
interface = "sata-6g"
"""
CONTROLLER = """
[[controller]]
id = "c1"
vendor = "V"
model = "HBA"
ports = 8
interface = "pcie"
pcie_gen = 3
lanes = 8
price = 100
year = 2015
"""


def test_shipped_catalog_loads_with_unique_ids() -> None:
    catalog = load_catalog()
    assert len(catalog.disks) >= 15
    assert len(catalog.controllers) >= 5
    assert len({d.id for d in catalog.disks}) == len(catalog.disks)
    assert len({c.id for c in catalog.controllers}) == len(catalog.controllers)


def test_shipped_files_document_their_units() -> None:
    for name in ("disks.toml", "controllers.toml"):
        head = resource("catalog", name).read_text(encoding="utf-8")[:1500]
        assert "MB/s" in head and "US dollars" in head, name


@pytest.mark.parametrize(
    ("entry", "outer", "inner", "write"),
    [
        ("wd-caviar-se-120gb", 49, 30, 49),  # the notes' own measurement
        ("hitachi-deskstar-7k500-500gb", 65, 35, 65),
        ("seagate-exos-x18-18tb", 270, 135, 270),
        ("wd-red-plus-4tb", 175, 85, 175),
        ("samsung-870-evo-1tb", 560, 560, 530),
        ("samsung-980-pro-1tb", 7000, 7000, 5000),
    ],
)
def test_disk_figures(entry: str, outer: float, inner: float, write: float) -> None:
    disk = load_catalog().disk(entry)
    assert disk is not None
    assert (disk.outer_mb_s, disk.inner_mb_s, disk.outer_write_mb_s) == (outer, inner, write)
    assert disk.inner_ratio == pytest.approx(inner / outer, abs=0.001)
    assert disk.price > 0 and 1990 < disk.year < 2030


def _disk(entry_id: str) -> CatalogDisk:
    disk = load_catalog().disk(entry_id)
    assert disk is not None, entry_id
    return disk


def _matched(model: str) -> str | None:
    disk = load_catalog().match_disk(model)
    return disk.id if disk else None


def test_ssds_have_no_rpm_and_disks_do() -> None:
    assert _disk("samsung-pm983-960gb").ssd
    assert _disk("micron-7450-pro-1920gb").ssd
    assert _disk("toshiba-mg08-16tb").rpm == 7200
    assert _disk("hitachi-ultrastar-a7k1000-750gb").capacity_bytes == 750 * 10**9


@pytest.mark.parametrize(
    ("entry", "mb_s"),
    [
        ("marvell-88sx6081", 1064),  # PCI-X 133 MHz x 64 bit
        ("3ware-7850", 266),  # PCI 33 MHz x 64 bit
        ("pci-sata-2port", 133),  # PCI 33 MHz x 32 bit
        ("lsi-9300-8i", pcie_link_mb_s(8.0, 8)),
        ("broadcom-9500-16i", pcie_link_mb_s(16.0, 8)),
        ("intel-pch-ahci", 3938),  # DMI 3.0 = PCIe 3.0 x4
    ],
)
def test_controller_ceilings(entry: str, mb_s: int) -> None:
    controller = load_catalog().controller(entry)
    assert controller is not None and controller.bus_mb_s == mb_s


def test_matching_real_models() -> None:
    catalog = load_catalog()
    assert _matched("HITACHI HDS7250SASUN500G") == "hitachi-deskstar-7k500-500gb"
    assert _matched("HITACHI_HUA721075KLA330") == "hitachi-ultrastar-a7k1000-750gb"
    assert _matched("Samsung SSD 980 PRO 1TB") == "samsung-980-pro-1tb"
    assert _matched("QEMU HARDDISK") is None
    assert catalog.match_disk(None) is None
    by_pci = catalog.match_controller("something else", "11AB:6081")
    assert by_pci is not None and by_pci.id == "marvell-88sx6081"
    by_model = catalog.match_controller("SAS3008 PCI-Express Fusion-MPT SAS-3")
    assert by_model is not None and by_model.id == "lsi-9300-8i"


def test_minimal_catalog_and_defaults() -> None:
    catalog = loads_catalog(DISK, CONTROLLER)
    disk = catalog.disks[0]
    assert disk.outer_write_mb_s == 200 and disk.inner_write_mb_s == 100
    assert catalog.controllers[0].bus_mb_s == pcie_link_mb_s(8.0, 8)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (("capacity_gb = 1000", 'capacity_gb = "1000"'), "capacity_gb"),
        (("capacity_gb = 1000", "capacity_gb = -1"), "capacity_gb"),
        (("outer_mb_s = 200", ""), "outer_mb_s"),
        (("inner_mb_s = 100", "inner_mb_s = 300"), "inner_mb_s"),
        (('interface = "sata-6g"', 'interface = "scsi-320"'), "interface"),
        (("rpm = 7200", "rpm = 12"), "rpm"),
        (("year = 2020", "year = 2020.5"), "year"),
        (('id = "d1"', 'id = "Has Spaces"'), "id"),
        (('matches = ["M1TB"]', 'matches = "M1TB"'), "matches"),
        (('vendor = "V"', 'vendor = ""'), "vendor"),
    ],
)
def test_bad_disk_entry_names_file_entry_and_key(change: tuple[str, str], key: str) -> None:
    bad = DISK.replace(*change)
    assert bad != DISK
    with pytest.raises(CatalogError) as caught:
        loads_catalog(bad, CONTROLLER)
    message = str(caught.value)
    assert message.startswith("disks.toml: [[disk]] ") and f" {key}: " in message, message


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (("lanes = 8", "lanes = 0"), "lanes"),
        (("pcie_gen = 3", "pcie_gen = 9"), "pcie_gen"),
        (("lanes = 8", "lanes = 8\nbus_mb_s = 1000"), "bus_mb_s"),
        (('interface = "pcie"', 'interface = "hub-link"'), "bus_mb_s"),
        (('interface = "pcie"', 'interface = "pci-x"'), "bus_mhz"),
        (("ports = 8", 'ports = 8\npci_ids = ["11AB-6081"]'), "pci_ids"),
    ],
)
def test_bad_controller_entry(change: tuple[str, str], key: str) -> None:
    with pytest.raises(CatalogError) as caught:
        loads_catalog(DISK, CONTROLLER.replace(*change))
    message = str(caught.value)
    assert message.startswith("controllers.toml: [[controller]] 'c1' ") and f" {key}: " in message


def test_duplicate_ids_and_syntax_errors() -> None:
    with pytest.raises(CatalogError, match=r"\[\[disk\]\] 'd1' id: used twice"):
        loads_catalog(DISK + DISK, CONTROLLER)
    with pytest.raises(CatalogError, match=r"^disks.toml: .*line 3"):
        loads_catalog("[[disk]]\nid = 'x'\nrpm = = 3\n", CONTROLLER)
    with pytest.raises(CatalogError, match=r"no \[\[controller\]\] entries"):
        loads_catalog(DISK, "")

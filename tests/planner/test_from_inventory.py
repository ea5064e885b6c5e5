"""Plans start from the real map: one plan controller per controller, one plan disk per disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripewise.inventory import load_inventory
from stripewise.model.plan import DEFAULT_INNER_RATIO
from stripewise.model.topology import Disk, Inventory, Partition
from stripewise.planner.catalog import load_catalog
from stripewise.planner.from_inventory import (
    catalog_controller,
    catalog_disk,
    plan_from_inventory,
    stable_path,
    state_reason,
)
from tests.fixtures.machines import X4500_CONTROLLERS, X4500_SLOT_MAP
from tests.fixtures.machines_workstation import nvme_sata_workstation


def test_x4500_controllers(x4500: Inventory) -> None:
    plan = plan_from_inventory(x4500, name="Thumper")
    assert plan.name == "Thumper"
    assert plan.host == x4500.host.key
    assert [c.id for c in plan.controllers] == list(X4500_CONTROLLERS)
    for controller, real in zip(plan.controllers, x4500.controllers, strict=True):
        assert controller.bus == real.bus
        assert controller.ports == 8
        assert controller.model == real.model
        assert controller.bus_mb_s == 1064  # PCI-X reports no link: the catalog's ceiling
        assert not controller.hypothetical and controller.price is None
    # two controllers share each of two PCI-X bridges
    buses = [c.bus for c in plan.controllers]
    assert len(set(buses)) == 4


def test_x4500_disks_in_slot_order_with_identity(x4500: Inventory) -> None:
    plan = plan_from_inventory(x4500)
    assert len(plan.disks) == 48
    for disk in plan.disks:
        controller_index, port = X4500_SLOT_MAP[disk.id]
        assert disk.controller == X4500_CONTROLLERS[controller_index]
        assert disk.slot == f"port {port}"
        real = x4500.find_disk(disk.id)
        assert real is not None
        assert (disk.serial, disk.wwn, disk.model) == (real.serial, real.wwn, real.model)
        assert disk.capacity_bytes == real.size_bytes
        assert disk.state == real.state.value
        ata = f"/dev/disk/by-id/ata-{real.model}_{real.serial}".replace(" ", "_")
        wwn = f"/dev/disk/by-id/wwn-{real.wwn}"
        assert disk.stable_path == (wwn if real.wwn else ata)  # the 750 GB disks have WWNs
        assert not disk.hypothetical


def test_x4500_speeds_from_the_catalog(x4500: Inventory) -> None:
    plan = plan_from_inventory(x4500)
    small = plan.disk("sda")
    big = next(d for d in plan.disks if d.model and "HUA721075" in d.model)
    assert small is not None
    assert (small.seq_read_mb_s, small.seq_write_mb_s) == (65, 65)
    assert small.inner_ratio == pytest.approx(35 / 65, abs=0.001)
    assert big.seq_read_mb_s == 85
    assert small.price is None  # real disks are already paid for
    assert {d.state for d in plan.disks} <= {"free", "unknown", "array_member", "system"}
    member = plan.disk("sdm")
    assert member is not None and member.state == "array_member"
    assert member.state_reason is not None and member.state_reason.startswith("member of md")
    assert plan.disk("sdas").state_reason is None  # type: ignore[union-attr]


def test_unknown_models_keep_unknown_speeds(x4500: Inventory) -> None:
    from stripewise.planner.catalog import Catalog

    plan = plan_from_inventory(x4500, catalog=Catalog())
    disk = plan.disks[0]
    assert disk.seq_read_mb_s is None and disk.seq_write_mb_s is None
    assert disk.inner_ratio == DEFAULT_INNER_RATIO
    assert plan.controllers[0].bus_mb_s is None  # unknown, not guessed


def test_workstation_nvme_keeps_its_link_and_wwn_path(tmp_path: Path) -> None:
    path = tmp_path / "ws.umockdev"
    path.write_text(nvme_sata_workstation().umockdev(), encoding="utf-8")
    plan = plan_from_inventory(load_inventory(path))
    nvme = plan.disk("nvme1n1")
    assert nvme is not None
    assert nvme.stable_path == "/dev/disk/by-id/nvme-Samsung_SSD_980_PRO_1TB_S5GXNF0R123456X"
    assert nvme.seq_read_mb_s == 7000 and nvme.seq_write_mb_s == 5000
    assert plan.controller(nvme.controller).bus_mb_s == 3938  # type: ignore[union-attr]
    sata = plan.disk("sdb")
    assert sata is not None and sata.stable_path == "/dev/disk/by-id/wwn-0x50014ee2b1234567"


@pytest.mark.parametrize(
    ("by_id", "by_path", "expected"),
    [
        (("disk/by-id/ata-X_1", "disk/by-id/wwn-0x5"), (), "/dev/disk/by-id/wwn-0x5"),
        (("disk/by-id/nvme-eui.1", "disk/by-id/ata-X_1"), (), "/dev/disk/by-id/nvme-eui.1"),
        (("disk/by-id/usb-Stick_1-0:0",), ("disk/by-path/p",), "/dev/disk/by-id/usb-Stick_1-0:0"),
        (("disk/by-id/wwn-0x5-part1",), ("disk/by-path/pci-1",), "/dev/disk/by-path/pci-1"),
        ((), (), None),
        (("/dev/disk/by-id/scsi-35000",), (), "/dev/disk/by-id/scsi-35000"),
    ],
)
def test_stable_path_preference(
    by_id: tuple[str, ...], by_path: tuple[str, ...], expected: str | None
) -> None:
    assert stable_path(Disk(name="sdx", by_id=by_id, by_path=by_path)) == expected


def test_catalog_hardware_is_hypothetical_and_priced() -> None:
    catalog = load_catalog()
    hba = catalog_controller(catalog.controller("lsi-9300-8i"), "hba1")  # type: ignore[arg-type]
    exos = catalog.disk("seagate-exos-x18-18tb")
    assert exos is not None
    disk = catalog_disk(exos, "hba1", "d1")
    assert hba.hypothetical and hba.price == 250 and hba.ports == 8 and hba.bus is None
    assert hba.bus_mb_s == 7876
    assert disk.hypothetical and disk.controller == "hba1" and disk.id == "d1"
    assert disk.capacity_bytes == 18 * 10**12
    assert (disk.seq_read_mb_s, disk.inner_ratio, disk.price) == (270, 0.5, 300)
    assert disk.usable and disk.serial is None and disk.stable_path is None


@pytest.mark.parametrize(
    ("disk", "reason"),
    [
        (Disk(name="sda", system_reasons=("/ on sda2", "swap on sda3")), "/ on sda2; swap on sda3"),
        (Disk(name="sdb", holders=("md4",)), "member of md4"),
        (Disk(name="sdc", partitions=(Partition("sdc1", holders=("dm-0",)),)), "held by dm-0"),
        (
            Disk(name="sdd", partitions=(Partition("sdd1", mountpoints=("/home",)),)),
            "mounted at /home",
        ),
        (Disk(name="sde", swap=True), "swap"),
        (Disk(name="sdf"), None),
    ],
)
def test_state_reason_in_the_inventorys_words(disk: Disk, reason: str | None) -> None:
    assert state_reason(disk) == reason

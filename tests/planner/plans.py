"""Small plans for tests: disks spread round-robin over a few controllers."""

from __future__ import annotations

from stripewise.model.plan import (
    Filesystem,
    Plan,
    PlanController,
    PlanDisk,
    PlannedArray,
    RaidLevel,
)

TB = 10**12


def controllers(count: int = 3) -> tuple[PlanController, ...]:
    return tuple(
        PlanController(
            id=f"0000:0{i + 1}:00.0",
            model="SAS3008 PCI-Express Fusion-MPT SAS-3",
            bus=f"pci0000:00 / 0000:00:0{i + 1}.0",
            bus_mb_s=7876.0,
            ports=8,
        )
        for i in range(count)
    )


def real_disks(count: int, on: tuple[PlanController, ...]) -> tuple[PlanDisk, ...]:
    """Free real disks sdb, sdc, ... with serials and WWN by-id paths."""
    out = []
    for i in range(count):
        name = "sd" + "bcdefghijklmnopqrstuvwxyz"[i]
        wwn = f"0x5000c500a1b2{i:04x}"
        out.append(
            PlanDisk(
                id=name,
                controller=on[i % len(on)].id,
                capacity_bytes=4 * TB,
                seq_read_mb_s=226.0,
                seq_write_mb_s=226.0,
                inner_ratio=0.49,
                model="ST4000NM0025",
                serial=f"ZC1{i:05d}",
                wwn=wwn,
                stable_path=f"/dev/disk/by-id/wwn-{wwn}",
                slot=f"Slot {i:02d}",
                state="free",
            )
        )
    return tuple(out)


def new_disks(count: int, on: tuple[PlanController, ...]) -> tuple[PlanDisk, ...]:
    """Disks to buy: Exos X18 from the catalog."""
    return tuple(
        PlanDisk(
            id=f"d{i + 1}",
            controller=on[i % len(on)].id,
            capacity_bytes=18 * TB,
            seq_read_mb_s=270.0,
            seq_write_mb_s=270.0,
            inner_ratio=0.5,
            price=300.0,
            model="Seagate Exos X18 ST18000NM000J 18 TB",
            hypothetical=True,
        )
        for i in range(count)
    )


def one_array_plan(
    level: RaidLevel,
    count: int,
    *,
    chunk_kib: int = 512,
    group_size: int | None = None,
    filesystem: Filesystem | None = Filesystem.EXT4,
    mountpoint: str | None = "/srv/data",
    spares: int = 0,
    hypothetical: bool = False,
    name: str = "data",
) -> Plan:
    ctl = controllers()
    make = new_disks if hypothetical else real_disks
    disks = make(count + spares, ctl)
    array = PlannedArray(
        name=name,
        level=level,
        members=tuple(d.id for d in disks[:count]),
        chunk_kib=chunk_kib,
        group_size=group_size,
        spares=tuple(d.id for d in disks[count:]),
        filesystem=filesystem,
        mountpoint=mountpoint,
    )
    return Plan(name="Test plan", controllers=ctl, disks=disks, arrays=(array,), host="host:nas")

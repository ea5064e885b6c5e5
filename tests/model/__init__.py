"""Tests of the pure planner model; the builders below make plans without any hardware."""

from __future__ import annotations

from typing import Any

from stripewise.model.plan import Plan, PlanController, PlanDisk, PlannedArray, RaidLevel

GB = 10**9
TB = 10**12


def disk(
    disk_id: str,
    controller: str = "c0",
    size_gb: float = 1000,
    read: float | None = 100,
    write: float | None = 100,
    **fields: Any,
) -> PlanDisk:
    """A hypothetical disk unless `hypothetical=False` is given."""
    values: dict[str, Any] = {"hypothetical": True, "inner_ratio": 0.6} | fields
    return PlanDisk(disk_id, controller, int(size_gb * GB), read, write, **values)


def plan_of(
    disks: tuple[PlanDisk, ...],
    *arrays: PlannedArray,
    controllers: tuple[PlanController, ...] | None = None,
) -> Plan:
    if controllers is None:
        ids = dict.fromkeys(d.controller for d in disks)
        controllers = tuple(PlanController(c, hypothetical=True) for c in ids)
    return Plan(name="test", controllers=controllers, disks=disks, arrays=arrays)


def x4500(*arrays: PlannedArray, buses: int = 6, size_gb: float = 500) -> Plan:
    """A Sun X4500 "Thumper": six 8-port SATA controllers, 48 free 500 GB disks, named
    c{controller}d{port}; by default every controller on its own PCI-X bus."""
    controllers = tuple(
        PlanController(
            f"c{i}", model="Marvell 88SX6081", bus=f"pcix{i * buses // 6}", bus_mb_s=1064, ports=8
        )
        for i in range(6)
    )
    disks = tuple(
        disk(f"c{i}d{j}", f"c{i}", size_gb, 70, 70, hypothetical=False)
        for i in range(6)
        for j in range(8)
    )
    return Plan(name="x4500", controllers=controllers, disks=disks, arrays=arrays)


def array(
    level: RaidLevel, members: tuple[str, ...] | list[str], name: str = "md0", **fields: Any
) -> PlannedArray:
    return PlannedArray(name, level, tuple(members), **fields)

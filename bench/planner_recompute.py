"""Recomputing a 48-disk plan after a drop: what the GUI does on every drag-and-drop."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from stripewise.model.plan import Plan


def x4500_plan() -> Plan:
    """The X4500 testbed's inventory as a plan with six arrays over its 48 disks."""
    from tests.fixtures.machines import sun_x4500

    from stripewise.inventory import load_inventory
    from stripewise.model.plan import PlannedArray, RaidLevel
    from stripewise.planner.from_inventory import plan_from_inventory

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "x4500.umockdev"
        path.write_text(sun_x4500().umockdev())
        plan = plan_from_inventory(load_inventory(path), name="X4500")
    disks = [d.id for d in plan.disks]
    arrays = tuple(
        PlannedArray(name=f"md{n}", level=level, members=tuple(disks[n * 8 : n * 8 + 8]))
        for n, level in enumerate(
            (
                RaidLevel.RAID6,
                RaidLevel.RAID5,
                RaidLevel.RAID10,
                RaidLevel.RAID0,
                RaidLevel.RAID6,
                RaidLevel.RAID50,
            )
        )
    )
    from dataclasses import replace

    return replace(plan, arrays=arrays)


def measure(runs: int = 200) -> list[float]:
    from stripewise.model.evaluate import evaluate

    plan = x4500_plan()
    moving = (plan.arrays[0].members[0],)
    samples = []
    for turn in range(runs):
        target = plan.arrays[1 + turn % 5].name
        started = time.perf_counter()
        plan = plan.move_disks(moving, target)  # the drop
        evaluate(plan)  # every figure, problem and spread score the cards show
        samples.append((time.perf_counter() - started) * 1000)
    return samples


if __name__ == "__main__":
    values = measure()
    print(f"median {statistics.median(values):.2f} ms, max {max(values):.2f} ms")

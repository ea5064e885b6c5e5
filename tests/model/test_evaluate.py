"""The whole-plan report the planner redraws after every drop."""

from __future__ import annotations

from dataclasses import replace

import pytest

from stripewise.model.evaluate import evaluate
from stripewise.model.plan import Filesystem, Plan, PlanController, RaidLevel
from tests.model import TB, array, disk, plan_of, x4500

R = RaidLevel


def busy_x4500() -> Plan:
    """All 48 disks in use: RAID 6, RAID 10, RAID 50, RAID 0 and a RAID 1 with a spare."""
    ids = [f"c{i % 6}d{i // 6}" for i in range(48)]  # round-robin over the controllers
    return x4500(
        array(R.RAID6, ids[0:12], name="data", filesystem=Filesystem.XFS),
        array(R.RAID10, ids[12:24], name="db", filesystem=Filesystem.EXT4),
        array(R.RAID50, ids[24:36], name="scratch", group_size=6),
        array(R.RAID0, ids[36:42], name="fast"),
        array(R.RAID1, ids[42:44], name="boot", spares=(ids[44],)),
    )


def test_48_disk_plan_is_deterministic() -> None:
    plan = busy_x4500()
    first = evaluate(plan)
    assert first == evaluate(plan)
    assert [a.array.name for a in first.arrays] == ["data", "db", "scratch", "fast", "boot"]
    assert first.ok and not first.problems
    assert first.usable_bytes == sum(a.geometry.usable_bytes for a in first.arrays)
    data = first.array("data")
    assert data is not None and data.prediction is not None and data.fs is not None
    assert data.members_per_controller == {f"c{i}": 2 for i in range(6)}
    assert data.spread.score == 100


def test_plan_problems_reach_the_arrays_they_involve() -> None:
    pool = tuple(disk(f"d{i}") for i in range(5))
    plan = plan_of(
        pool,
        array(R.RAID1, ["d0", "d1"], name="a"),
        array(R.RAID1, ["d1", "d2"], name="b"),
        array(R.RAID1, ["d3", "d4"], name="c"),
        array(R.RAID0, [], name="c"),
    )
    report = evaluate(plan)
    assert [p.code for p in report.problems] == ["disk_in_two_arrays", "duplicate_name"]
    assert not report.ok
    # every mirror here sits on the one controller: warned of apart (test_placement)
    exposed = "single_point_of_failure"
    assert [exposed in (p.code for p in a.problems) for a in report.arrays] == [
        True,
        True,
        True,
        False,
    ]
    by_name = [
        (a.array.name, a.ok, sorted(p.code for p in a.problems if p.code != exposed))
        for a in report.arrays
    ]
    assert by_name == [
        ("a", False, ["disk_in_two_arrays"]),
        ("b", False, ["disk_in_two_arrays"]),
        ("c", False, ["duplicate_name"]),
        ("c", False, ["duplicate_name", "too_few_members"]),
    ]


def test_costs() -> None:
    controllers = (
        PlanController("hba", hypothetical=True, price=300),
        PlanController("onboard"),  # real: owned already, costs nothing
    )
    pool = (
        disk("a", "hba", price=100),
        disk("b", "hba", price=100),
        disk("c", "onboard", price=120),
        disk("d", "onboard", size_gb=2000, price=150),
        disk("spare", "hba", price=90),
        disk("unused", "hba"),  # no price, but in no array
    )
    plan = plan_of(
        pool,
        array(R.RAID5, ["a", "b", "c"], name="md0", spares=("spare",)),
        controllers=controllers,
    )
    report = evaluate(plan)
    assert report.arrays[0].cost == 410
    assert report.total_cost == 710  # disks in arrays + the hypothetical controller
    assert report.usable_bytes == 2 * TB
    assert report.cost_per_usable_tb == pytest.approx(355)
    unknown = replace(plan, disks=(*pool[:4], replace(pool[4], price=None), pool[5]))
    assert evaluate(unknown).total_cost is None
    assert evaluate(unknown).cost_per_usable_tb is None
    unpriced_hba = replace(plan, controllers=(replace(controllers[0], price=None), controllers[1]))
    assert evaluate(unpriced_hba).total_cost is None
    assert evaluate(unpriced_hba).arrays[0].cost == 410


def test_empty_plan() -> None:
    report = evaluate(Plan())
    assert report.arrays == () and report.ok
    assert (report.total_cost, report.usable_bytes, report.cost_per_usable_tb) == (0.0, 0, None)


def test_incomplete_array_does_not_raise() -> None:
    plan = x4500(array(R.RAID60, ["c0d0", "ghost"], group_size=None))
    report = evaluate(plan).arrays[0]
    assert report.prediction is None and report.geometry.usable_bytes == 0
    assert {"unknown_disk", "too_few_members", "group_size"} <= {p.code for p in report.problems}
    assert report.cost is None


def test_plain_string_level_and_filesystem() -> None:
    """Qt item data hands back "raid10", not RaidLevel.RAID10: the model must not care."""
    members = ["c0d0", "c1d0", "c0d1", "c1d1"]
    typed = x4500(array(R.RAID10, members, filesystem=Filesystem.XFS))
    plain = x4500(array("raid10", members, filesystem="xfs"))  # type: ignore[arg-type]
    a, b = evaluate(typed).arrays[0], evaluate(plain).arrays[0]
    assert (a.geometry, a.fs, a.prediction, a.spread, a.problems) == (
        b.geometry,
        b.fs,
        b.prediction,
        b.spread,
        b.problems,
    )

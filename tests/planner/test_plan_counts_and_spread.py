"""Issue 16 leftovers in the planner's outputs: counts of one in the singular, no spread score
for an array with nothing to spread ("spread 100/100" for an empty array), and hardware
problems seen by plain `evaluate()` yet reported once."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from stripewise.cli import main
from stripewise.model.evaluate import evaluate
from stripewise.model.plan import Plan, PlanController, PlanDisk, PlannedArray, RaidLevel
from stripewise.planner.checks import evaluate_plan
from stripewise.planner.commands import commands_for
from stripewise.planner.plan_writer import dumps_plan
from stripewise.planner.report_json import format_plan, plan_json
from tests.planner.plans import one_array_plan

TB = 10**12


def test_an_empty_or_one_member_array_has_no_spread_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = one_array_plan(RaidLevel.RAID5, 4, spares=1)
    (data_array,) = base.arrays
    (spare,) = data_array.spares
    plan = replace(
        base,
        arrays=(
            replace(data_array, spares=()),
            PlannedArray("empty", RaidLevel.RAID5, ()),
            PlannedArray("alone", RaidLevel.JBOD, (spare,)),
        ),
    )
    path = tmp_path / "plan.toml"
    path.write_text(dumps_plan(plan), encoding="utf-8")

    assert main(["plan", str(path), "--json"]) == 0
    data, empty, alone = json.loads(capsys.readouterr().out)["arrays"]
    assert isinstance(data["spread_score"], int) and 0 <= data["spread_score"] <= 100
    assert data["spread"]["score"] == data["spread_score"]
    assert data["spread"]["headline"].startswith(f"spread {data['spread_score']} / 100")
    for unscored, headline in ((empty, "no members yet"), (alone, "one member")):
        assert "spread_score" in unscored and unscored["spread_score"] is None
        assert unscored["spread"]["score"] is None
        assert unscored["spread"]["headline"].startswith(headline)

    assert main(["plan", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"  {data['spread']['headline']}: " in out
    assert "  spread: no members yet\n" in out
    assert "  spread: one member: nothing to spread yet\n" in out
    assert "100/100" not in out and out.count("/ 100") == 1


def test_the_summary_counts_one_disk_one_set_and_one_failed_disk() -> None:
    plan = one_array_plan(RaidLevel.JBOD, 1)
    text = format_plan(plan, evaluate_plan(plan))
    assert "Test plan: 1 array on 1 disk and 3 controllers" in text
    assert "data  JBOD (linear), 1 disk (1 data)" in text
    mirror = one_array_plan(RaidLevel.RAID1, 2)
    assert "survives 1 failed disk\n" in format_plan(mirror, evaluate_plan(mirror)) + "\n"


def test_the_create_comment_of_a_one_disk_array_is_in_the_singular() -> None:
    plan = one_array_plan(RaidLevel.JBOD, 1, spares=0)
    (report,) = evaluate_plan(plan).arrays
    create = commands_for(report.array, plan, report, "nas")[0]
    assert create.comment.startswith(
        "JBOD (linear) of 1 disk: 1 data disk, survives 0 failed disks;"
    ), create.comment
    spared = one_array_plan(RaidLevel.RAID5, 4, spares=2)
    (report,) = evaluate_plan(spared).arrays
    create = commands_for(report.array, spared, report, "nas")[0]
    assert "survives 1 failed disk, " in create.comment
    assert "the last 2 disks listed are hot spares" in create.comment


def test_nested_commands_count_their_sets_and_data_disks() -> None:
    plan = one_array_plan(RaidLevel.RAID50, 6, group_size=3, chunk_kib=64)
    (report,) = evaluate_plan(plan).arrays
    comments = {c.title: c.comment for c in commands_for(report.array, plan, report, "nas")}
    assert comments["Create data-g1"].startswith(
        "Inner RAID 5 set 1 of 2 of RAID 50 data: 3 disks, 64 KiB"
    )
    assert comments["Create data"].startswith(
        "RAID 0 over the 2 sets. Its chunk (128 KiB) is one full stripe of a set "
        "(64 KiB x 2 data disks)"
    )


def shelf(disks: int, *, seen: bool) -> Plan:
    """An 8-port controller carrying `disks` disks in one RAID 6. `seen`: the disks and the
    controller were read from a machine, so more disks than ports is only a warning."""
    controller = PlanController("hba", model="LSI SAS 9300-8i", ports=8, hypothetical=not seen)
    pool = tuple(
        PlanDisk(
            f"d{i}",
            "hba",
            4 * TB,
            200.0,
            200.0,
            serial=f"S{i:03d}" if seen else None,
            hypothetical=not seen,
            read_from_machine=seen,
        )
        for i in range(disks)
    )
    array = PlannedArray("big", RaidLevel.RAID6, tuple(d.id for d in pool[:6]))
    return Plan(name="shelf", controllers=(controller,), disks=pool, arrays=(array,))


@pytest.mark.parametrize("seen", [False, True])
def test_plain_evaluate_sees_too_many_disks_on_a_controller_once(seen: bool) -> None:
    plan = shelf(16, seen=seen)
    for report in (evaluate(plan), evaluate_plan(plan)):
        over = [p for p in report.problems if p.code == "over_ports"]
        assert len(over) == 1 and over[0].error is not seen
        (array,) = report.arrays
        assert [p.code for p in array.problems].count("over_ports") == 1
        assert array.ok is seen and report.ok is seen
    assert evaluate_plan(plan) == evaluate(plan), "the hardware checks add nothing twice"
    data = plan_json(plan, evaluate_plan(plan))
    listed = data["warnings"] if seen else data["errors"]
    assert len([m for m in listed if "16 disks on 8 ports" in m]) == 1
    assert [p["code"] for p in data["problems"]].count("over_ports") == 1


def test_plain_evaluate_sees_a_bad_figure_on_a_controller() -> None:
    plan = shelf(4, seen=False)
    broken = Plan(
        name="shelf",
        controllers=(PlanController("hba", ports=0, hypothetical=True),),
        disks=plan.disks,
        arrays=(),
    )
    (problem,) = [p for p in evaluate(broken).problems if p.code == "bad_value"]
    assert problem.error and "ports must be" in problem.message
    assert evaluate_plan(broken).problems.count(problem) == 1

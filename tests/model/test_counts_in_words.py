"""Issue 16, point 9: counts in the model's sentences read as English when the count is one
("1 member", "1 round", "1 pass each"), not "1 members", "1 rounds", "1 and 1 passes"."""

from __future__ import annotations

from stripewise.model.ab import ABOutcome, ab_figures
from stripewise.model.array_problems import check_array
from stripewise.model.evaluate import evaluate
from stripewise.model.plan import PlanController
from stripewise.model.plan import RaidLevel as R
from stripewise.model.run_context import RunContext
from stripewise.model.run_headline import headline
from stripewise.model.tuning_targets import planned_tuning
from tests.model import array, disk, plan_of


def messages(level: R, members: list[str]) -> list[str]:
    pool = tuple(disk(f"d{i}") for i in range(4))
    return [p.message for p in check_array(array(level, members), plan_of(pool))]


def test_array_problems_count_one_member_as_one() -> None:
    assert messages(R.JBOD, []) == ["JBOD (linear) needs at least 1 member; md0 has 0."]
    odd = messages(R.RAID10, ["d0"])
    assert "RAID 10 pairs its members (md near-2 layout): 1 member has no partner" in odd[1]
    assert "1 members" not in " ".join(odd)
    three = messages(R.RAID10, ["d0", "d1", "d2"])
    assert "3 members leave one without a partner; add or remove one." in three[1]


def test_a_member_alone_on_a_slow_controller_is_not_said_to_share_it() -> None:
    """One member of four on a 50 MB/s controller: it has the link to itself."""
    pool = tuple(disk(f"d{i}", "slow" if i == 0 else "fast") for i in range(4))
    controllers = (PlanController("slow", bus_mb_s=50), PlanController("fast"))
    plan = plan_of(pool, array(R.RAID0, [d.id for d in pool]), controllers=controllers)
    (report,) = evaluate(plan).arrays
    assert report.prediction is not None
    text = " ".join(report.prediction.explanation)
    assert (
        "1 of 4 members on controller slow has its 50 MB/s to itself, less than the 100 MB/s "
        "it would move; reads at most 200 MB/s." in text
    )
    assert "share its" not in text and "50 MB/s each" not in text


def test_a_run_on_a_one_member_array_says_one_member() -> None:
    context = {"array": {"device": "md0", "level": "raid1", "members": ["sda"]}}
    assert headline(RunContext.from_json(context), []).array == "md0 raid1, 1 member"
    context["array"]["members"] = ["sda", "sdb"]
    assert headline(RunContext.from_json(context), []).array == "md0 raid1, 2 members"


def test_a_planned_array_of_one_disk_is_labelled_in_the_singular() -> None:
    pool = (disk("d0"), disk("d1"))
    plan = plan_of(pool, array(R.JBOD, ["d0"], name="scratch"), array(R.RAID1, ["d0", "d1"]))
    one, two = planned_tuning(plan, None)  # no inventory: every member is still to come
    assert one.label == "scratch  (planned jbod, 0 of 1 disk here, not created)"
    assert two.label == "md0  (planned raid1, 0 of 2 disks here, not created)"


def test_an_ab_of_one_round_says_one_round_and_one_pass_each() -> None:
    (figure,) = ab_figures([{"seq_read": (500.0,)}], [{"seq_read": (480.0,)}])
    assert figure.sentence().endswith("480-480 MB/s without, 1 pass each)")
    assert (
        ABOutcome((figure,), 1, 1)
        .summary("X")
        .startswith("A/B of X: 1 round (2 benchmarks), the cap;")
    )
    (uneven,) = ab_figures([{"w": (1.0, 2.0, 3.0)}], [{"w": (1.0, 2.0)}])
    assert "3 and 2 passes" in uneven.sentence()
    assert "can't tell: 3 passes with the preset, 2 without" in uneven.sentence()  # not "2 and 3"

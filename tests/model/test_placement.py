"""Spread score, swap suggestions and drop hints on an X4500-like box and smaller plans."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stripewise.model.arrays import sizes_match
from stripewise.model.evaluate import evaluate
from stripewise.model.placement import (
    Swap,
    apply_swaps,
    spread,
    spread_improvers,
    suggest_spread,
)
from stripewise.model.plan import Plan, PlanController, RaidLevel
from tests.model import array, disk, plan_of, x4500

R = RaidLevel
ON_C0 = [f"c0d{j}" for j in range(8)]


def score(plan: Plan, name: str = "md0") -> int:
    a = plan.array(name)
    assert a is not None
    return spread(a, plan).score


def test_raid6_piled_on_one_controller_scores_low() -> None:
    plan = x4500(array(R.RAID6, ON_C0))
    result = spread(plan.arrays[0], plan)
    assert result.score < 30
    assert result.per_controller == {"c0": 8}
    assert result.headline() == f"spread {result.score} / 100, single point of failure"
    text = " ".join(result.explanation)
    assert "8 of 8 members on controller c0: one controller failure takes the array down" in text
    assert "tolerates 2 failed disks" in text
    assert "1,064 MB/s" in text


def test_the_spread_s_ceiling_is_the_tightest_link_as_the_prediction_reads_it() -> None:
    """2 members on each of 6 controllers, 2 controllers on each PCI-X bus: a controller's
    1,064 MB/s leaves 532 each, the bus's 266; the array reads at most 12 x 266, as the
    prediction's bus term has it (model/predict.py), not 12 x 532."""
    members = [f"c{c}d{j}" for c in range(6) for j in range(2)]
    plan = x4500(array(R.RAID6, members), buses=3)
    text = " ".join(spread(plan.arrays[0], plan).explanation)
    assert "4 of 12 members share bus pcix0's 1,064 MB/s link, 266 MB/s each at most" in text
    assert "reads at most 12 x 266 = 3,192 MB/s" in text and "6,384" not in text


def test_a_single_point_of_failure_is_a_warning_scripts_read() -> None:
    """Not only words in the spread's explanation: the array's warnings (plan --json's
    `warnings`) say it; RAID 0, which no spread saves, gets none."""
    plan = x4500(array(R.RAID6, ON_C0))
    [warning] = [p for p in evaluate(plan).arrays[0].problems if not p.error]
    assert warning.code == "single_point_of_failure" and warning.disks == tuple(ON_C0)
    assert warning.message == (
        "md0: single point of failure: 8 of 8 members on controller c0: one controller failure "
        "takes the array down (it tolerates 2 failed disks)."
    )
    striped = x4500(array(R.RAID0, ON_C0))
    assert not [p for p in evaluate(striped).arrays[0].problems if not p.error]


@pytest.mark.parametrize("buses", [6, 3])
def test_suggest_spread_fixes_it(buses: int) -> None:
    plan = x4500(array(R.RAID6, ON_C0), buses=buses)
    swaps = suggest_spread(plan.arrays[0], plan)
    after = apply_swaps(plan, "md0", swaps)
    assert score(after) >= 90
    members = after.arrays[0].members
    assert len(members) == 8 and len(set(members)) == 8
    counts = spread(after.arrays[0], after).per_controller
    assert len(counts) == 6 and max(counts.values()) == 2
    assert all(s.in_disk not in plan.assigned() for s in swaps)
    assert all(s.reason for s in swaps)
    assert suggest_spread(plan.arrays[0], plan) == swaps  # deterministic


def test_well_spread_array_scores_100_and_gets_no_swaps() -> None:
    members = ["c0d0", "c1d0", "c2d0", "c3d0", "c4d0", "c5d0", "c0d1", "c1d1"]
    plan = x4500(array(R.RAID6, members))
    assert score(plan) == 100
    assert suggest_spread(plan.arrays[0], plan) == ()
    assert "As evenly spread" in spread(plan.arrays[0], plan).explanation[-1]


def test_swaps_keep_sizes_within_one_percent() -> None:
    """c1-c5 hold 1 TB disks except one 503 GB disk on c3 (0.6 % off) and one 520 GB on c4."""
    plan = x4500(array(R.RAID5, ON_C0[:4]))
    bigger = {f"c{i}d{j}" for i in range(1, 6) for j in range(8)} - {"c3d0", "c4d0"}
    disks = tuple(replace(d, capacity_bytes=10**12) if d.id in bigger else d for d in plan.disks)
    disks = tuple(replace(d, capacity_bytes=503 * 10**9) if d.id == "c3d0" else d for d in disks)
    disks = tuple(replace(d, capacity_bytes=520 * 10**9) if d.id == "c4d0" else d for d in disks)
    plan = replace(plan, disks=disks)
    swaps = suggest_spread(plan.arrays[0], plan)
    sizes = {d.id: d.capacity_bytes for d in plan.disks}
    assert swaps == (Swap("c0d0", "c3d0", swaps[0].reason),)
    assert all(sizes_match(sizes[s.out_disk], sizes[s.in_disk]) for s in swaps)


def test_never_uses_disks_that_are_not_free() -> None:
    """c1's disks belong to another array, c2's are real disks in use: only c3-c5 remain."""
    other = array(R.RAID0, [f"c1d{j}" for j in range(8)], name="md1")
    plan = x4500(array(R.RAID6, ON_C0), other)
    disks = tuple(replace(d, state="in_use") if d.controller == "c2" else d for d in plan.disks)
    plan = replace(plan, disks=disks)
    swaps = suggest_spread(plan.arrays[0], plan)
    assert swaps
    assert {s.in_disk[:2] for s in swaps} <= {"c3", "c4", "c5"}
    after = apply_swaps(plan, "md0", swaps)
    assert max(spread(after.arrays[0], after).per_controller.values()) == 2  # 2+2+2+2


def test_spread_improvers_point_away_from_the_pile() -> None:
    other = array(R.RAID0, ["c1d0", "c1d1"], name="md1")
    plan = x4500(array(R.RAID6, ON_C0[:4]), other)
    hints = spread_improvers(plan.arrays[0], plan)
    assert hints
    assert not any(h.startswith("c0") for h in hints)  # more on the pile: worse
    assert "c1d0" not in hints and "c1d2" in hints  # taken disks never; free ones may


def test_spread_improvers_skip_wrong_sizes() -> None:
    plan = x4500(array(R.RAID1, ["c0d0"]))
    disks = tuple(replace(d, capacity_bytes=4 * 10**12) if d.controller == "c1" else d
                  for d in plan.disks)  # fmt: skip
    plan = replace(plan, disks=disks)
    hints = spread_improvers(plan.arrays[0], plan)
    assert hints and not any(h.startswith(("c0", "c1")) for h in hints)


def test_spread_improvers_keep_a_perfect_spread_perfect() -> None:
    plan = x4500(array(R.RAID10, ["c0d0", "c1d0", "c2d0", "c3d0"]))
    hints = spread_improvers(plan.arrays[0], plan)
    assert {h[:2] for h in hints} == {"c4", "c5"}


def test_raid10_mirror_pairs() -> None:
    pairs_together = x4500(array(R.RAID10, ["c0d0", "c0d1", "c1d0", "c1d1"]))
    result = spread(pairs_together.arrays[0], pairs_together)
    assert result.score < 50
    assert any("Mirror pair c0d0 + c0d1 on controller c0" in line for line in result.explanation)
    crossed = x4500(array(R.RAID10, ["c0d0", "c1d0", "c0d1", "c1d1"]))
    assert score(crossed) > result.score
    assert not any("mirror pair" in line for line in spread(crossed.arrays[0], crossed).explanation)


def test_raid1_on_one_controller() -> None:
    assert score(x4500(array(R.RAID1, ["c0d0", "c0d1"]))) < 30
    assert score(x4500(array(R.RAID1, ["c0d0", "c1d0"]))) == 100


def test_raid0_has_no_failure_domain_to_protect() -> None:
    plan = x4500(array(R.RAID0, ["c0d0", "c1d0", "c2d0"]))
    result = spread(plan.arrays[0], plan)
    assert result.score == 100
    assert any("no redundancy" in line for line in result.explanation)


def test_one_controller_is_as_good_as_it_gets() -> None:
    pool = tuple(disk(f"d{i}") for i in range(4))
    plan = plan_of(pool, array(R.RAID5, ["d0", "d1", "d2"]))
    assert score(plan) == 100
    assert suggest_spread(plan.arrays[0], plan) == ()
    # 100 is the best this hardware allows, not safety: the headline says what the text does
    found = spread(plan.arrays[0], plan)
    assert found.headline() == "spread 100 / 100, single point of failure"
    assert any("one controller failure takes the array down" in line for line in found.explanation)
    raid0 = plan_of(pool, array(R.RAID0, ["d0", "d1", "d2"]))
    assert spread(raid0.arrays[0], raid0).headline() == "spread 100 / 100"  # no redundancy to lose


def test_nested_sets_spread_per_set() -> None:
    members = ["c0d0", "c0d1", "c1d0", "c1d1", "c2d0", "c2d1", "c3d0", "c3d1"]
    bad = x4500(array(R.RAID50, members, group_size=4))  # each set: 2 members on one controller
    assert any("set 1" in line for line in spread(bad.arrays[0], bad).explanation)
    good = x4500(array(R.RAID50, ["c0d0", "c1d0", "c2d0", "c3d0", "c4d0", "c5d0", "c0d1", "c1d1"],
                       group_size=4))  # fmt: skip
    assert score(good) == 100 > score(bad)


def test_buses_count() -> None:
    controllers = (
        PlanController("a", bus="pci0"),
        PlanController("b", bus="pci0"),
        PlanController("c", bus="pci1"),
        PlanController("d", bus="pci1"),
    )
    pool = tuple(disk(f"{c.id}{j}", c.id) for c in controllers for j in range(2))
    same_bus = plan_of(pool, array(R.RAID5, ["a0", "b0", "a1", "b1"]), controllers=controllers)
    both_buses = plan_of(pool, array(R.RAID5, ["a0", "b0", "c0", "d0"]), controllers=controllers)
    assert score(both_buses) == 100 > score(same_bus)
    assert spread(both_buses.arrays[0], both_buses).per_bus == {"pci0": 2, "pci1": 2}


def test_small_arrays_have_no_score_to_show() -> None:
    """The field report: "spread 100 / 100" for an array with no members."""
    empty = spread(array(R.RAID1, []), x4500())
    assert not empty.scored and empty.headline() == "no members yet"
    one = spread(array(R.RAID1, ["c0d0"]), x4500())
    assert not one.scored and one.headline() == "one member: nothing to spread yet"
    assert one.headline(short=True) == "nothing to spread yet"  # a card's bar: fits one line
    assert one.explanation == ("One member: nothing to spread yet.",)
    two = spread(array(R.RAID1, ["c0d0", "c1d0"]), x4500())
    assert two.scored and two.headline() == "spread 100 / 100"


def test_apply_swaps() -> None:
    plan = x4500(array(R.RAID5, ["c0d0", "c0d1", "c0d2"]))
    after = apply_swaps(plan, "md0", (Swap("c0d1", "c3d3", "why"),))
    assert after.arrays[0].members == ("c0d0", "c3d3", "c0d2")  # order kept
    with pytest.raises(ValueError, match="no array named"):
        apply_swaps(plan, "md9", ())
    with pytest.raises(ValueError, match="not a member"):
        apply_swaps(plan, "md0", (Swap("c5d5", "c3d3", "why"),))


# --- properties ---------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    level=st.sampled_from([R.RAID0, R.RAID1, R.RAID5, R.RAID6, R.RAID10, R.RAID50]),
    picks=st.lists(st.integers(0, 47), min_size=1, max_size=12, unique=True),
    taken=st.lists(st.integers(0, 47), max_size=10, unique=True),
    buses=st.sampled_from([1, 2, 3, 6]),
)
def test_spread_properties(level, picks, taken, buses) -> None:
    ids = [f"c{i // 8}d{i % 8}" for i in range(48)]
    members = [ids[i] for i in picks]
    other = [ids[i] for i in taken if ids[i] not in members]
    arrays = [array(level, members, group_size=3)]
    if other:
        arrays.append(array(R.JBOD, other, name="md1"))
    plan = x4500(*arrays, buses=buses)
    before = spread(plan.arrays[0], plan)
    assert 0 <= before.score <= 100
    assert sum(before.per_controller.values()) == len(members)
    swaps = suggest_spread(plan.arrays[0], plan)
    free = {d.id for d in plan.free_disks()}
    assert all(s.in_disk in free and s.out_disk in members for s in swaps)
    after = apply_swaps(plan, "md0", swaps)
    assert len(after.arrays[0].members) == len(members)
    assert spread(after.arrays[0], after).score >= before.score
    hints = spread_improvers(plan.arrays[0], plan)
    assert hints <= free
    promised = "A more even spread is possible" in " ".join(before.explanation)
    assert promised == bool(swaps), "the hint and Spread… give one answer"


@pytest.mark.parametrize("level", [R.RAID1, R.JBOD])
def test_one_member_at_a_time_levels_do_not_read_by_striping(level: RaidLevel) -> None:
    """RAID 1 reads one mirror and linear one disk at a time: a shared link does not bound
    their reads at n x the share, as it bounds a striped array's (model/predict.py)."""
    plan = x4500(array(level, ["c0d0", "c0d1", "c1d0"]))
    text = " ".join(spread(plan.arrays[0], plan).explanation)
    assert "2 of 3 members share controller c0's 1,064 MB/s link, 532 MB/s each" in text
    assert "striping" not in text and "reads at most" not in text
    said = "one mirror at a time" if level is R.RAID1 else "one member at a time"
    assert said in text
    if level is R.RAID1:  # every write goes to each mirror: the share bounds the writes
        assert "writes at most 532 MB/s" in text
    striped = x4500(array(R.RAID5, ["c0d0", "c0d1", "c1d0"]))
    assert "reads at most 3 x 532" in " ".join(spread(striped.arrays[0], striped).explanation)


def test_the_hint_promises_only_what_the_swaps_reach() -> None:
    """2 members per controller, the controllers 2-1-2-1 on four buses (as on the X4500): the
    buses are uneven, but evening them would pile members on a controller. No swap raises the
    score, so neither hint says a better spread is possible (Spread… offers none)."""
    members = [f"c{c}d{j}" for c in range(6) for j in range(2)]
    plan = x4500(array(R.RAID6, members), buses=4)
    result = spread(plan.arrays[0], plan)
    assert result.score < 100 and suggest_spread(plan.arrays[0], plan) == ()
    assert "possible" not in " ".join(result.explanation)
    assert result.explanation[-2].startswith("Members per bus: 4 on bus pcix0")
    assert result.explanation[-1] == "As evenly spread as the free disks allow."


def test_swaps_bring_in_free_disks_only_never_one_of_unknown_use() -> None:
    """A recording records no mounts: its disks are of unknown use, and one may be the system
    disk. A drag may use them (with a warning); Spread… and its hint never offer them."""
    plan = x4500(array(R.RAID6, ON_C0))
    unknown = tuple(d if d.controller == "c0" else replace(d, state="unknown") for d in plan.disks)
    plan = replace(plan, disks=unknown)
    result = spread(plan.arrays[0], plan)
    assert result.score < 30 and suggest_spread(plan.arrays[0], plan) == ()
    assert result.explanation[-1] == "As evenly spread as the free disks allow."
    some_free = tuple(replace(d, state="free") if d.controller == "c3" else d for d in unknown)
    plan = replace(plan, disks=some_free)
    swaps = suggest_spread(plan.arrays[0], plan)
    assert swaps and {s.in_disk[:2] for s in swaps} == {"c3"}
    assert spread(plan.arrays[0], plan).explanation[-1] == (
        "A more even spread is possible with the free disks."
    )

"""The scaling test's plan and analysis on simulated passes (model/scaling.py)."""

from __future__ import annotations

import random

import pytest

from stripewise.model.scaling import (
    DiskIdentity,
    ScalingError,
    analyse,
    plan_scaling,
    together_counts,
)
from stripewise.protocol.scaling import ScalingEnd, ScalingResult

DISKS = tuple(f"sd{c}" for c in "bcdefghi")  # eight


def test_steps_are_each_disk_alone_then_powers_of_two_and_n_last() -> None:
    assert together_counts(1) == (1,)
    assert together_counts(5) == (1, 2, 4, 5)
    assert together_counts(8) == (1, 2, 4, 8)
    plan = plan_scaling(DISKS[:5], 3)
    assert [s.disks for s in plan.steps if s.alone] == [(d,) for d in DISKS[:5]]
    assert [len(s.disks) for s in plan.steps if not s.alone] == [2, 4, 5]
    assert plan.together == (0, 5, 6, 7)  # the first disk alone is the one-disk step


def test_passes_are_interleaved_forward_then_back() -> None:
    plan = plan_scaling(DISKS[:2], 3)  # steps: sdb, sdc, both
    assert [(v.step, v.repetition) for v in plan.visits] == [
        (0, 1), (1, 1), (2, 1), (2, 2), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3),
    ]  # fmt: skip
    assert [v.number for v in plan.visits] == list(range(1, 10))


@pytest.mark.parametrize(
    ("disks", "repeat", "words"),
    [((), 3, "at least one"), (("sdb", "sdb"), 3, "twice"), (("sdb",), 0, "repeat")],
)
def test_bad_plans_are_refused(disks: tuple[str, ...], repeat: int, words: str) -> None:
    with pytest.raises(ScalingError, match=words):
        plan_scaling(disks, repeat)


def simulated(count: int, *, alone: float, link: float, slow: dict[int, float], seed: int = 1):
    """Passes of a set of `count` disks sharing a link of `link` MB/s, 1 % noise."""
    noise = random.Random(seed)
    plan = plan_scaling(DISKS[:count], 3)
    own = [slow.get(i, alone) for i in range(count)]
    passes: dict[int, list[float]] = {}
    for visit in plan.visits:
        step = plan.steps[visit.step]
        rate = min(link, sum(own[DISKS.index(d)] for d in step.disks))
        passes.setdefault(visit.step, []).append(rate * noise.gauss(1.0, 0.01))
    return plan, passes


def test_a_shared_link_tops_out_where_the_sum_reaches_it() -> None:
    plan, passes = simulated(8, alone=320, link=1640, slow={})
    analysis = analyse(plan, passes)
    assert [len(s.disks) for s in analysis.steps] == [1, 2, 4, 8]
    assert analysis.ceiling is not None
    assert analysis.ceiling.mb_s == pytest.approx(1640, rel=0.02)
    assert analysis.ceiling.disks == 8  # 4 x 320 = 1280 is clearly below the link
    assert analysis.would_need_mb_s == pytest.approx(8 * 320, rel=0.02)
    assert analysis.sentence("hba0").startswith("hba0 tops out at 1,6")
    assert "8 disks would need 2,5" in analysis.sentence("hba0")
    assert analysis.outliers == ()


def test_the_ceiling_is_reached_at_the_smallest_step_that_cannot_be_told_apart() -> None:
    plan, passes = simulated(8, alone=320, link=1200, slow={})
    analysis = analyse(plan, passes)
    assert analysis.ceiling is not None and analysis.ceiling.disks == 4
    for step in analysis.steps:
        assert step.mb_s.ci95 is not None and step.mb_s.ci95[0] < step.mb_s.mean


def test_no_ceiling_while_the_last_step_still_grows() -> None:
    plan, passes = simulated(4, alone=100, link=10_000, slow={})
    analysis = analyse(plan, passes)
    assert analysis.ceiling is None
    assert "still grew at 4 disks" in analysis.sentence("these disks")


def test_one_pass_each_places_a_ceiling_by_the_five_percent_rule_and_names_no_disk() -> None:
    """--repeat 1 (docs/scaling.md): steps within 5 % count as the same, the sentence says the
    answer has no interval, and one pass calls no disk slow (no noise known)."""
    plan = plan_scaling(DISKS[:3], 1)
    figures = {0: [920.0], 1: [900.0], 2: [610.0], 3: [6284.0], 4: [6554.0]}
    analysis = analyse(plan, figures)
    assert analysis.settled and analysis.widest_pct is None
    assert analysis.ceiling is not None
    assert (analysis.ceiling.mb_s, analysis.ceiling.disks) == (6554.0, 2)  # 6,284 is within 5 %
    assert analysis.outliers == () and analysis.steps[1].mb_s.ci95 is None
    assert analysis.sentence("loops") == (
        "loops tops out at 6,554 MB/s with 2 disks (one pass per step: no interval); "
        "3 disks would need 2,700"
    )


def test_one_pass_each_still_grows_when_the_last_step_is_over_five_percent_up() -> None:
    plan = plan_scaling(DISKS[:4], 1)
    figures = {0: [100.0], 1: [100.0], 2: [100.0], 3: [100.0], 4: [199.0], 5: [396.0]}
    analysis = analyse(plan, figures)
    assert analysis.settled and analysis.ceiling is None
    assert analysis.sentence("these disks") == (
        "these disks still grew at 4 disks (396 MB/s, one pass per step: no interval): "
        "no ceiling; 4 disks would need 400"
    )


def test_a_best_step_that_varies_widely_places_no_ceiling() -> None:
    """A ceiling within noise is no ceiling: a best step of +-30 % says "can't place" and why."""
    plan = plan_scaling(DISKS[:4], 3)
    figures = {i: [100.0, 101.0, 99.0] for i in range(4)} | {4: [150, 260, 190], 5: [210, 140, 250]}
    analysis = analyse(plan, figures)
    assert analysis.ceiling is None and not analysis.settled
    assert analysis.widest_pct is not None and analysis.widest_pct > 10
    assert "vary too much" in analysis.sentence("these disks")


@pytest.mark.parametrize(("spread", "shown"), [(41.0, "10.2"), (40.33, "10.1")])
def test_a_refused_width_never_reads_as_within_ten_percent(spread: float, shown: str) -> None:
    """+/- 10.18 % (or 10.02 %) is refused by the +/- 10 % rule: shown as 10.2 (10.1), never
    "10", in the sentence and in --json's widest_pct alike."""
    plan = plan_scaling(DISKS[:3], 3)
    figures = {i: [100.0, 100.5, 99.5] for i in range(3)} | {3: [500.0, 501.0, 499.0]}
    figures[4] = [1000.0 - spread, 1000.0, 1000.0 + spread]
    analysis = analyse(plan, figures)
    assert not analysis.settled and analysis.ceiling is None
    assert f"(the best step is \u00b1 {shown} %)" in analysis.sentence("loops")
    result = ScalingResult.of(ScalingEnd("r", "complete", 1.0, 1.0, 0), "loops", analysis)
    assert result.widest_pct == float(shown) and not result.settled


def test_a_step_too_noisy_to_tell_apart_does_not_reach_the_ceiling() -> None:
    """1 disk at 7,984 MB/s with passes from 3,166 to 12,785 cannot be told from 4 disks'
    11,410, only because it varies so: the ceiling is reached with 2 disks, measured
    narrowly, not "11,410 MB/s with 1 disk" (the review's loop devices)."""
    plan = plan_scaling(DISKS[:4], 3)
    steady = [8000.0, 8010.0, 7990.0]
    figures = {0: [3166.0, 8000.0, 12785.0], 1: steady, 2: steady, 3: steady}
    figures |= {4: [11400.0, 11420.0, 11390.0], 5: [11410.0, 11400.0, 11420.0]}
    analysis = analyse(plan, figures)
    assert analysis.ceiling is not None and analysis.ceiling.disks == 2
    assert (
        analysis.sentence("loops") == "loops tops out at 11,410 MB/s with 2 disks; 4 disks "
        "would need 32,000"
    )


def test_a_slow_disk_beyond_its_peers_noise_is_named() -> None:
    plan = plan_scaling(DISKS[:4], 3)
    steady = [100.0, 101.0, 99.0]
    figures = {0: steady, 1: steady, 2: [80.0, 81.0, 79.0], 3: steady}
    analysis = analyse(plan, figures | {4: [199.0, 200.0, 201.0], 5: [200.0, 199.0, 201.0]})
    assert [o.disk for o in analysis.outliers] == [DISKS[2]]  # 20 % below, beyond noise


def test_the_slow_member_is_named_against_its_identical_peers_with_its_slot() -> None:
    plan, passes = simulated(6, alone=200, link=10_000, slow={2: 150, 5: 120})
    identities = {d: DiskIdentity("ST4000", 4 * 10**12, f"Bay {i}") for i, d in enumerate(DISKS)}
    identities["sdg"] = DiskIdentity("WD2000", 2 * 10**12, "Bay 5")  # no identical peer
    analysis = analyse(plan, passes, identities)
    named = {o.disk: o for o in analysis.outliers}
    assert set(named) == {"sdd", "sdg"}
    assert named["sdd"].slot == "Bay 2" and named["sdd"].below_pct == pytest.approx(25, abs=2)
    assert "sdg" not in named["sdd"].peers  # another model is no peer
    assert set(named["sdg"].peers) == set(DISKS[:6]) - {"sdg"}  # alone: the whole set stands in


def test_a_disk_just_within_fifteen_percent_is_not_an_outlier() -> None:
    plan, passes = simulated(4, alone=200, link=10_000, slow={3: 174})
    assert analyse(plan, passes).outliers == ()


def test_a_step_without_a_pass_is_refused() -> None:
    plan, passes = simulated(2, alone=200, link=300, slow={})
    del passes[2]
    with pytest.raises(ScalingError, match="step 3"):
        analyse(plan, passes)

"""The order an experiment visits its points in, driven as the CLI drives it against a simulated
machine: the starting settings first and last, interleaved randomised rounds, passes added up to
the cap, failed points dropped; and the latency target's bisection."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from stripewise.model.bench import Phase
from stripewise.model.experiment import Design, Metric, Objective, Values
from stripewise.model.experiment_plan import LatencySearch, SweepPlan
from stripewise.model.experiment_result import Verdict
from stripewise.model.verdict import MIN_PASSES
from tests.fixtures.simulated_experiments import (
    FAILURE,
    SPEC,
    Machine,
    design,
    drive,
    effects,
    sweep,
)

READ_AHEAD = (128, 512, 1024, 4096)
START: Values = (("read_ahead_kb", 128),)
FLAT = Machine(effects("read_ahead_kb", 500.0, {}), noise_pct=5.0)


def ra(value: int) -> Values:
    return (("read_ahead_kb", value),)


def rounds(visits: list[Values], size: int, count: int) -> list[list[Values]]:
    return [visits[i * size : (i + 1) * size] for i in range(count)]


# --- the sweep's order --------------------------------------------------------------------------
@pytest.mark.parametrize("values", [READ_AHEAD, (512, 1024, 4096)], ids=["among", "not-among"])
def test_the_first_and_last_visits_measure_the_starting_settings(values: tuple[int, ...]) -> None:
    for seed in range(20):
        result, visits = sweep(design(("read_ahead_kb", values)), START, FLAT, seed)
        assert visits[0] == START and visits[-1] == START
        assert result.baseline is not None and result.baseline.values == START
        points = {p.values for p in result.points}
        assert points == {ra(v) for v in values} | {START}


def test_each_round_visits_every_point_once_and_three_rounds_come_before_a_fourth_pass() -> None:
    points = [ra(v) for v in READ_AHEAD]
    for seed in range(20):
        _, visits = sweep(design(("read_ahead_kb", READ_AHEAD)), START, FLAT, seed)
        for each in rounds(visits, len(points), MIN_PASSES):
            assert sorted(each) == sorted(points), "a round is every point once"
        passes: Counter[Values] = Counter()
        for values in visits[:-1]:  # the last: the closing measurement of the start
            passes[values] += 1
            if passes[values] > MIN_PASSES:
                assert min(passes[p] for p in points) >= MIN_PASSES
            assert passes[values] - min(passes[p] for p in points) <= 1, "rounds interleave"


def test_the_order_is_random_per_seed_and_the_same_for_the_same_seed() -> None:
    plan_design = design(("read_ahead_kb", READ_AHEAD))
    orders = {tuple(sweep(plan_design, START, FLAT, seed)[1][:12]) for seed in range(10)}
    assert len(orders) >= 8, "ten seeds, (3!)(4!)(4!) orders of the first three rounds"
    first, again = (sweep(plan_design, START, FLAT, 7) for _ in range(2))
    assert first[1] == again[1] and first[0] == again[0]


def test_passes_stop_at_the_cap_on_a_noisy_machine_and_at_three_on_a_quiet_one() -> None:
    plan_design = design(("read_ahead_kb", READ_AHEAD), max_passes=6)
    plan = SweepPlan(plan_design, START, random.Random(1))
    at_least, at_most = plan.planned_visits()
    assert (at_least, at_most) == (4 * MIN_PASSES + 1, 4 * 6 + 1)
    noisy = Machine(effects("read_ahead_kb", 500.0, {}), noise_pct=40.0)
    visits = drive(plan, noisy, random.Random(2))
    result = plan.result(restored=True)
    assert len(visits) == at_most
    # every point gets the cap; the start one more, the closing measurement for the drift
    assert {p.values: len(p.passes) for p in result.points} == {
        ra(128): 7,
        ra(512): 6,
        ra(1024): 6,
        ra(4096): 6,
    }
    assert result.recommendation.verdict is Verdict.CANT_TELL
    quiet = Machine(effects("read_ahead_kb", 500.0, {}), noise_pct=0.5)
    result, visits = sweep(plan_design, START, quiet, 3)
    assert len(visits) == at_least
    assert [len(p.passes) for p in result.points] == [4, 3, 3, 3]


def test_while_any_point_is_wide_every_point_gets_another_pass_until_all_are_narrow() -> None:
    """Points go on together: one stopped as soon as its interval looked narrow would be
    judged on fewer, luckier passes. Every run id is kept, in its point."""
    for seed in range(10):
        result, visits = sweep(design(("read_ahead_kb", READ_AHEAD)), START, FLAT, seed)
        assert 4 * MIN_PASSES + 1 < len(visits) <= 4 * 9 + 1
        counts = {p.values: len(p.passes) for p in result.points}
        others = {counts[ra(v)] for v in READ_AHEAD[1:]}
        assert others == {counts[START] - 1}, "the start has one more: the closing visit"
        assert all(p.narrow(5.0) for p in result.points if not p.baseline) or others == {9}
        every_run = sorted(run for p in result.points for run in p.runs)
        assert every_run == list(range(1, len(visits) + 1))


def test_a_failed_point_is_never_visited_again_and_is_named_in_the_result() -> None:
    machine = Machine(
        effects("read_ahead_kb", 500.0, {1024: 15.0}), noise_pct=5.0, failing=[ra(512)]
    )
    for seed in range(10):
        result, visits = sweep(design(("read_ahead_kb", READ_AHEAD)), START, machine, seed)
        assert visits.count(ra(512)) == 1
        assert result.extra["failed"] == {"read_ahead_kb=512": FAILURE}
        assert f"read_ahead_kb=512 failed: {FAILURE}" in result.recommendation.reason
        assert visits[-1] == START
    assert result.recommendation.verdict is Verdict.BETTER
    assert result.recommendation.values == ra(1024), "the other points are still judged"


def test_a_failed_start_is_cant_tell_naming_it() -> None:
    machine = Machine(effects("read_ahead_kb", 500.0, {1024: 15.0}), failing=[START])
    result, visits = sweep(design(("read_ahead_kb", READ_AHEAD)), START, machine, 1)
    assert visits.count(START) == 1
    assert result.recommendation.verdict is Verdict.CANT_TELL
    assert result.recommendation.values == START
    assert f"read_ahead_kb=128 failed: {FAILURE}" in result.recommendation.reason


def test_a_grid_of_two_parameters_has_every_combination_and_the_start_when_not_among() -> None:
    grid = design(("read_ahead_kb", (128, 512, 4096)), ("nr_requests", (64, 256)))
    combos = {
        (("read_ahead_kb", r), ("nr_requests", n)) for r in (128, 512, 4096) for n in (64, 256)
    }
    assert len(grid.points()) == 6 and set(grid.points()) == combos
    assert grid.points()[:2] == [
        (("read_ahead_kb", 128), ("nr_requests", 64)),
        (("read_ahead_kb", 128), ("nr_requests", 256)),
    ], "the first parameter varies slowest"

    def figure(values: Values) -> float:
        return 500.0

    machine = Machine(figure, noise_pct=5.0)
    among: Values = (("read_ahead_kb", 128), ("nr_requests", 64))
    result, visits = sweep(grid, among, machine, 1)
    assert len(result.points) == 6 and sum(p.baseline for p in result.points) == 1
    assert visits[0] == among == visits[-1]
    outside: Values = (("read_ahead_kb", 256), ("nr_requests", 32))
    plan = SweepPlan(grid, outside, random.Random(1))
    assert len(plan.points) == 7 and plan.points[0].values == outside and plan.points[0].baseline
    assert set(drive(plan, machine, random.Random(1))[:7]) == combos | {outside}


# --- the latency target's search ----------------------------------------------------------------
def latency_design(target_us: float, low: int = 1, high: int = 256) -> Design:
    return Design(
        target="/mnt/data",
        spec=SPEC,
        parameters=(),
        objective=Objective(Phase.RANDOM_READ, Metric.IOPS),
        latency_target_us=target_us,
        search=(low, high),
    )


def p99_us(values: Values) -> float:
    """Queueing: p99 grows with depth, 50 us at 1."""
    return 50.0 * float(values[0][1]) ** 0.8


def iops(values: Values) -> float:
    return 20_000.0 * float(values[0][1]) ** 0.5


QUEUEING = Machine(iops, noise_pct=5.0, p99_us=p99_us)


def search(target_us: float, seed: int, low: int = 1, high: int = 256) -> LatencySearch:
    plan = LatencySearch(latency_design(target_us, low, high), "queue_depth")
    drive(plan, QUEUEING, random.Random(seed))
    return plan


def test_the_search_answers_the_largest_depth_whose_p99_interval_is_under_the_target() -> None:
    target = 1000.0  # p99 reaches it between depth 42 (994 us) and 43 (1012 us)
    most_probes = math.ceil(math.log2(256 - 1)) + 2  # LO, HI, then halving the gap
    answers = []
    for seed in range(30):
        plan = search(target, seed)
        result = plan.result(restored=True)
        answer = result.extra["latency_target"]
        depth = answer["value"]
        answers.append(depth)
        assert result.recommendation.verdict is Verdict.BETTER
        assert result.recommendation.values == (("queue_depth", depth),)
        assert answer["p99_ci95"][1] < target, "its interval lies under the target"
        assert p99_us((("queue_depth", depth),)) < target
        assert depth + 1 in answer["probes"] and plan.misses == depth + 1, "the next one misses"
        assert len(answer["probes"]) == len(set(answer["probes"])) <= most_probes
        assert answer["probes"][:2] == [1, 256]
        at_least, at_most = plan.planned_visits()
        assert len(answer["probes"]) * MIN_PASSES <= at_least <= plan.visits
        assert plan.visits <= len(answer["probes"]) * 9 <= at_most, "every probe may need 9"
        assert answer["iops"] == pytest.approx(iops((("queue_depth", depth),)), rel=0.1)
        assert answer["iops_ci95"][0] < answer["iops"] < answer["iops_ci95"][1]
        assert f"queue_depth {depth}:" in result.recommendation.reason
    assert min(answers) >= 36 and max(answers) <= 42
    assert Counter(answers).most_common(1)[0][0] >= 39, "usually within a few of 42"


def test_the_search_answers_no_depth_when_even_the_lowest_misses_and_hi_when_all_fit() -> None:
    fresh = LatencySearch(latency_design(40.0), "queue_depth")
    assert fresh.planned_visits()[0] == MIN_PASSES, "LO alone may end it: at least 3, not 30"
    plan = search(40.0, 1)  # 50 us at depth 1 already
    assert plan.planned_visits()[0] == plan.visits == MIN_PASSES
    result = plan.result(restored=True)
    answer = result.extra["latency_target"]
    assert answer["value"] is None and answer["probes"] == [1] and answer["iops"] is None
    rec = result.recommendation
    assert rec.verdict is Verdict.NO_BETTER and rec.values == (("queue_depth", 1),)
    assert rec.reason.startswith(
        "no value meets the target: no queue_depth from 1 to 256 keeps p99 latency under 40 \u00b5s"
    )
    roomy = search(100_000.0, 1, 4, 64).result(restored=True)
    assert roomy.extra["latency_target"]["value"] == 64
    assert roomy.extra["latency_target"]["probes"] == [4, 64]
    assert "the top of the search" in roomy.recommendation.reason


def test_the_search_counts_a_failed_probe_as_too_deep() -> None:
    plan = LatencySearch(latency_design(1000.0, 1, 64), "queue_depth")
    failing = Machine(iops, noise_pct=5.0, p99_us=p99_us, failing=[(("queue_depth", 64),)])
    drive(plan, failing, random.Random(3))
    result = plan.result(restored=True)
    assert result.extra["failed"] == {"queue_depth=64": FAILURE}
    assert plan.misses is not None and result.extra["latency_target"]["value"] is not None
    at_least, at_most = plan.planned_visits()
    assert at_least <= plan.visits <= at_most


def test_a_search_is_better_only_when_its_answer_beats_the_starting_settings() -> None:
    """Every depth fits a roomy target; the deepest is "better" only when the passes show its
    IOPS beat the benchmark's own depth (1, here outside the search), by Welch as a sweep."""
    start = (("queue_depth", 1),)
    flat = Machine(lambda _v: 25_000.0, noise_pct=40.0, p99_us=p99_us)
    for seed in range(5):
        plan = LatencySearch(latency_design(100_000.0, 4, 8), "queue_depth")
        visits = drive(plan, flat, random.Random(seed))
        rec = plan.result(restored=True).recommendation
        assert visits.count(start) >= MIN_PASSES, "the starting settings are measured"
        assert rec.verdict is not Verdict.BETTER and rec.values == start, rec.reason
        assert rec.reason.startswith(
            "queue_depth 8: the deepest queue whose p99 stays under 100,000 \u00b5s"
        )
        assert "% (95 %) IOPS against the starting settings (queue_depth=1)" in rec.reason
    faster = search(100_000.0, 1, 4, 8).result(restored=True).recommendation
    assert faster.verdict is Verdict.BETTER and faster.values == (("queue_depth", 8),)
    assert faster.change_of == faster.values and faster.ci95_pct is not None
    assert faster.ci95_pct[0] > 0, "its change against the start, with its interval"


def test_a_search_whose_answer_is_the_starting_depth_keeps_it_without_more_passes() -> None:
    plan = LatencySearch(latency_design(60.0, 1, 8), "queue_depth")  # only depth 1 fits
    visits = drive(plan, QUEUEING, random.Random(2))
    rec = plan.result(restored=True).recommendation
    assert rec.verdict is Verdict.NO_BETTER and rec.values == (("queue_depth", 1),)
    assert "it is the starting settings" in rec.reason
    assert plan.planned_visits() == (len(visits), plan.planned_visits()[1])

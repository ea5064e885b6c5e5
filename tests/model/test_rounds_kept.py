"""A steady-state phase's rounds as the history keeps them: rows in the one vocabulary, taken
apart from the run's figures when read, never a repetition or a phase's figure."""

from __future__ import annotations

import pytest

from stripewise.model.bench import Phase, PhaseOutcome, phase_summaries
from stripewise.model.rounds_kept import round_values, split_rounds
from stripewise.model.run import ResultValue
from stripewise.model.steady_state import KeptRounds, SteadyRounds, Window
from stripewise.model.vocabulary import ROUND_METRICS, is_round_figure
from stripewise.protocol.events import PhaseFinished

RAMP = (900.0, 400.0, 100.0, 102.0, 98.0, 101.0, 99.0)  # a cache's burst, then steady


def outcome(
    repetition: int, rounds: tuple[float, ...], phase: Phase = Phase.SEQ_WRITE
) -> PhaseOutcome:
    mb_s = rounds if phase is Phase.SEQ_WRITE else tuple(r * 4096 / 1e6 for r in rounds)
    iops = tuple(m * 1e6 / (4096 if phase is Phase.RANDOM_WRITE else 2**20) for m in mb_s)
    steady = SteadyRounds(mb_s, iops, by_iops=phase is Phase.RANDOM_WRITE)
    return PhaseOutcome(phase, repetition, 10.0, write_bytes=10**9, steady=steady)


def test_each_repetitions_rounds_are_kept_under_its_own_qualified_phase() -> None:
    (result,) = phase_summaries([outcome(1, RAMP), outcome(2, RAMP[2:])])
    values = result.values()
    rows = [v for v in values if is_round_figure(v.metric)]
    assert [(v.phase, v.metric) for v in rows] == [
        (f"seq_write (repetition {n})", metric)
        for n in (1, 2)
        for metric in ("round_throughput", "round_excursion", "round_slope", "round_steady")
    ]
    first = rows[0]
    assert first.passes == RAMP and first.value == pytest.approx(100.0)
    assert (first.min_value, first.max_value, first.repetitions) == (98.0, 900.0, 1)
    # the phase's own figure: one per repetition, the window's mean; the rounds are not in it
    (throughput,) = [v for v in values if (v.phase, v.metric) == ("seq_write", "throughput")]
    assert throughput.passes == pytest.approx((100.0, 100.0)) and throughput.repetitions == 2


def test_read_back_the_rounds_are_apart_from_the_figures() -> None:
    (result,) = phase_summaries([outcome(1, RAMP), outcome(2, (50.0, 200.0, 50.0, 200.0, 50.0))])
    figures, rounds = split_rounds(result.values())
    assert not any(v.metric in ROUND_METRICS for v in figures)
    assert {v.phase for v in figures} == {"seq_write"}
    assert [(r.phase, r.unit, r.kept.repetition) for r in rounds] == [
        ("seq_write", "MB/s", 1),
        ("seq_write", "MB/s", 2),
    ]
    steady, ramp = rounds[0].kept, rounds[1].kept
    assert steady.rounds == RAMP and steady.steady and steady.window_start == 3
    assert steady.verdict() == "steady after 7 rounds"
    assert not ramp.steady and ramp.window.excursion_pct == pytest.approx(136.4)
    assert ramp.verdict() == "not steady in 5 rounds, excursion 136 %"


def test_a_random_write_keeps_its_iops() -> None:
    (result,) = phase_summaries([outcome(1, (10_000.0,) * 5, Phase.RANDOM_WRITE)])
    _figures, (rounds,) = split_rounds(result.values())
    assert (rounds.phase, rounds.unit) == ("random_write", "IOPS")
    assert rounds.kept.rounds == pytest.approx((10_000.0,) * 5) and rounds.kept.steady


def test_the_client_summarises_the_rounds_a_phase_result_carried_as_the_helper_does() -> None:
    helper = outcome(1, RAMP)
    kept = helper.kept_rounds
    assert kept is not None
    event = PhaseFinished(
        "r", Phase.SEQ_WRITE, 1, 10.0, 100.0, 95.4, 0, 10**9, None, None, None, None,
        steady=kept.steady, rounds=kept.rounds, window=kept.window,
    )  # fmt: skip
    assert phase_summaries([event])[0].steady_rounds == phase_summaries([helper])[0].steady_rounds
    failed = PhaseFinished(
        "r", Phase.SEQ_WRITE, 2, 1.0, 0.0, 0.0, 0, 0, None, None, None, "cancelled",
        steady=False, rounds=(100.0,), window=Window(100.0, None, None),
    )  # fmt: skip
    assert phase_summaries([failed])[0].steady_rounds == ()  # no figures, no rounds either


def test_a_run_written_by_hand_reads_with_or_without_its_rounds() -> None:
    plain = [ResultValue("seq_write", "throughput", "MB/s", 512.0, passes=(510.0, 514.0))]
    assert split_rounds(plain) == (tuple(plain), ())
    # the rounds alone: the window is judged again from them
    alone = ResultValue("seq_write", "round_throughput", "MB/s", None, passes=RAMP)
    _figures, (rounds,) = split_rounds([*plain, alone])
    assert rounds.kept.repetition == 1 and rounds.kept.steady
    assert rounds.kept.window.mean == pytest.approx(100.0)
    assert rounds.kept.window.excursion_pct == pytest.approx(4.0)
    # rounds that moved nothing: never steady, and no excursion to show
    idle = ResultValue("seq_write", "round_throughput", "MB/s", None, passes=(0.0,) * 5)
    (still,) = split_rounds([idle])[1]
    assert not still.kept.steady and still.kept.window.excursion_pct is None
    assert still.kept.verdict() == "not steady in 5 rounds"
    # a window without its rounds shows nothing, and is never a figure either
    lone = ResultValue("seq_write (repetition 1)", "round_excursion", "%", 4.0)
    assert split_rounds([*plain, lone]) == (tuple(plain), ())


def test_rows_and_reading_are_each_others_inverse() -> None:
    kept = KeptRounds(3, (10.0, 20.0, 10.0), Window(13.33, None, None), False)
    (rounds,) = split_rounds(round_values("seq_write", kept))[1]
    assert rounds.kept == kept
    assert kept.verdict() == "not steady in 3 rounds, fewer than a window of 5"
    assert kept.window_start == 1
    slope = KeptRounds(1, (100.0,) * 5, Window(100.0, 12.0, 14.4), False)
    assert slope.verdict() == "not steady in 5 rounds, slope 14 %"

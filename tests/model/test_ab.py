"""A/B judgement: alternating order, the passes tested as a comparison's are, and when to add
a round."""

from __future__ import annotations

import pytest

from stripewise.model.ab import (
    ROUND_CAP,
    ABFigure,
    ABOutcome,
    ab_figures,
    needs_more_rounds,
    order,
    round_order,
)


def test_rounds_alternate_which_side_goes_first() -> None:
    assert order(3) == [True, False, False, True, True, False]
    assert round_order(3) == (False, True) and round_order(4) == (True, False)


def runs(*per_run: float, phase: str = "seq_read") -> list[dict[str, tuple[float, ...]]]:
    """One benchmark of one pass per figure."""
    return [{phase: (figure,)} for figure in per_run]


def test_overlapping_runs_are_within_noise_and_say_so() -> None:
    (figure,) = ab_figures(runs(510.0, 470.0, 530.0), runs(480.0, 500.0, 455.0))
    assert figure.verdict == "within noise"
    assert figure.evidence is not None and figure.evidence.low_pct < 0 < figure.evidence.high_pct
    assert figure.change_pct == pytest.approx(100 * (1510 / 3 - 1435 / 3) / (1435 / 3))
    sentence = figure.sentence()
    assert sentence.startswith(f"seq_read: {figure.evidence.interval_text()}, within noise")
    assert "no difference you can rely on" in sentence and "3 passes each" in sentence


def test_separated_runs_are_a_real_difference_and_too_few_cannot_tell() -> None:
    (faster,) = ab_figures(runs(610.0, 640.0, 625.0), runs(480.0, 500.0, 490.0))
    assert faster.verdict == "faster with the preset" and faster.change_pct > 25
    (slower,) = ab_figures(runs(300.0, 310.0, 305, phase="w"), runs(400.0, 420.0, 410, phase="w"))
    assert slower.verdict == "slower with the preset"
    (two,) = ab_figures(runs(610.0, 640.0), runs(480.0, 500.0))
    assert two.evidence is None and two.verdict == "can't tell: 2 passes each"
    assert "can't tell" in two.sentence()


def test_every_pass_of_every_run_counts_and_phases_are_holm_adjusted() -> None:
    """A benchmark of 3 repetitions gives 3 passes; the two phases are one family."""
    with_preset = [{"seq_read": (500.0, 520.0, 510.0), "seq_write": (300.0, 310.0, 305.0)}]
    without = [{"seq_read": (480.0, 470.0, 475.0)}, {"seq_read": (490.0,), "seq_write": (1.0,)}]
    (figure,) = ab_figures(with_preset, without)  # seq_write: not measured in the first run
    assert (figure.phase, figure.with_preset, figure.without) == (
        "seq_read",
        (500.0, 520.0, 510.0),
        (480.0, 470.0, 475.0, 490.0),
    )
    both = ab_figures(
        [{"a": (100.0, 101.0, 102.0), "b": (100.0, 104.0, 102.0)}],
        [{"a": (100.0, 101.0, 99.0), "b": (105.5, 109.5, 107.5)}],
    )
    assert all(f.evidence is not None for f in both)
    ranked = sorted(both, key=lambda f: f.evidence.p_value if f.evidence else 1.0)
    low, high = (f.evidence for f in ranked)
    assert low is not None and high is not None
    assert low.p_adjusted == pytest.approx(2 * low.p_value)
    assert high.p_adjusted == pytest.approx(max(high.p_value, 2 * low.p_value))


def test_more_rounds_while_an_interval_is_wider_than_the_target_up_to_the_cap() -> None:
    tight = ab_figures(runs(600.0, 601.0, 602.0), runs(500.0, 501.0, 502.0))
    wide = ab_figures(runs(600.0, 700.0, 520.0), runs(500.0, 560.0, 470.0))
    assert tight[0].narrow() and not wide[0].narrow()
    assert wide[0].narrow(target_pct=100.0)
    assert not needs_more_rounds(tight, 3, ROUND_CAP)
    assert needs_more_rounds(wide, 3, ROUND_CAP)
    assert not needs_more_rounds(wide, ROUND_CAP, ROUND_CAP), "the cap"
    assert needs_more_rounds(ab_figures(runs(1.0), runs(2.0)), 1, ROUND_CAP), "can't tell yet"


def test_the_outcome_says_how_many_rounds_it_ran_and_why_it_stopped() -> None:
    tight = tuple(ab_figures(runs(600.0, 601.0, 602.0), runs(500.0, 501.0, 502.0)))
    assert ABOutcome(tight, 3, 9).summary("X") == (
        "A/B of X: 3 rounds (6 benchmarks); every interval within ± 5 %:"
    )
    wide = tuple(ab_figures(runs(600.0, 700.0, 520.0), runs(500.0, 560.0, 470.0)))
    widest = wide[0].evidence.half_width_pct if wide[0].evidence else 0.0
    assert ABOutcome(wide, 9, 9).summary("X") == (
        "A/B of X: 9 rounds (18 benchmarks), the cap; not every interval came within ± 5 % "
        f"(the widest is ± {widest:.1f} %):"
    )
    assert ABFigure("x", (1.0,), (2.0,)).verdict == "can't tell: 1 pass each"

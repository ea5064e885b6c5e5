"""A/B judgement: alternating order, and differences inside the runs' spread called noise."""

from __future__ import annotations

from stripewise.model.ab import ABFigure, ab_figures, order


def test_rounds_alternate_which_side_goes_first() -> None:
    assert order(3) == [True, False, False, True, True, False]


def test_overlapping_runs_are_within_noise_and_say_so() -> None:
    figure = ABFigure("seq_read", (510.0, 470.0, 530.0), (480.0, 500.0, 455.0))
    assert figure.verdict == "within noise"
    assert "no difference you can rely on" in figure.sentence()
    assert round(figure.change_pct, 2) == 6.25  # medians 510 vs 480


def test_separated_runs_are_a_real_difference() -> None:
    faster = ABFigure("seq_read", (610.0, 640.0), (480.0, 500.0))
    assert faster.verdict == "faster with the preset" and faster.change_pct > 25
    slower = ABFigure("seq_write", (300.0, 310.0), (400.0, 420.0))
    assert slower.verdict == "slower with the preset"
    assert ABFigure("x", (1.0,), (2.0,)).verdict == "not enough runs to judge"


def test_figures_only_for_phases_both_sides_measured() -> None:
    figures = ab_figures(
        [{"seq_read": 500.0, "seq_write": 300.0}, {"seq_read": 520.0, "seq_write": 310.0}],
        [{"seq_read": 480.0}, {"seq_read": 470.0}],
    )
    assert [(f.phase, f.with_preset, f.without) for f in figures] == [
        ("seq_read", (500.0, 520.0), (480.0, 470.0))
    ]

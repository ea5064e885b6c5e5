"""A kept experiment's card says what it optimised in words: "Sequential read throughput",
not `seq_read:mb_s:`."""

from __future__ import annotations

from stripewise.gui.experiment_card import change_text
from stripewise.model.bench import Phase
from stripewise.model.experiment import Metric, Objective
from stripewise.model.experiment_result import ExperimentResult, Recommendation, Verdict


def _result(phase: Phase, metric: Metric) -> ExperimentResult:
    better = Recommendation(
        (("read_ahead_kb", 512),), Verdict.BETTER, "beyond noise", 12.3, (8.0, 16.6)
    )
    return ExperimentResult(Objective(phase, metric), metric.unit, (), None, better)


def test_the_card_names_the_objective_in_words() -> None:
    text = change_text(_result(Phase.SEQ_READ, Metric.MB_S))
    assert text.startswith("Sequential read throughput: this +12.3 %"), text
    iops = change_text(_result(Phase.RANDOM_READ, Metric.IOPS))
    assert iops.startswith("Random seeks IOPS: this"), iops
    assert ":mb_s" not in text and ":iops" not in iops

"""Two kept experiments of the same parameters (the same sweep before and after a hardware
change), value by value: shared by `stripewise experiment compare` and the Experiment page.

Each value both measured gets B's change against A with Welch's interval over the two points'
passes (model.verdict, as `history compare` judges runs), Holm's correction over the values
compared; then both recommendations. Experiments of other parameters, or judged by another
metric, are refused by name: their figures do not answer the same question. Benchmarks that
differ in their workload (block size, direct I/O, size...) are compared, and the differences
said beside the changes (`workload_differences`): a change may then be theirs, not the
hardware's.
"""

from __future__ import annotations

from dataclasses import dataclass

from stripewise.history.experiments import StoredExperiment
from stripewise.model.experiment import Values
from stripewise.model.experiment_result import ExperimentResult, Point, values_key
from stripewise.model.setting_labels import setting_label, setting_text
from stripewise.model.verdict import Evidence, cant_tell, holm, welch
from stripewise.protocol.spec import spec_to_json

__all__ = [
    "ComparedValue",
    "NotComparableError",
    "change_text",
    "comparable",
    "compare_results",
    "differences_text",
    "workload_differences",
]

# what a benchmark does, as the spec's wire names: the target may differ (the same sweep on
# new hardware); how often it is sampled does not change a figure
_WORKLOAD = (
    "engine", "phases", "size", "block_size", "random_block_size", "direct", "queue_depth",
    "streams", "steady_state", "precondition", "cpu_latency_us",
)  # fmt: skip


class NotComparableError(ValueError):
    """Two experiments whose figures do not answer the same question; the message says why."""


@dataclass(frozen=True)
class ComparedValue:
    """One combination of values; a side that did not measure it is None."""

    values: Values
    first: Point | None
    second: Point | None
    evidence: Evidence | None  # B against A, Holm-adjusted over the values compared

    def verdict(self, minimised: bool) -> str:
        """better | worse | noise | unknown, for a figure where more is better unless
        `minimised`."""
        if self.evidence is None:
            return "unknown"
        if not self.evidence.significant:
            return "noise"
        gained = self.evidence.change_pct < 0 if minimised else self.evidence.change_pct > 0
        return "better" if gained else "worse"


def comparable(first: StoredExperiment, second: StoredExperiment) -> None:
    """Raises NotComparableError naming why the two cannot be compared."""
    a, b = first.summary, second.summary
    if a.id == b.id:
        raise NotComparableError(f"experiment {a.id} is given twice: compare two experiments")
    if sorted(a.parameters) != sorted(b.parameters):
        raise NotComparableError(
            f"experiments {a.id} and {b.id} vary different parameters "
            f"({', '.join(a.parameters) or 'none'} against {', '.join(b.parameters) or 'none'}): "
            "compare experiments of the same parameters"
        )
    for stored in (first, second):
        if stored.result is None:
            raise NotComparableError(f"experiment {stored.summary.id} has no result to compare")
    a_objective, b_objective = first.design.objective, second.design.objective
    if a_objective != b_objective:
        raise NotComparableError(
            f"experiments {a.id} and {b.id} optimise different metrics "
            f"({a_objective.label} against {b_objective.label})"
        )


def workload_differences(first: StoredExperiment, second: StoredExperiment) -> list[str]:
    """What the two benchmarks did differently, besides the values varied: "Block size 1 MiB
    vs 4 KiB", "Direct I/O yes vs no"."""
    varied = {p.name for p in (*first.design.parameters, *second.design.parameters)}
    varied |= {"random_block_size"} if "block_size" in varied else set()
    a, b = spec_to_json(first.design.spec), spec_to_json(second.design.spec)
    return [
        f"{setting_label(f'spec.{key}')} {setting_text(f'spec.{key}', a.get(key))} vs "
        f"{setting_text(f'spec.{key}', b.get(key))}"
        for key in _WORKLOAD
        if key not in varied and a.get(key) != b.get(key)
    ]


def differences_text(first: StoredExperiment, second: StoredExperiment) -> str:
    """One sentence for the CLI and the GUI alike; empty when the benchmarks are the same."""
    differ = workload_differences(first, second)
    if not differ:
        return ""
    return (
        f"The benchmarks differ: {'; '.join(differ)}. A change may be theirs, not the "
        "hardware's or the settings'."
    )


def compare_results(first: ExperimentResult, second: ExperimentResult) -> list[ComparedValue]:
    """A's values in A's order, then those only B measured; Welch where both have passes."""
    ordered: dict[tuple[tuple[str, str], ...], list[Point | None]] = {}
    for side, result in enumerate((first, second)):
        for measured in result.points:
            pair = ordered.setdefault(_key(measured.values), [None, None])
            pair[side] = pair[side] or measured
    tested: dict[int, Evidence] = {}
    pairs = list(ordered.values())
    for index, (a, b) in enumerate(pairs):
        if a is not None and b is not None:
            evidence = welch(a.passes, b.passes)
            if evidence is not None:
                tested[index] = evidence
    adjusted = dict(zip(tested, holm(list(tested.values())), strict=True))
    compared: list[ComparedValue] = []
    for index, (a, b) in enumerate(pairs):
        either = a if a is not None else b
        assert either is not None  # each pair holds the point it was made for
        compared.append(ComparedValue(either.values, a, b, adjusted.get(index)))
    return compared


def _key(values: Values) -> tuple[tuple[str, str], ...]:
    """Values matched by name, whatever order each design listed them in."""
    return tuple(sorted(values_key(values)))


_MARKS = {"better": "* better", "worse": "* worse", "noise": "~"}


def change_text(row: ComparedValue, minimised: bool) -> str:
    """`+25.0 % ± 3.1 % (95 %) * better`, `~` for noise, `~ (Holm)` for a change that holds
    alone but not among the values compared; empty where one side did not measure it."""
    if row.first is None or row.second is None:
        return ""
    if row.evidence is None:
        first, second = len(row.first.passes), len(row.second.passes)
        return cant_tell(first, second, here="in the first", there="in the second")
    mark = "~ (Holm)" if row.evidence.held_alone else _MARKS[row.verdict(minimised)]
    return f"{row.evidence.interval_text()} {mark}"

"""`stripewise experiment compare A B`: two experiments of the same parameters (the same
sweep before and after a hardware change), value by value.

Each value both measured gets B's change against A with Welch's interval over the two points'
passes (model.verdict, as `history compare` judges runs), Holm's correction over the values
compared; then both recommendations. Experiments of other parameters, or judged by another
metric, are refused by name: their figures do not answer the same question.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stripewise.cli.errors import CliError
from stripewise.cli.history_format import format_table
from stripewise.history.experiments import StoredExperiment
from stripewise.model.experiment import Values, label
from stripewise.model.experiment_result import ExperimentResult, Point, values_key
from stripewise.model.verdict import Evidence, cant_tell, holm, welch
from stripewise.protocol.experiment import result_to_json


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
    """Raises CliError (exit 2) naming why the two cannot be compared."""
    a, b = first.summary, second.summary
    if a.id == b.id:
        raise CliError(f"experiment {a.id} is given twice: compare two experiments")
    if sorted(a.parameters) != sorted(b.parameters):
        raise CliError(
            f"experiments {a.id} and {b.id} vary different parameters "
            f"({', '.join(a.parameters) or 'none'} against {', '.join(b.parameters) or 'none'}): "
            "compare experiments of the same parameters"
        )
    for stored in (first, second):
        if stored.result is None:
            raise CliError(f"experiment {stored.summary.id} has no result to compare")
    a_objective, b_objective = first.design.objective, second.design.objective
    if a_objective != b_objective:
        raise CliError(
            f"experiments {a.id} and {b.id} optimise different metrics "
            f"({a_objective.label} against {b_objective.label})"
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


# --- text and JSON -------------------------------------------------------------------------


def compare_text(first: StoredExperiment, second: StoredExperiment) -> str:
    assert first.result is not None and second.result is not None  # comparable() says so
    a, b = first.summary, second.summary
    result = first.result
    rows = compare_results(first.result, second.result)
    minimised = result.objective.metric.minimised
    tested = sum(1 for row in rows if row.evidence is not None)
    lines = [
        f"Experiments compared: #{a.id} {a.name} ({a.host}, {_day(first)}) "
        f"and #{b.id} {b.name} ({b.host}, {_day(second)})",
        f"{result.objective.label} ({result.unit}); the change is #{b.id} against #{a.id}, "
        f"Welch's 95 % interval, Holm's correction over {tested} values",
        "",
        format_table(
            ["Values", f"#{a.id} mean (95 %)", f"#{b.id} mean (95 %)", "Change"],
            [
                [
                    label(row.values),
                    _mean(row.first),
                    _mean(row.second),
                    _change(row, minimised),
                ]
                for row in rows
            ],
        ),
        "",
    ]
    for stored in (first, second):
        rec = stored.result.recommendation if stored.result else None
        if rec is not None:
            lines.append(f"#{stored.summary.id} recommends ({rec.verdict.value}): {rec.reason}")
    return "\n".join(lines)


def compare_json(first: StoredExperiment, second: StoredExperiment) -> dict[str, Any]:
    assert first.result is not None and second.result is not None  # comparable() says so
    minimised = first.result.objective.metric.minimised
    return {
        "experiments": [first.summary.id, second.summary.id],
        "metric": result_to_json(first.result)["metric"],
        "values": [
            {
                "values": dict(row.values),
                "first": _point_json(row.first),
                "second": _point_json(row.second),
                "change_pct": None if row.evidence is None else row.evidence.change_pct,
                "ci95_pct": None
                if row.evidence is None
                else [row.evidence.low_pct, row.evidence.high_pct],
                "p_adjusted": None if row.evidence is None else row.evidence.p_adjusted,
                "verdict": row.verdict(minimised),
            }
            for row in compare_results(first.result, second.result)
        ],
        "recommendations": [
            result_to_json(stored.result)["recommendation"]
            for stored in (first, second)
            if stored.result is not None
        ],
    }


def _point_json(point: Point | None) -> dict[str, Any] | None:
    if point is None:
        return None
    ci = point.ci95
    return {
        "mean": point.mean,
        "ci95": None if ci is None else list(ci),
        "passes": len(point.passes),
    }


def _mean(point: Point | None) -> str:
    if point is None:
        return "not measured"
    if point.mean is None:
        return "-"
    ci = point.ci95
    interval = f" ({ci[0]:,.1f}-{ci[1]:,.1f})" if ci else ""
    return f"{point.mean:,.1f}{interval} n={len(point.passes)}"


_MARKS = {"better": "* better", "worse": "* worse", "noise": "~"}


def _change(row: ComparedValue, minimised: bool) -> str:
    if row.first is None or row.second is None:
        return ""
    if row.evidence is None:
        return cant_tell(len(row.first.passes), len(row.second.passes))
    mark = "~ (Holm)" if row.evidence.held_alone else _MARKS[row.verdict(minimised)]
    return f"{row.evidence.interval_text()} {mark}"


def _day(stored: StoredExperiment) -> str:
    return stored.summary.created_at.astimezone().strftime("%Y-%m-%d")

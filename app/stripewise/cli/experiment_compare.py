"""`stripewise experiment compare A B` as text: the comparison itself (which experiments can be
compared, each value's change with its interval) is history's
(`history.experiment_compare`), shared with the Experiment page."""

from __future__ import annotations

from typing import Any

from stripewise.cli.errors import CliError
from stripewise.cli.history_format import format_table
from stripewise.history.experiment_compare import (
    NotComparableError,
    change_text,
    compare_results,
    differences_text,
    workload_differences,
)
from stripewise.history.experiment_compare import comparable as check_comparable
from stripewise.history.experiments import StoredExperiment
from stripewise.model.experiment import label
from stripewise.model.experiment_result import Point
from stripewise.model.units import interval_text
from stripewise.model.wording import count_noun
from stripewise.protocol.experiment import result_to_json


def comparable(first: StoredExperiment, second: StoredExperiment) -> None:
    """Raises CliError (exit 2) naming why the two cannot be compared."""
    try:
        check_comparable(first, second)
    except NotComparableError as exc:
        raise CliError(str(exc)) from None


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
        f"Welch's 95 % interval, Holm's correction over {count_noun(tested, 'value')}",
        *filter(None, [differences_text(first, second)]),
        "",
        format_table(
            ["Values", f"#{a.id} mean (95 %)", f"#{b.id} mean (95 %)", "Change"],
            [
                [
                    label(row.values),
                    _mean(row.first),
                    _mean(row.second),
                    change_text(row, minimised),
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


def _mean(point: Point | None) -> str:
    if point is None:
        return "not measured"
    if point.mean is None:
        return "-"
    ci = point.ci95
    interval = f" ({interval_text(*ci)})" if ci else ""
    return f"{point.mean:,.1f}{interval} n={len(point.passes)}"


def _day(stored: StoredExperiment) -> str:
    return stored.summary.created_at.astimezone().strftime("%Y-%m-%d")


# the `--json` document: a JSON object for the outside, built here where it is written
def compare_json(first: StoredExperiment, second: StoredExperiment) -> dict[str, Any]:
    assert first.result is not None and second.result is not None  # comparable() says so
    minimised = first.result.objective.metric.minimised
    return {
        "experiments": [first.summary.id, second.summary.id],
        "workload_differences": workload_differences(first, second),
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

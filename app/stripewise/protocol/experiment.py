"""An experiment's design and result as JSON: the `experiment_result` event the CLI streams
(docs/experiments.md), and what the history keeps of an experiment. One writer and one reader
for each; the reader is lenient about keys it does not know (a newer Stripewise may add some)
and refuses, naming the key, what it cannot read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from stripewise.model.bench import Phase
from stripewise.model.experiment import Design, Metric, Objective, Parameter, Value, Values
from stripewise.model.experiment_result import (
    Drift,
    ExperimentResult,
    Point,
    Recommendation,
    Verdict,
)
from stripewise.protocol.spec import spec_from_json, spec_to_json
from stripewise.protocol.wire import ProtocolError

RESULT_TYPE = "experiment_result"


class ExperimentFormatError(ValueError):
    """A stored experiment that cannot be read; the message names the key."""


# --- design -----------------------------------------------------------------------------------
def design_to_json(design: Design) -> dict[str, Any]:
    return {
        "target": design.target,
        "spec": spec_to_json(design.spec),
        "vary": [{"name": p.name, "values": list(p.values)} for p in design.parameters],
        "metric": {"phase": design.objective.phase.value, "metric": design.objective.metric.value},
        "devices": list(design.devices),
        "half_width_pct": design.half_width_pct,
        "max_passes": design.max_passes,
        "latency_target_us": design.latency_target_us,
        "search": None if design.search is None else list(design.search),
    }


def design_from_json(data: object) -> Design:
    doc = _object(data, "design")
    try:
        spec = spec_from_json(doc.get("spec"))
    except ProtocolError as exc:
        raise ExperimentFormatError(f"design.spec: {exc}") from None
    vary = _list(doc.get("vary", []), "design.vary")
    parameters = tuple(
        Parameter(
            _text(_object(v, "design.vary[]").get("name"), "design.vary[].name"),
            tuple(_value(x, "design.vary[].values[]") for x in _list(v.get("values"), "values")),
        )
        for v in vary
    )
    search = doc.get("search")
    bounds = None if search is None else _list(search, "design.search")
    target_us = doc.get("latency_target_us")
    return Design(
        target=_text(doc.get("target"), "design.target"),
        spec=spec,
        parameters=parameters,
        objective=_objective(doc.get("metric"), "design.metric"),
        devices=tuple(
            _text(d, "design.devices[]") for d in _list(doc.get("devices", []), "devices")
        ),
        half_width_pct=_number(doc.get("half_width_pct", 5.0), "design.half_width_pct"),
        max_passes=int(_number(doc.get("max_passes", 9), "design.max_passes")),
        latency_target_us=None if target_us is None else _number(target_us, "latency_target_us"),
        search=None if bounds is None else (int(bounds[0]), int(bounds[1])),
    )


# --- result -----------------------------------------------------------------------------------
def result_to_json(result: ExperimentResult) -> dict[str, Any]:
    """The `experiment_result` event's keys."""
    base = result.baseline
    rec = result.recommendation
    out: dict[str, Any] = {
        "event": RESULT_TYPE,
        "experiment": result.experiment,
        "metric": {
            "phase": result.objective.phase.value,
            "metric": result.objective.metric.value,
            "unit": result.unit,
        },
        "points": [point_to_json(p) for p in result.points],
        "baseline": None if base is None else point_to_json(base),
        "drift_pct": result.drift_pct,
        "drift_half_width_pct": None if result.drift is None else result.drift.half_width_pct,
        "recommendation": {
            "values": dict(rec.values),
            "change_pct": rec.change_pct,
            "ci95_pct": None if rec.ci95_pct is None else list(rec.ci95_pct),
            "verdict": rec.verdict.value,
            "reason": rec.reason,
        }
        # only when known: a result saved before it was written round-trips as it was
        | ({} if rec.change_of is None else {"change_of": dict(rec.change_of)}),
        "restored": result.restored,
        "half_width_pct": result.half_width_pct,
        "max_passes": result.max_passes,
    }
    return out | dict(result.extra)


def point_to_json(point: Point) -> dict[str, Any]:
    ci, p99 = point.ci95, point.p99_ci95
    return {
        "values": dict(point.values),
        "runs": list(point.runs),
        "passes": len(point.passes),
        "mean": point.mean,
        "ci95": None if ci is None else list(ci),
        "pass_values": list(point.passes),
        "p99_us": point.p99_mean,
        "p99_ci95": None if p99 is None else list(p99),
        "p99_pass_values": list(point.p99_us),
        "baseline": point.baseline,
    } | ({"guards": list(point.guards)} if point.guards else {})  # as saved before they were


_RESULT_KEYS = {
    "event", "experiment", "metric", "points", "baseline", "drift_pct", "drift_half_width_pct",
    "recommendation",
    "restored", "half_width_pct", "max_passes",
}  # fmt: skip


def result_from_json(data: object) -> ExperimentResult:
    doc = _object(data, "experiment_result")
    metric = _object(doc.get("metric"), "metric")
    rec = _object(doc.get("recommendation"), "recommendation")
    interval = rec.get("ci95_pct")
    low_high = None if interval is None else _list(interval, "recommendation.ci95_pct")
    change = rec.get("change_pct")
    change_of = rec.get("change_of")  # absent from results saved before it was written
    drift_pct = doc.get("drift_pct")
    drift_width = doc.get("drift_half_width_pct")
    try:
        verdict = Verdict(str(rec.get("verdict")))
    except ValueError:
        raise ExperimentFormatError(f"recommendation.verdict: {rec.get('verdict')!r}") from None
    return ExperimentResult(
        objective=_objective(metric, "metric"),
        unit=_text(metric.get("unit", ""), "metric.unit"),
        points=_with_baseline(
            tuple(_point(p) for p in _list(doc.get("points", []), "points")), doc.get("baseline")
        ),
        drift=None
        if drift_pct is None
        else Drift(
            _number(drift_pct, "drift_pct"),
            None if drift_width is None else _number(drift_width, "drift_half_width_pct"),
        ),
        recommendation=Recommendation(
            values=_values(rec.get("values", {}), "recommendation.values"),
            verdict=verdict,
            reason=_text(rec.get("reason", ""), "recommendation.reason"),
            change_pct=None if change is None else _number(change, "recommendation.change_pct"),
            ci95_pct=None
            if low_high is None
            else (_number(low_high[0], "ci95_pct[0]"), _number(low_high[1], "ci95_pct[1]")),
            change_of=None if change_of is None else _values(change_of, "recommendation.change_of"),
        ),
        restored=bool(doc.get("restored", True)),
        experiment=_optional_int(doc.get("experiment"), "experiment"),
        half_width_pct=_number(doc.get("half_width_pct", 5.0), "half_width_pct"),
        max_passes=int(_number(doc.get("max_passes", 9), "max_passes")),
        extra={k: v for k, v in doc.items() if k not in _RESULT_KEYS},
    )


def _with_baseline(points: tuple[Point, ...], baseline: object) -> tuple[Point, ...]:
    """The points with the starting settings' one marked as the `baseline` key names it (a
    result written without each point's own mark), added when not among them."""
    if baseline is None or any(p.baseline for p in points):
        return points
    start = _values(_object(baseline, "baseline").get("values", {}), "baseline.values")
    if any(p.values == start for p in points):
        return tuple(replace(p, baseline=True) if p.values == start else p for p in points)
    return (replace(_point(baseline), baseline=True), *points)


def _point(data: object) -> Point:
    doc = _object(data, "points[]")
    return Point(
        values=_values(doc.get("values", {}), "points[].values"),
        passes=tuple(
            _number(x, "points[].pass_values[]")
            for x in _list(doc.get("pass_values", []), "pass_values")
        ),
        runs=tuple(int(_number(x, "points[].runs[]")) for x in _list(doc.get("runs", []), "runs")),
        p99_us=tuple(
            _number(x, "p99_pass_values[]") for x in _list(doc.get("p99_pass_values", []), "p99")
        ),
        baseline=bool(doc.get("baseline", False)),
        guards=tuple(
            _text(x, "points[].guards[]") for x in _list(doc.get("guards", []), "points[].guards")
        ),
    )


# --- readers ----------------------------------------------------------------------------------
def _objective(data: object, where: str) -> Objective:
    doc = _object(data, where)
    try:
        return Objective(Phase(str(doc.get("phase"))), Metric(str(doc.get("metric"))))
    except ValueError:
        raise ExperimentFormatError(
            f"{where}: {doc.get('phase')!r}:{doc.get('metric')!r}"
        ) from None


def _values(data: object, where: str) -> Values:
    doc = _object(data, where)
    return tuple((str(name), _value(value, f"{where}.{name}")) for name, value in doc.items())


def _value(data: object, where: str) -> Value:
    if isinstance(data, bool) or not isinstance(data, int | str):
        raise ExperimentFormatError(f"{where}: a number or a name, not {data!r}")
    return data


def _object(data: object, where: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ExperimentFormatError(f"{where}: an object")
    return data


def _list(data: object, where: str) -> list[Any]:
    if not isinstance(data, list):
        raise ExperimentFormatError(f"{where}: a list")
    return data


def _text(data: object, where: str) -> str:
    if not isinstance(data, str):
        raise ExperimentFormatError(f"{where}: text")
    return data


def _number(data: object, where: str) -> float:
    if isinstance(data, bool) or not isinstance(data, int | float):
        raise ExperimentFormatError(f"{where}: a number")
    return float(data)


def _optional_int(data: object, where: str) -> int | None:
    return None if data is None else int(_number(data, where))

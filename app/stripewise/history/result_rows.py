"""Rows of the results table and the `ResultValue`s they hold: one writer and one reader for
measured, live and imported runs alike. Missing figures stay NULL, never 0.

A phase whose repetitions failed or were cancelled keeps why in one more row, with no schema
change: metric `errors` (ERRORS), value NULL, `repetitions` how many stopped, `flags` their
errors in run order. Read back (`with_errors`), it is taken out of the figures and its errors
put on each figure of the phase (`ResultValue.errors`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TypedDict

from stripewise.history.json_values import finite
from stripewise.model.run import ResultValue, RunStatus

ERRORS = "errors"  # the metric of a phase's errors row (never a figure)
_STOPPED = (RunStatus.CANCELLED, RunStatus.FAILED)


class ResultRow(TypedDict):
    """One row of the results table, as inserted."""

    run_id: int
    phase: str
    metric: str
    unit: str
    value: float | None
    min_value: float | None
    max_value: float | None
    repetitions: int
    passes: list[float | None] | None
    flags: list[str] | None
    source_unit: str | None


def result_params(run_id: int, values: Sequence[ResultValue]) -> list[ResultRow]:
    """A run's results as rows of the results table (measured and imported runs alike)."""
    values = _with_error_rows(values)
    return [
        {
            "run_id": run_id,
            "phase": v.phase,
            "metric": v.metric,
            "unit": v.unit,
            "value": finite(v.value),
            "min_value": finite(v.min_value),
            "max_value": finite(v.max_value),
            "repetitions": v.repetitions,
            "passes": [finite(p) for p in v.passes] or None,
            "flags": list(v.flags) or None,
            "source_unit": v.source_unit or None,
        }
        for v in values
    ]


# The columns of a results row: its run's id, then the fields `result_fields` gives.
RESULT_COLUMNS = tuple(ResultRow.__annotations__)

# One results row's values but its run's id, in RESULT_COLUMNS order: an import's batch of
# thousands is written as these (`BulkInsert.write_values`), without a dict per row, and an
# import parsed in a second process sends them as they are (history.import_parse).
ResultFields = tuple[
    str,
    str,
    str,
    float | None,
    float | None,
    float | None,
    int,
    list[float | None] | None,
    list[str] | None,
    str | None,
]


def result_fields(values: Sequence[ResultValue]) -> list[ResultFields]:
    """The rows `result_params` makes, as tuples without the run's id, the figures as the
    history stores and hands them back (floats); the three are checked together (most are
    finite: `finite` is called only when one is not)."""
    isfinite = math.isfinite
    rows: list[ResultFields] = []
    for v in _with_error_rows(values):
        value, low, high = v.value, v.min_value, v.max_value
        if (
            (value is not None and not isfinite(value))
            or (low is not None and not isfinite(low))
            or (high is not None and not isfinite(high))
        ):
            value, low, high = finite(value), finite(low), finite(high)
        rows.append(
            (
                v.phase,
                v.metric,
                v.unit,
                None if value is None else float(value),  # as the column stores it
                None if low is None else float(low),
                None if high is None else float(high),
                v.repetitions,
                [finite(p) for p in v.passes] if v.passes else None,
                list(v.flags) if v.flags else None,
                v.source_unit or None,
            )
        )
    return rows


def result_value(row: Any) -> ResultValue:
    return ResultValue(
        phase=row.phase,
        metric=row.metric,
        unit=row.unit,
        value=row.value,
        min_value=row.min_value,
        max_value=row.max_value,
        repetitions=row.repetitions,
        passes=tuple(p for p in row.passes or () if p is not None),
        flags=tuple(row.flags or ()),
        source_unit=row.source_unit or "",
    )


def _with_error_rows(values: Sequence[ResultValue]) -> Sequence[ResultValue]:
    """The values, each phase's errors row after its first figure that carries them."""
    if not any(v.errors for v in values):
        return values
    rows: list[ResultValue] = []
    said: set[str] = set()
    for v in values:
        rows.append(v)
        if v.errors and v.phase not in said:
            said.add(v.phase)
            rows.append(
                ResultValue(v.phase, ERRORS, "", None, repetitions=len(v.errors), flags=v.errors)
            )
    return rows


def with_errors(
    values: Sequence[ResultValue], status: RunStatus, source: str
) -> tuple[ResultValue, ...]:
    """A run's results as read: its errors rows taken out, their errors on the phase's
    figures. A measured run cancelled or failed before errors were kept says its status on
    each phase none of whose figures was measured: the helper stops a run at the first phase
    that does not end well, with that phase's word as the run's status (its reason unknown)."""
    errors = {v.phase: v.flags for v in values if v.metric == ERRORS}
    figures = [v for v in values if v.metric != ERRORS]
    if not errors and status in _STOPPED and source == "measured":
        measured = {v.phase for v in figures if v.value is not None}
        errors = {v.phase: (status.value,) for v in figures if v.phase not in measured}
    if not errors:
        return tuple(figures)
    return tuple(replace(v, errors=errors.get(v.phase, v.errors)) for v in figures)

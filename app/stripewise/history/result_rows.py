"""Rows of the results table and the `ResultValue`s they hold: one writer and one reader for
measured, live and imported runs alike. Missing figures stay NULL, never 0."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypedDict

from stripewise.history.json_values import finite
from stripewise.model.run import ResultValue


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
    for v in values:
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

"""Runs as files other tools read: JSON with everything, CSV with one row per result.

Missing figures stay missing (JSON null, empty CSV cell) so a spreadsheet never averages in a
zero that was never measured.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from stripewise.history.store import SampleRow
from stripewise.model.run import RunDetail

JSON_FORMAT = "stripewise-run"
JSON_FORMAT_VERSION = 1
CSV_COLUMNS = (
    "run_id",
    "run_name",
    "phase",
    "metric",
    "value",
    "min",
    "max",
    "repetitions",
    "unit",
)


def export_run_json(detail: RunDetail, samples: Sequence[SampleRow]) -> str:
    """The whole run (metadata, spec, context, results, samples) as indented JSON."""
    s = detail.summary
    document = {
        "format": JSON_FORMAT,
        "format_version": JSON_FORMAT_VERSION,
        "run": {
            **detail.extra,  # first, so it can never shadow the fields below
            "id": s.id,
            "name": s.name,
            "status": s.status.value,
            "host": s.host,
            "target": s.target,
            "engine": s.engine,
            "engine_version": s.engine_version,
            "started_at": _iso(s.started_at),
            "finished_at": _iso(s.finished_at),
            "duration_s": s.duration_s,
            "tags": list(s.tags),
            "notes": detail.notes,
            "source": detail.source,
            "sample_count": detail.sample_count,
        },
        "spec": detail.spec,
        "context": detail.context,
        "results": [
            {
                "phase": r.phase,
                "metric": r.metric,
                "unit": r.unit,
                "value": r.value,
                "min": r.min_value,
                "max": r.max_value,
                "repetitions": r.repetitions,
            }
            for r in detail.results
        ],
        "samples": [
            {
                "seq": x.seq,
                "t_s": x.t_s,
                "phase": x.phase,
                "repetition": x.repetition,
                "data": x.data,
            }
            for x in samples
        ],
    }
    return (
        json.dumps(_jsonable(document), indent=2, ensure_ascii=False, allow_nan=False, default=str)
        + "\n"
    )


def export_run_csv(detail: RunDetail) -> str:
    """One row per result with a header row; `\\n` line ends (a Linux tool, read by pandas)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    s = detail.summary
    for r in detail.results:
        writer.writerow(
            (
                s.id,
                s.name,
                r.phase,
                r.metric,
                _cell(r.value),
                _cell(r.min_value),
                _cell(r.max_value),
                r.repetitions,
                r.unit,
            )
        )
    return buffer.getvalue()


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _cell(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return ""
    return repr(float(value))


def _jsonable(value: Any) -> Any:
    """Datetimes to ISO text and non-finite floats to null, at any depth of spec/context."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, datetime):
        return value.isoformat()
    return value

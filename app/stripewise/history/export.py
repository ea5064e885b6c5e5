"""Runs and comparisons as files other tools read: JSON with everything, CSV with one row
per result (HTML reports are in `report_html`).

Missing figures stay missing (JSON null, empty CSV cell) so a spreadsheet never averages in a
zero that was never measured.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from stripewise.history.run_row import stored_spec
from stripewise.history.store import SampleRow
from stripewise.model.compare import Comparison, MetricRow, Spread, count_tested
from stripewise.model.phase_stop import stopped
from stripewise.model.run_context import JsonObject
from stripewise.model.run_detail import RunDetail
from stripewise.model.setting_labels import setting_label, setting_text
from stripewise.model.verdict import CONFIDENCE, MIN_PASSES, Evidence

JSON_FORMAT = "stripewise-run"
JSON_FORMAT_VERSION = 1
COMPARISON_FORMAT = "stripewise-comparison"
COMPARISON_FORMAT_VERSION = 1
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
    "stopped",  # added later, so last: `cancelled` or `failed` for a phase that did not end well
)


def _record(detail: RunDetail) -> JsonObject:
    """What the history keeps about a run beside its summary: its key, the baseline mark,
    its host, and its place in a group run."""
    record: JsonObject = {
        "uuid": detail.uuid,
        "baseline": detail.summary.baseline,
        "host_info": None if detail.host_info is None else asdict(detail.host_info),
    }
    if detail.host_runs:
        record["host_runs"] = [asdict(run) for run in detail.host_runs]
    if detail.parent_run_id is not None:
        record |= {"parent_run_id": detail.parent_run_id, "host_label": detail.host_label}
    return record


def export_run_json(detail: RunDetail, samples: Sequence[SampleRow]) -> str:
    """The whole run (metadata, spec, context, results, samples) as indented JSON."""
    s = detail.summary
    document = {
        "format": JSON_FORMAT,
        "format_version": JSON_FORMAT_VERSION,
        "run": {
            **_record(detail),  # first, so it can never shadow the fields below
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
        "spec": stored_spec(detail.spec, detail.options),
        "context": detail.context.to_json(),
        "results": [
            {
                "phase": r.phase,
                "metric": r.metric,
                "unit": r.unit,
                "value": r.value,
                "min": r.min_value,
                "max": r.max_value,
                "repetitions": r.repetitions,
                "passes": list(r.passes),
                "flags": list(r.flags),
                # a phase whose repetitions did not all end well: `cancelled` or `failed`,
                # and each one's error
                "stopped": stopped(r.errors) or None,
                "errors": list(r.errors),
            }
            for r in detail.results
        ],
        # a steady-state run's rounds (model/rounds_kept.py): never among its results
        **({"rounds": [rounds.to_json() for rounds in detail.rounds]} if detail.rounds else {}),
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


def export_group_json(
    detail: RunDetail,
    samples: Sequence[SampleRow],
    hosts: Sequence[tuple[RunDetail, Sequence[SampleRow]]],
) -> str:
    """A group run: the parent's document (its results are the total) with `hosts`, each
    host's run as its own `run`, `results` and `samples` (docs/protocol.md, "Group runs")."""
    document = json.loads(export_run_json(detail, samples))
    document["hosts"] = []
    for host_detail, host_samples in hosts:
        host_document = json.loads(export_run_json(host_detail, host_samples))
        for key in ("format", "format_version", "spec"):  # the group's, said once above
            host_document.pop(key, None)
        document["hosts"].append(host_document)
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


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
                stopped(r.errors),
            )
        )
    return buffer.getvalue()


def beyond_noise(verdict: str) -> bool | None:
    """better/worse: True; noise: False; baseline, nothing to compare or can't tell: None."""
    return None if verdict in ("", "unknown") else verdict != "noise"


def verdict_rule(c: Comparison) -> JsonObject:
    """How the verdicts were reached, for a reader of the file (docs/history.md)."""
    return {
        "test": "welch_t",
        "confidence": CONFIDENCE,
        "min_passes": MIN_PASSES,
        "multiplicity": "holm",
        "tests": count_tested(c),
    }


def comparison_document(c: Comparison) -> JsonObject:
    """The comparison as plain JSON values (docs/history.md describes the shape)."""
    return {
        "format": COMPARISON_FORMAT,
        "format_version": COMPARISON_FORMAT_VERSION,
        "baseline": c.baseline.summary.id,
        "runs": [
            {
                "id": run.summary.id,
                "name": run.summary.name,
                "host": run.summary.host,
                "started_at": _iso(run.summary.started_at),
                "told_apart": told,  # what tells it from runs of its name; "" if nothing must
            }
            for run, told in zip(c.runs, c.told_apart, strict=True)
        ],
        "verdict_rule": verdict_rule(c),
        "rows": [_row_json(row, c.baseline_index) for row in c.rows],
        "context": [
            {
                "key": d.key,
                "group": d.group,
                "values": list(d.values),
                "label": setting_label(d.key),  # as the Benchmark form names it
                "texts": [setting_text(d.key, v) for v in d.values],  # with units
            }
            for d in c.context
        ],
        "sweep": None
        if c.sweep is None
        else {
            "key": c.sweep.key,
            "label": c.sweep.label,
            "unit": c.sweep.unit,
            "values": list(c.sweep.values),
        },
    }


def _row_json(row: MetricRow, baseline: int) -> JsonObject:
    return {
        "phase": row.phase,
        "metric": row.metric,
        "unit": row.unit,
        "values": list(row.values),
        "spreads": [_spread_json(spread) for spread in row.spreads],
        "changes_pct": list(row.changes_pct),
        "verdicts": list(row.verdicts),
        "beyond_noise": [beyond_noise(verdict) for verdict in row.verdicts],
        "passes": [list(passes) for passes in row.passes],
        "intervals": [_interval_json(evidence) for evidence in row.evidence],
        "verdict_texts": [
            "" if not verdict else row.verdict_text(i, baseline)
            for i, verdict in enumerate(row.verdicts)
        ],
        # what the GUI, `history compare` and the report show: the means the verdict tests
        "means": [row.mean(i) for i in range(len(row.values))],
        "shown_values": list(row.shown_values),
        "shown_statistics": [row.statistic(i) or None for i in range(len(row.values))],
        "shown_changes_pct": list(row.shown_changes_pct),
        "caveats": [row.caveat(i) or None for i in range(len(row.values))],
        "stopped": [row.stopped(i) or None for i in range(len(row.values))],
    }


def _interval_json(evidence: Evidence | None) -> JsonObject | None:
    if evidence is None:
        return None
    return {
        "change_pct": evidence.change_pct,
        "half_width_pct": evidence.half_width_pct,
        "low_pct": evidence.low_pct,
        "high_pct": evidence.high_pct,
        "confidence": evidence.confidence,
        "p_value": evidence.p_value,
        "p_adjusted": evidence.p_adjusted,
        "df": evidence.df,
        "passes": list(evidence.passes),
    }


def _spread_json(spread: Spread | None) -> JsonObject | None:
    if spread is None:
        return None
    return {"low": spread.low, "high": spread.high, "source": spread.source}


def export_comparison_json(c: Comparison) -> str:
    document = _jsonable(comparison_document(c))
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"


def comparison_csv_header(c: Comparison) -> list[str]:
    """phase, metric, unit, then per run: its value (headed `#id name`), spread, change; then
    per run the evidence; then per run its mean and why it is not compared (each added later,
    so it follows every column that was there before)."""
    header = ["phase", "metric", "unit"]
    for run in c.runs:
        tag = f"#{run.summary.id}"
        header += [
            f"{tag} {run.summary.name}",
            f"{tag} spread low",
            f"{tag} spread high",
            f"{tag} change %",
            f"{tag} beyond noise",
        ]
    for run in c.runs:
        tag = f"#{run.summary.id}"
        header += [
            f"{tag} passes",
            f"{tag} tested change %",
            f"{tag} interval ± %",
            f"{tag} p (Holm)",
            f"{tag} verdict",
        ]
    for run in c.runs:  # added with the means shown and the notes of what is not compared
        tag = f"#{run.summary.id}"
        header += [f"{tag} mean", f"{tag} not comparable"]
    header += [f"#{run.summary.id} stopped" for run in c.runs]  # cancelled or failed
    return header


def export_comparison_csv(c: Comparison) -> str:
    """One row per phase/metric; the baseline's change, noise and evidence cells stay empty."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(comparison_csv_header(c))
    for row in c.rows:
        cells = [row.phase, row.metric, row.unit]
        for value, spread, change, verdict in zip(
            row.values, row.spreads, row.changes_pct, row.verdicts, strict=True
        ):
            flag = beyond_noise(verdict)
            cells += [
                _cell(value),
                _cell(spread.low if spread else None),
                _cell(spread.high if spread else None),
                _cell(change),
                "" if flag is None else str(flag).lower(),
            ]
        for i, (count, evidence, verdict) in enumerate(
            zip(row.pass_counts, row.evidence, row.verdicts, strict=True)
        ):
            cells += [
                str(count) if row.values[i] is not None else "",
                _cell(evidence.change_pct if evidence else None),
                _cell(evidence.half_width_pct if evidence else None),
                _cell(evidence.p_adjusted if evidence else None),
                row.verdict_text(i, c.baseline_index) if verdict else "",
            ]
        for i in range(len(row.values)):
            cells += [_cell(row.mean(i)), row.caveat(i)]
        cells += [row.stopped(i) for i in range(len(row.values))]
        writer.writerow(cells)
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

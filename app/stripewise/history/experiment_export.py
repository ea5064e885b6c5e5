"""A kept experiment as files: a self-contained HTML report with its charts, CSV with a row
per point, JSON with the design and the result (docs/experiments.md, "Export").

The HTML page is report_html's (inline CSS and SVG, nothing fetched, everything from the
database escaped), its charts svg_chart's: the metric against the parameter with each point's
95 % interval as an error bar (a log axis when the values double, as sizes do); for a grid of
two parameters, one line per value of the second and a heat map table of the metric and of
p99 latency. Missing figures stay missing: an empty CSV cell, a JSON null, a dash.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from datetime import datetime
from html import escape
from typing import Any

from stripewise.history.experiments import StoredExperiment
from stripewise.history.report_html import _number, _page, _table, _td
from stripewise.history.svg_chart import bar_or_xy_chart
from stripewise.model.experiment import Value, label, shown_value
from stripewise.model.experiment_result import ExperimentResult, Point, Verdict
from stripewise.protocol.experiment import design_to_json, result_to_json

JSON_FORMAT = "stripewise-experiment"
JSON_FORMAT_VERSION = 1
EXPORT_FORMATS = ("html", "csv", "json")
CSV_TAIL = ("baseline", "passes", "mean", "ci95_low", "ci95_high", "p99_us", "runs")
_VERDICT_WORDS = {
    Verdict.BETTER: "Recommended",
    Verdict.NO_BETTER: "No value beats what you have",
    Verdict.CANT_TELL: "Can't tell: keep what you have",
}


def export_experiment(stored: StoredExperiment, fmt: str) -> str:
    """The experiment in `fmt` (html, csv or json)."""
    if fmt == "html":
        return experiment_html(stored)
    if fmt == "csv":
        return experiment_csv(stored)
    if fmt == "json":
        return experiment_json(stored)
    raise ValueError(f"unknown export format {fmt!r} (known: {', '.join(EXPORT_FORMATS)})")


def parameter_names(stored: StoredExperiment) -> list[str]:
    """The varied names in the design's order; a latency target's from its points."""
    names = [p.name for p in stored.design.parameters]
    points = stored.result.points if stored.result else ()
    return list(dict.fromkeys([*names, *(n for p in points for n, _v in p.values)]))


# --- JSON and CSV ----------------------------------------------------------------------------


def experiment_json(stored: StoredExperiment) -> str:
    s = stored.summary
    document = {
        "format": JSON_FORMAT,
        "format_version": JSON_FORMAT_VERSION,
        "id": s.id,
        "name": s.name,
        "status": s.status.value,
        "host": s.host,
        "target": s.target,
        "parameters": list(s.parameters),
        "created_at": _iso(s.created_at),
        "finished_at": _iso(s.finished_at),
        "runs": list(stored.run_ids),
        "design": design_to_json(stored.design),
        "result": None if stored.result is None else result_to_json(stored.result),
    }
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def experiment_csv(stored: StoredExperiment) -> str:
    """A row per point: its values, whether it is the starting settings, passes, mean with
    its 95 % interval, p99 latency (us) and its runs' ids (space-separated)."""
    names = parameter_names(stored)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*names, *CSV_TAIL])
    for point in stored.result.points if stored.result else ():
        values = dict(point.values)
        ci = point.ci95
        writer.writerow(
            [
                *(values.get(name, "") for name in names),
                "yes" if point.baseline else "",
                len(point.passes),
                _cell(point.mean),
                _cell(None if ci is None else ci[0]),
                _cell(None if ci is None else ci[1]),
                _cell(point.p99_mean),
                " ".join(str(run) for run in point.runs),
            ]
        )
    return out.getvalue()


def _cell(value: float | None) -> str:
    return "" if value is None else repr(round(value, 6))


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


# --- HTML ------------------------------------------------------------------------------------


def experiment_html(stored: StoredExperiment) -> str:
    s, result = stored.summary, stored.result
    body = [
        f"<h1>Stripewise experiment #{s.id}: {escape(s.name)}</h1>",
        "<h2>Experiment</h2>",
        _facts(stored),
    ]
    if result is None:
        body.append('<p class="note">No result: the experiment has not ended.</p>')
        return _page(f"Stripewise experiment #{s.id}", body)
    body += ["<h2>Recommendation</h2>", _card(result)]
    if "latency_target" in result.extra:
        body += ["<h2>Latency target</h2>", _latency_table(result)]
    body += ["<h2>Charts</h2>", *_charts(stored, result)]
    names = parameter_names(stored)
    if len(names) == 2:
        body += _heat_maps(result, names)
    body += ["<h2>Points</h2>", _points_table(result, names), *_failed(result)]
    return _page(f"Stripewise experiment #{s.id}", body)


def _facts(stored: StoredExperiment) -> str:
    s, design, result = stored.summary, stored.design, stored.result
    objective = design.objective
    facts = [
        ("Status", s.status.value),
        ("Host", s.host),
        ("Target", s.target),
        ("Varied", ", ".join(parameter_names(stored))),
        ("Metric", f"{objective.phase.value} {objective.metric.value} ({objective.metric.unit})"),
        ("Precision", f"\u00b1 {design.half_width_pct:g} % or {design.max_passes} passes"),
        ("Started", _when(s.created_at)),
        ("Finished", _when(s.finished_at)),
        ("Runs", str(len(stored.run_ids))),
    ]
    if result is not None:
        facts.append(("Settings put back", "yes" if result.restored else "NO: check the machine"))
    rows = [f"<tr><th>{escape(k)}</th>{_td(escape(v))}</tr>" for k, v in facts]
    return _table([], rows, "<tr><th>Fact</th><th>Value</th></tr>")


def _when(moment: datetime | None) -> str:
    return "\u2013" if moment is None else moment.strftime("%Y-%m-%d %H:%M UTC")


def _card(result: ExperimentResult) -> str:
    """The answer first, then its change against the starting settings and why."""
    rec = result.recommendation
    title = f"{_VERDICT_WORDS[rec.verdict]}: {label(rec.values)}"
    change = ""
    if rec.change_pct is not None:
        interval = (
            f" (95 %: {rec.ci95_pct[0]:+.1f} to {rec.ci95_pct[1]:+.1f} %)" if rec.ci95_pct else ""
        )
        whose = "" if rec.verdict is Verdict.BETTER else "the best point: "
        if rec.verdict is not Verdict.BETTER and rec.change_of is not None:
            whose = f"the best point, {escape(label(rec.change_of))}: "
        change = f"<p>{whose}{rec.change_pct:+.1f} %{interval} against the starting settings</p>"
    passes = sum(len(p.passes) for p in result.points)
    drift = "not measured" if result.drift_pct is None else f"{result.drift_pct:+.1f} %"
    evidence = (  # a sweep's reason names it already; a latency target's does not
        ""
        if "evidence:" in rec.reason
        else f"Evidence: {len(result.points)} points, {passes} passes, "
        f"drift of the starting settings {drift}."
    )
    return (
        f'<div class="card {rec.verdict.value}" style="border:2px solid #d0d7de;'
        f'border-radius:6px;padding:0.4em 1em;margin:0.5em 0">'
        f'<p style="font-size:1.15em;font-weight:600">{escape(title)}</p>{change}'
        f"<p>{escape(rec.reason)}</p>"
        + (f'<p class="meta">{escape(evidence)}</p>' if evidence else "")
        + "</div>"
    )


def _latency_table(result: ExperimentResult) -> str:
    answer = result.extra["latency_target"]
    if not isinstance(answer, dict):
        return '<p class="note">The latency target\'s answer cannot be read.</p>'

    def ranged(key: str, unit: str) -> str:
        ci = answer.get(f"{key}_ci95")
        value = _number(answer.get(key))
        return f"{value} {unit}" + (f" ({_number(ci[0])}\u2013{_number(ci[1])})" if ci else "")

    facts = [
        ("p99 target", f"{answer.get('target_us')} us"),
        (str(answer.get("parameter", "value")), str(answer.get("value") or "none fits")),
        (result.unit, ranged("iops", result.unit)),
        ("p99 latency", ranged("p99_us", "us")),
        ("Probes", ", ".join(str(p) for p in answer.get("probes", []))),
    ]
    rows = [f"<tr><th>{escape(k)}</th>{_td(escape(v))}</tr>" for k, v in facts]
    return _table([], rows, "<tr><th>Answer</th><th>Value</th></tr>")


def _charts(stored: StoredExperiment, result: ExperimentResult) -> list[str]:
    """The metric, then p99 when measured, against the first parameter; one series per value
    of the second for a grid."""
    names = parameter_names(stored)
    if not names:
        return []
    x_name = names[0]
    x_label = f"{x_name} ({_unit_of(stored, x_name)})"
    figures = []
    metric = f"{result.objective.phase.value} {result.objective.metric.value}"
    for title, unit, figure in ((metric, result.unit, "mean"), ("p99 latency", "us", "p99")):
        series, spans = [], []
        for series_label, points in _series(result.points, names):
            figures_of = [_figure(p, figure) for p in points]
            xs: list[float | str] = [_x(dict(p.values)[x_name]) for p in points]
            series.append((series_label, xs, [f[0] for f in figures_of]))
            spans.append([f[1] for f in figures_of])
        if all(y is None for _l, _x, ys in series for y in ys):
            continue  # p99 not measured
        chart = bar_or_xy_chart(series, x_label, f"{title} ({unit})", ranges=spans, title=title)
        caption = f"{title} against {x_name}, with 95 % intervals"
        figures.append(f"<figure><figcaption>{escape(caption)}</figcaption>{chart}</figure>")
    return figures


def _figure(point: Point, figure: str) -> tuple[float | None, tuple[float, float] | None]:
    """A point's `mean` (the metric) or `p99` latency, with its 95 % interval."""
    if figure == "mean":
        return point.mean, point.ci95
    return point.p99_mean, point.p99_ci95


def _series(points: Sequence[Point], names: Sequence[str]) -> list[tuple[str, list[Point]]]:
    """One series of every point; for a grid, one per value of the second parameter."""
    if len(names) < 2:
        return [("mean with its 95 % interval", list(points))]
    found: dict[str, list[Point]] = {}
    for point in points:
        value = dict(point.values).get(names[1])
        if value is not None:
            found.setdefault(f"{names[1]}={shown_value(names[1], value)}", []).append(point)
    return list(found.items())


def _x(value: Value) -> float | str:
    return float(value) if isinstance(value, int) else value


def _unit_of(stored: StoredExperiment, name: str) -> str:
    found = next((p for p in stored.design.parameters if p.name == name), None)
    if found is not None:
        return found.unit
    return "I/Os" if name == "queue_depth" else "streams"


def _heat_maps(result: ExperimentResult, names: Sequence[str]) -> list[str]:
    """The grid as two tables: rows the first parameter's values, columns the second's, each
    cell shaded from the worst figure (white) to the best (green); the text says the same."""
    rows_of = list(dict.fromkeys(dict(p.values)[names[0]] for p in result.points))
    cols_of = list(dict.fromkeys(dict(p.values)[names[1]] for p in result.points))
    by_values = {(dict(p.values)[names[0]], dict(p.values)[names[1]]): p for p in result.points}
    recommended = dict(result.recommendation.values)
    parts = []
    for title, unit, minimised, figure in (
        (result.objective.metric.value, result.unit, result.objective.metric.minimised, "mean"),
        ("p99 latency", "us", True, "p99"),
    ):
        found = {k: _figure(p, figure) for k, p in by_values.items()}
        numbers = [mean for mean, _ci in found.values() if mean is not None]
        if not numbers:
            continue
        low, high = min(numbers), max(numbers)
        head = (
            f"<tr><th>{escape(names[0])} \\ {escape(names[1])}</th>"
            + "".join(f"<th>{escape(shown_value(names[1], c))}</th>" for c in cols_of)
            + "</tr>"
        )
        rows = []
        for r in rows_of:
            cells = [f"<th>{escape(shown_value(names[0], r))}</th>"]
            for c in cols_of:
                mean, ci = found.get((r, c), (None, None))
                mark = " \u2605" if recommended == {names[0]: r, names[1]: c} else ""
                cells.append(_heat_cell(mean, ci, low, high, minimised, mark))
            rows.append("<tr>" + "".join(cells) + "</tr>")
        parts += [
            f"<h3>Heat map: {escape(title)} ({escape(unit)})</h3>",
            _table([], rows, head),
        ]
    if parts:
        parts.append('<p class="note">\u2605 the recommendation; greener is better.</p>')
    return parts


def _heat_cell(
    mean: float | None,
    ci: tuple[float, float] | None,
    low: float,
    high: float,
    minimised: bool,
    mark: str,
) -> str:
    if mean is None:
        return _td("\u2013", "num")
    share = (mean - low) / (high - low) if high > low else 1.0
    share = 1.0 - share if minimised else share
    shade = f"hsl(150, 45%, {97 - 35 * share:.0f}%)"
    width = f" \u00b1 {(ci[1] - ci[0]) / 2:,.1f}" if ci is not None else ""
    text = f"{_number(mean)}{width}{mark}"
    return f'<td class="num" style="background:{shade}">{escape(text)}</td>'


def _points_table(result: ExperimentResult, names: Sequence[str]) -> str:
    header = [
        *names,
        "Passes",
        f"Mean ({result.unit})",
        "95 % interval",
        "\u00b1 %",
        "p99 (us)",
        "p99 95 % interval",
        "Runs",
    ]
    rows = []
    for point in result.points:
        values = dict(point.values)
        shown = [shown_value(n, values[n]) if n in values else "" for n in names]
        if point.baseline and shown:
            shown[-1] += " (starting settings)"
        cells = [_td(escape(text)) for text in shown]
        width = point.half_width_pct
        cells += [
            _td(str(len(point.passes)), "num"),
            _td(_number(point.mean), "num"),
            _td(_range(point.ci95), "num"),
            _td("\u2013" if width is None else f"{width:.1f}", "num"),
            _td(_number(point.p99_mean), "num"),
            _td(_range(point.p99_ci95), "num"),
            _td(escape(" ".join(f"#{run}" for run in point.runs))),
        ]
        css = ' class="baseline"' if point.baseline else ""
        rows.append(f"<tr{css}>" + "".join(cells) + "</tr>")
    return _table(header, rows)


def _range(ci: tuple[float, float] | None) -> str:
    return "\u2013" if ci is None else f"{_number(ci[0])} \u2013 {_number(ci[1])}"


def _failed(result: ExperimentResult) -> list[str]:
    failed: Any = result.extra.get("failed") or {}
    if not isinstance(failed, dict) or not failed:
        return []
    items = "".join(f"<li>{escape(str(k))}: {escape(str(v))}</li>" for k, v in failed.items())
    return ["<h2>Points that failed</h2>", f"<ul>{items}</ul>"]

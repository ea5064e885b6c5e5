"""Self-contained HTML reports of a run or a comparison: one file to mail or print.

Inline CSS and inline SVG only: no script, no font, no image or style sheet from a URL, so
the file opens the same offline and years later. Everything that came from the database (run
names, notes, tags, context values) is escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any

from stripewise import __version__
from stripewise.history.store import SampleRow
from stripewise.history.svg_chart import bar_or_xy_chart, line_chart
from stripewise.model.compare import (
    METRICS,
    Comparison,
    MetricRow,
    Series,
    Spread,
    count_tested,
    engine_series,
    phase_order,
)
from stripewise.model.compare_caveats import CAUSES
from stripewise.model.compare_context import (
    CONTEXT_GROUPS,
    ContextDifference,
    context_group,
    flatten,
    is_bookkeeping,
)
from stripewise.model.latency import p99_over_time
from stripewise.model.phase_series import series_note
from stripewise.model.phase_stop import stopped, stopped_text
from stripewise.model.rounds_kept import PhaseRounds
from stripewise.model.run import ResultValue
from stripewise.model.run_detail import RunDetail
from stripewise.model.setting_labels import setting_label, setting_text
from stripewise.model.verdict import CONFIDENCE, MIN_PASSES
from stripewise.model.wording import count_noun

_NO_SERIES = "No engine throughput samples recorded (imported runs keep only their results)."
_CHANGE_CLASS = {"better": "better", "worse": "worse", "noise": "noise", "unknown": "unknown"}
_MARK = {"better": "\u25b2 ", "worse": "\u25bc ", "noise": "~ ", "unknown": "? "}  # not by colour

_CSS = """
body { font-family: system-ui, sans-serif; color: #1f2328; background: #fff;
       max-width: 1100px; margin: 1.5em auto; padding: 0 1em; line-height: 1.4; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 1px solid #d0d7de; margin-top: 1.8em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #d0d7de; padding: 0.2em 0.6em; text-align: left;
         vertical-align: top; }
thead th { background: #f6f8fa; }
tr.group th { background: #eef1f4; text-transform: capitalize; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.spread, .note, .meta { color: #57606a; }
.spread { font-size: 0.85em; }
.better { color: #1a7f37; font-weight: 600; }
.worse { color: #cf222e; font-weight: 600; }
.noise { color: #6e7781; }
.unknown, .caveat { color: #6e7781; font-style: italic; }
figure { margin: 1em 0; }
figcaption { font-weight: 600; margin-bottom: 0.3em; }
svg.chart { display: block; max-width: 100%; height: auto; }
@media print {
  body { margin: 0; max-width: none; }
  h2 { break-after: avoid; }
  figure, tr { break-inside: avoid; }
}
"""


# --- public ----------------------------------------------------------------------------------


def throughput_series(samples: Iterable[SampleRow]) -> Series:
    """Engine MB/s per phase as its result counts it, aligned at each phase's start (first
    repetition)."""
    return engine_series((s.t_s, s.phase, s.repetition, s.data) for s in samples)


def report_html(c: Comparison, series: Mapping[int, Series] | None = None) -> str:
    """A comparison: runs, results against the baseline, time series, what differs, sweep.
    `series` maps run id to `throughput_series` of its samples."""
    ids = ", ".join(f"#{run.summary.id}" for run in c.runs)
    body = [
        f"<h1>Stripewise comparison of runs {ids}</h1>",
        f'<p class="meta">Baseline: {escape(c.run_label(c.baseline_index, full=True))}. '
        f"{_verdict_rule(c)}</p>",
        "<h2>Runs</h2>",
        _runs_table(c),
        "<h2>Results</h2>",
        _results_table(c),
        "<h2>Throughput over time</h2>",
        *_series_figures(c, series or {}),
        "<h2>What differs</h2>",
        _context_table(c),
    ]
    if c.sweep is not None:
        body += _sweep_section(c)
    return _page(f"Stripewise comparison {ids}", body)


def run_report_html(detail: RunDetail, samples: Sequence[SampleRow]) -> str:
    """One run: its facts, results with spread, MB/s over time per repetition, context."""
    s = detail.summary
    body = [
        f"<h1>Stripewise run #{s.id}: {escape(s.name)}</h1>",
        "<h2>Run</h2>",
        _facts_table(detail),
        "<h2>Results</h2>",
        _run_results_table(detail.results),
        *_steady_state_section(detail.rounds),
        "<h2>Throughput over time</h2>",
        *_repetition_figures(samples),
        "<h2>Context</h2>",
        _full_context_table(detail),
    ]
    return _page(f"Stripewise run #{s.id}", body)


# --- page ------------------------------------------------------------------------------------


def _page(title: str, body: Sequence[str]) -> str:
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{escape(title)}</title>",
            f"<style>{_CSS}</style>",
            "</head>",
            "<body>",
            *body,
            f'<p class="meta">Made by Stripewise {escape(__version__)}.</p>',
            "</body>",
            "</html>",
            "",
        ]
    )


def _table(header: Sequence[str], rows: Iterable[str], head_html: str | None = None) -> str:
    """`header` cells are escaped here; `rows` are finished <tr> elements."""
    head = head_html or "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>"
    return "\n".join(
        ["<table>", f"<thead>{head}</thead>", "<tbody>", *rows, "</tbody>", "</table>"]
    )


def _td(text: str, css: str = "") -> str:
    """A cell of already-escaped HTML."""
    return f'<td class="{css}">{text}</td>' if css else f"<td>{text}</td>"


def _number(value: float | None) -> str:
    if value is None:
        return "\u2013"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:,.1f}"


def _when(moment: datetime | None) -> str:
    return "\u2013" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


# --- comparison ------------------------------------------------------------------------------


def _runs_table(c: Comparison) -> str:
    rows = []
    for i, run in enumerate(c.runs):
        s = run.summary
        cells = [
            f"#{s.id}" + (" (baseline)" if i == c.baseline_index else ""),
            escape(s.name) + (f" <b>{escape(c.told_apart[i])}</b>" if c.told_apart[i] else ""),
            escape(s.host),
            _when(s.started_at),
            escape(s.status.value),
            escape(f"{s.engine} {s.engine_version}".strip()),
            escape(run.source),
            escape(", ".join(s.tags)),
            escape(run.notes or s.notes),
        ]
        rows.append("<tr>" + "".join(_td(cell) for cell in cells) + "</tr>")
    header = ["Run", "Name", "Host", "Started", "Status", "Engine", "Source", "Tags", "Notes"]
    return _table(header, rows)


def _results_table(c: Comparison) -> str:
    if not c.rows:
        return '<p class="note">No results recorded.</p>'
    runs = "".join(
        f'<th colspan="2">{escape(c.run_label(i, full=True))}</th>' for i in range(len(c.runs))
    )
    # the statistic shown, said in the header: the means the verdicts test
    said = "".join("<th>mean</th><th>vs baseline</th>" for _run in c.runs)
    head = (
        f'<tr><th rowspan="2">Phase</th><th rowspan="2">Metric</th><th rowspan="2">Unit</th>'
        f"{runs}</tr><tr>{said}</tr>"
    )
    return _table([], (_result_row(c, row) for row in c.rows), head)


def _verdict_rule(c: Comparison) -> str:
    tests = count_tested(c)
    confidence = f"{CONFIDENCE * 100:g}\u00a0%"
    return (
        "Values are the mean of each run's passes (a median where a run filed it without its "
        "passes); a change is the change of those means with its "
        f"{confidence} interval (Welch's t). It is coloured better or worse only when it holds "
        f"at {confidence} after Holm's correction for the {count_noun(tests, 'figure')} tested "
        "here; otherwise it is noise (~). A figure with fewer than "
        f"{count_noun(MIN_PASSES, 'pass')} in either run gets no verdict (?): samples within one "
        "pass are no repetitions. A figure whose meaning a parameter the runs differ in "
        f"changes ({CAUSES}) is shown with why it is not compared, and not judged."
    )


def _result_row(c: Comparison, row: MetricRow) -> str:
    cells = [_td(escape(row.phase)), _td(escape(row.metric)), _td(escape(row.unit))]
    for i, (value, spread, change) in enumerate(
        zip(row.shown_values, row.spreads, row.shown_changes_pct, strict=True)
    ):
        median = " median" if row.statistic(i) == "median" else ""
        shown = _number(value) if value is not None else row.missing_text(i, _number(value))
        cells.append(_td(shown + median + _spread_note(spread, row.pass_counts[i]), "num"))
        if i == c.baseline_index:
            cells.append(_td("baseline", "num noise"))
        elif change is None:
            cells.append(_td("", "num"))
        else:
            cells.append(_change_cell(row, i, c.baseline_index))
    return "<tr>" + "".join(cells) + "</tr>"


def _change_cell(row: MetricRow, index: int, baseline: int) -> str:
    """`▲ +12.3 % ± 4.1 % (95 %)` when tested; `? +10.4 %` titled with why not, else."""
    verdict, evidence = row.verdicts[index], row.evidence[index]
    said = escape(row.verdict_text(index, baseline))
    if evidence is not None:
        text = escape(evidence.interval_text()).replace(" %", "\u00a0%")
        text += ", not after Holm" if evidence.held_alone else ""
        p = evidence.p_value if evidence.p_adjusted is None else evidence.p_adjusted
        title = f"{said}; p = {p:.3g} after Holm"
    else:
        text = f"{row.shown_changes_pct[index] or 0.0:+.1f}\u00a0% {said}"
        title = said
    if row.caveat(index):  # said in full, not judged: neither a verdict nor a "?"
        title = "not judged: the runs differ in a parameter that changes what it means"
        return f'<td class="num caveat" title="{title}">{text}</td>'
    css = f"num {_CHANGE_CLASS.get(verdict, '')}".strip()
    return f'<td class="{css}" title="{title}">{_MARK.get(verdict, "")}{text}</td>'


def _spread_note(spread: Spread | None, passes: int) -> str:
    """`n=3`, titled with the passes' min..max."""
    if spread is None or passes < 2:
        return ""
    title = f"mean of {count_noun(passes, 'pass')}, {_number(spread.low)} .. {_number(spread.high)}"
    return f' <span class="spread" title="{escape(title)}">n={passes}</span>'


def _series_figures(c: Comparison, series: Mapping[int, Series]) -> list[str]:
    phases = phase_order(p for run in c.runs for p in series.get(run.summary.id, {}))
    if not phases:
        return [f'<p class="note">{_NO_SERIES}</p>']
    figures = []
    for phase in phases:
        lines = [
            (c.run_label(i, full=True), *series[run.summary.id][phase])
            for i, run in enumerate(c.runs)
            if phase in series.get(run.summary.id, {})
        ]
        chart = line_chart(lines, "seconds since the phase's first sample", "MB/s", title=phase)
        note = series_note(c.runs, series, phase)
        caption = escape(phase) + (f' <span class="note">{escape(note)}</span>' if note else "")
        figures.append(f"<figure><figcaption>{caption}</figcaption>{chart}</figure>")
        figures += _latency_figure(c, phase)
    return figures


def _latency_figure(c: Comparison, phase: str) -> list[str]:
    """The runs' interval p99 in the phase over its time, where they logged latency."""
    lines = [
        (c.run_label(i, full=True), *p99_over_time(run.latency)[phase])
        for i, run in enumerate(c.runs)
        if phase in p99_over_time(run.latency)
    ]
    if not lines:
        return []
    x_label = "seconds since the phase's first sample"
    chart = line_chart(lines, x_label, "interval p99 (µs)", title=f"{phase}: latency")
    caption = f"{escape(phase)}: p99 latency per interval"
    return [f"<figure><figcaption>{caption}</figcaption>{chart}</figure>"]


def _context_table(c: Comparison) -> str:
    if not c.context:
        return '<p class="note">Nothing differs in the recorded context.</p>'
    header = ["Setting", *(f"#{run.summary.id}" for run in c.runs)]
    rows = []
    for group in CONTEXT_GROUPS:
        found = [d for d in c.context if d.group == group]
        if found:
            span = len(c.runs) + 1
            rows.append(f'<tr class="group"><th colspan="{span}">{escape(group)}</th></tr>')
            rows += [_difference_row(d) for d in found]
    return _table(header, rows)


def _difference_row(d: ContextDifference) -> str:
    """The setting as the Benchmark form names it, its key in the title (the JSON's)."""
    label = f'<td title="{escape(d.key)}">{escape(setting_label(d.key))}</td>'
    values = [_td(escape(_value(d.key, v))) for v in d.values]
    return "<tr>" + label + "".join(values) + "</tr>"


def _value(key: str, value: Any) -> str:
    """Context values for reading, with their units (`setting_text`); absent as a dash."""
    if value is None and key != "spec.cpu_latency_us":  # there null says no limit was held
        return "\u2013 (not recorded)"
    return setting_text(key, value)


def _sweep_section(c: Comparison) -> list[str]:
    sweep = c.sweep
    assert sweep is not None
    axis = f"{sweep.label} ({sweep.unit})" if sweep.unit else sweep.label
    parts = [
        f"<h2>Against {escape(sweep.label)}</h2>",
        f'<p class="note">The runs differ in {escape(sweep.key)} alone (and in what follows '
        "from it); points are the means of each run's passes, bars their spread.</p>",
    ]
    metrics = list(dict.fromkeys(row.metric for row in c.rows))
    metrics.sort(key=lambda m: METRICS.index(m) if m in METRICS else len(METRICS))
    for metric in metrics:
        rows = [
            r for r in c.rows if r.metric == metric and sum(v is not None for v in r.values) > 1
        ]
        if not rows:
            continue
        series = [(row.phase, list(sweep.values), list(row.shown_values)) for row in rows]
        ranges = [[(s.low, s.high) if s else None for s in row.spreads] for row in rows]
        y_axis = f"{metric} ({rows[0].unit})" if rows[0].unit else metric
        chart = bar_or_xy_chart(series, axis, y_axis, ranges=ranges, title=f"{metric} vs {axis}")
        caption = f"{escape(metric)} against {escape(axis)}"
        parts.append(f'<figure class="sweep"><figcaption>{caption}</figcaption>{chart}</figure>')
    return parts


# --- one run ---------------------------------------------------------------------------------


def _facts_table(detail: RunDetail) -> str:
    s = detail.summary
    duration = f"{s.duration_s:.1f} s" if s.duration_s is not None else "\u2013"
    facts = [
        ("Status", s.status.value),
        ("Host", s.host),
        ("Target", s.target),
        ("Engine", f"{s.engine} {s.engine_version}".strip()),
        ("Started", _when(s.started_at)),
        ("Finished", f"{_when(s.finished_at)} ({duration})"),
        ("Source", detail.source),
        ("Samples", str(detail.sample_count)),
        ("Tags", ", ".join(s.tags)),
        ("Notes", detail.notes or s.notes),
    ]
    rows = [f"<tr><th>{escape(k)}</th>{_td(escape(v))}</tr>" for k, v in facts if v]
    return _table(["", ""], rows, "<tr><th>Fact</th><th>Value</th></tr>")


def _run_results_table(results: Sequence[ResultValue]) -> str:
    if not results:
        return '<p class="note">No results recorded.</p>'
    rows = []
    for r in results:
        spread = (
            f"{_number(r.min_value)} .. {_number(r.max_value)}"
            if r.min_value is not None and r.max_value is not None
            else ""
        )
        cells = [
            _td(escape(r.phase)),
            _td(escape(r.metric)),
            _td(_number(r.value) if r.value is not None else _missing(r), "num"),
            _td(escape(r.unit)),
            _td(spread, "num"),
            _td(str(r.repetitions) if r.value is not None else _number(None), "num"),
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    table = _table(["Phase", "Metric", "Median", "Unit", "Min .. max", "Repetitions"], rows)
    errors = {r.phase: r.errors for r in results if r.errors}
    said = "; ".join(f"{escape(phase)}: {escape(stopped_text(e))}" for phase, e in errors.items())
    return table + (f'\n<p class="note">Stopped: {said}.</p>' if said else "")


def _missing(result: ResultValue) -> str:
    """Why a figure is missing: its phase `cancelled` or `failed`, else a dash."""
    return stopped(result.errors) or _number(None)


def _steady_state_section(kept: Sequence[PhaseRounds]) -> list[str]:
    """A steady-state run's rounds, one row per phase and repetition, the window's in bold:
    parts of one run of the phase, so never among the results above."""
    if not kept:
        return []
    rows = []
    for found in kept:
        window = found.kept.window
        start = found.kept.window_start
        figures = [_number(f) for f in found.kept.rounds]
        rounds = ", ".join(figures[: start - 1] + [f"<b>{f}</b>" for f in figures[start - 1 :]])
        judged = ", ".join(
            f"{name} {percent:.1f} %"
            for name, percent in (("excursion", window.excursion_pct), ("slope", window.slope_pct))
            if percent is not None
        )
        cells = [
            _td(escape(found.phase)),
            _td(str(found.kept.repetition), "num"),
            _td(escape(found.kept.verdict())),
            _td(f"{_number(window.mean)} {escape(found.unit)}", "num"),
            _td(escape(judged)),
            _td(rounds),
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    header = ["Phase", "Repetition", "Verdict", "Window mean", "Window", "Rounds (window in bold)"]
    return ["<h2>Steady state</h2>", _table(header, rows)]


def _repetition_figures(samples: Sequence[SampleRow]) -> list[str]:
    """One chart per phase, one line per repetition: their spread is the run's noise."""
    repetitions = sorted({s.repetition for s in samples})
    per_rep = {
        rep: throughput_series(s for s in samples if s.repetition == rep) for rep in repetitions
    }
    phases = phase_order(p for series in per_rep.values() for p in series)
    if not phases:
        return [f'<p class="note">{_NO_SERIES}</p>']
    figures = []
    for phase in phases:
        lines = [
            (f"repetition {rep}", *series[phase])
            for rep, series in per_rep.items()
            if phase in series
        ]
        chart = line_chart(lines, "seconds since the phase started", "MB/s", title=phase)
        figures.append(f"<figure><figcaption>{escape(phase)}</figcaption>{chart}</figure>")
    return figures


def _full_context_table(detail: RunDetail) -> str:
    flat = [(k, v) for k, v in flatten(detail.context.to_json()) if not is_bookkeeping(k)]
    if not flat:
        return '<p class="note">No context recorded.</p>'
    rows = []
    for group in CONTEXT_GROUPS:
        found = sorted((k, v) for k, v in flat if context_group(k) == group)
        if found:
            rows.append(f'<tr class="group"><th colspan="2">{escape(group)}</th></tr>')
            rows += [f"<tr>{_td(escape(k))}{_td(escape(_value(k, v)))}</tr>" for k, v in found]
    return _table(["Setting", "Value"], rows)

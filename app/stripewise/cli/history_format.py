"""What `stripewise history` prints: run tables, one run's detail, comparisons, and JSON."""

from __future__ import annotations

import shutil
import textwrap
import time
from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING, Any

from stripewise.model.phase_stop import stopped, stopped_text
from stripewise.model.run import ResultValue, RunSummary
from stripewise.model.wording import count_noun

if TYPE_CHECKING:
    from stripewise.model.compare import Comparison, MetricRow
    from stripewise.model.rounds_kept import PhaseRounds
    from stripewise.model.run_detail import RunDetail

_MARKS = {"better": "* better", "worse": "* worse", "noise": "~", "unknown": "?"}
NOT_COMPARABLE = "!"  # the runs differ in a parameter that changes what the figure means


def _value_cell(row: MetricRow, index: int) -> str:
    """The mean of the passes (what the verdict tests) with how many when more than one;
    a median the run filed without its passes says so."""
    value, passes = row.shown_values[index], row.pass_counts[index]
    if value is None:  # a phase cancelled or failed says so
        return row.missing_text(index, _figure(value))
    if row.statistic(index) == "median":
        return f"{_figure(value)} median"
    if passes < 2:
        return _figure(value)
    return f"{_figure(value)} n={passes}"


def _change_cell(row: MetricRow, index: int, baseline: int) -> str:
    """`+12.3 % ± 4.1 % (95 %) * better` when tested; the change of what is shown and why
    it is not judged, else."""
    change, verdict = row.shown_changes_pct[index], row.verdicts[index]
    if change is None:
        return ""
    evidence = row.evidence[index]
    if evidence is not None:
        mark = "~ (Holm)" if evidence.held_alone else _MARKS.get(verdict, "")
        return f"{evidence.interval_text()} {mark}".rstrip()
    if row.caveat(index):
        return f"{change:+.1f} % {NOT_COMPARABLE} {row.caveat(index)}"
    return f"{change:+.1f} % ? {row.verdict_text(index, baseline)}"


def format_comparison(c: Comparison) -> str:
    """Runs, a results table with changes against the baseline, what differs, the sweep (or
    why there is none)."""
    from stripewise.model.compare_sweep import MIN_SWEEP_RUNS  # lazy: kept out of `history list`

    base = c.baseline.summary.id
    lines = [f"Runs compared (baseline #{base}):"]
    for index, run_ in enumerate(c.runs):
        s = run_.summary
        told = f" [{c.told_apart[index]}]" if c.told_apart[index] else ""
        lines.append(f"  #{s.id}  {s.name}{told}  ({s.host}, {_local(s.started_at)})")
    lines += ["", _results_table(c), "", *_differences(c)]
    if c.sweep is not None:
        sweep = c.sweep
        unit = f" {sweep.unit}" if sweep.unit else ""
        values = ", ".join(f"{v:g}" for v in sweep.values)
        lines += ["", f"Sweep: {sweep.label} ({sweep.key}) = {values}{unit}"]
    elif c.context and len(c.runs) >= MIN_SWEEP_RUNS:  # two runs are never one: not said
        lines += ["", f"No sweep: {c.no_sweep}."]
    return "\n".join(lines)


def _results_table(c: Comparison) -> str:
    from stripewise.model.compare import count_tested  # lazy: kept out of `history list`
    from stripewise.model.compare_caveats import CAUSES
    from stripewise.model.verdict import CONFIDENCE

    if not c.rows:
        return "No results recorded."
    base = c.baseline.summary.id
    header = ["Phase", "Metric", "Unit"]
    for i, run_ in enumerate(c.runs):
        run_id = run_.summary.id
        if i == c.baseline_index:
            header.append(f"#{run_id} mean (base)")
        else:
            header += [f"#{run_id} mean", "vs base"]
    rows = []
    for row in c.rows:
        cells = [row.phase, row.metric, row.unit]
        for i in range(len(row.values)):
            cells.append(_value_cell(row, i))
            if i != c.baseline_index:
                cells.append(_change_cell(row, i, c.baseline_index))
        rows.append(cells)
    confidence = f"{CONFIDENCE * 100:g} %"
    tests = count_tested(c)
    tested = (
        f"Holm's correction for the {count_noun(tests, 'figure')} tested"
        if tests
        else "Holm's correction for the figures tested (none here)"
    )
    legend = "\n".join(
        (
            "Values: the mean of each run's passes (n= passes; median: a run that filed its "
            "median without its passes).",
            f"Changes against #{base}: of those means, ± their {confidence} interval (Welch's t).",
            f"* better or worse: beyond noise at {confidence} after {tested}; ~ within noise",
            "  (~ (Holm): its own interval leaves out 0, but among this many figures one that far "
            "out is expected by chance);",
            _cant_tell_legend(c),
            f"{NOT_COMPARABLE} not comparable: the runs differ in a parameter that changes what "
            f"the figure means ({CAUSES}); not judged.",
        )
    )
    return format_table(header, rows) + "\n" + legend


def _cant_tell_legend(c: Comparison) -> str:
    """What `?` means and how the runs short of passes get enough: a measured run is run
    again; an imported one cannot be, so no bench command is offered for it."""
    from stripewise.model.compare import IMPORTED_PASSES, short_of_passes
    from stripewise.model.verdict import MIN_PASSES

    rerun = f"stripewise bench --repeat {MIN_PASSES}"
    measured, imported = short_of_passes(c), short_of_passes(c, "imported")
    if not measured and not imported:  # no run is short: say it for the runs compared
        measured = {i: 0 for i, run in enumerate(c.runs) if run.source == "measured"}
        imported = {i: 0 for i, run in enumerate(c.runs) if run.source == "imported"}
    if imported and measured:
        ways = f"a measured run: {rerun}; {IMPORTED_PASSES}"
    else:
        ways = IMPORTED_PASSES if imported else rerun
    return f"? can't tell: a verdict needs {count_noun(MIN_PASSES, 'pass')} of each run ({ways});"


def _differences(c: Comparison) -> list[str]:
    from stripewise.model.compare_context import CONTEXT_GROUPS  # lazy: kept out of `history list`
    from stripewise.model.setting_labels import setting_label, setting_text

    if not c.context:
        return ["What differs: nothing in the recorded context."]
    ordered = sorted(c.context, key=lambda d: CONTEXT_GROUPS.index(d.group))
    rows = [
        [f"  {setting_label(d.key)}", *(setting_text(d.key, v) for v in d.values)] for d in ordered
    ]
    header = ["  Setting", *(f"#{run_.summary.id}" for run_ in c.runs)]
    lines = ["What differs:", *wrapped_table(header, [], rows)]
    group = None
    for d, row in zip(ordered, rows, strict=True):
        if d.group != group:
            group = d.group
            lines.append(f"{group}:")
        lines += wrapped_table(header, [row], rows)[1:]
    return lines


def wrapped_table(
    header: list[str], rows: list[list[str]], sized_by: list[list[str]] | None = None
) -> list[str]:
    """`format_table`'s lines with each column at most its share of the terminal's width
    (80 when not a terminal), longer cells wrapped onto lines of their own: a long command
    line or list must not push the other runs' columns off the screen. `sized_by`: the rows
    the widths are taken from, when `rows` are a part of them."""
    sized = [header, *(rows if sized_by is None else sized_by)]
    widths = [max(len(row[i]) for row in sized) for i in range(len(header))]
    room = shutil.get_terminal_size().columns - 2 * (len(header) - 1)
    if sum(widths) > room:  # the setting's name up to 30, the runs share what is left
        widths[0] = min(widths[0], 30)
        share = max(16, (room - widths[0]) // (len(header) - 1))
        widths[1:] = [min(w, share) for w in widths[1:]]
    lines = []
    for row in [header, *rows]:
        cells = [
            textwrap.wrap(cell, w, subsequent_indent="    " if i == 0 else "  ") or [""]
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        for depth in range(max(map(len, cells))):
            parts = [c[depth] if depth < len(c) else "" for c in cells]
            lines.append("  ".join(p.ljust(w) for p, w in zip(parts, widths, strict=True)).rstrip())
    return lines


# --- runs ----------------------------------------------------------------------------------


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def summary_json(run: RunSummary) -> dict[str, Any]:
    return {
        "id": run.id,
        "name": run.name,
        "status": run.status.value,
        "host": run.host,
        "target": run.target,
        "engine": run.engine,
        "engine_version": run.engine_version,
        "started_at": _iso(run.started_at),
        "finished_at": _iso(run.finished_at),
        "duration_s": run.duration_s,
        "tags": list(run.tags),
        "partial": run.partial,
    }


def detail_json(detail: RunDetail) -> dict[str, Any]:
    found = summary_json(detail.summary) | {
        "source": detail.source,
        "notes": detail.notes,
        "spec": detail.options if detail.spec is None else _spec_json(detail),
        "context": detail.context.to_json(),
        "sample_count": detail.sample_count,
        # `stopped`: `cancelled` or `failed` for a phase whose repetitions did not all end
        # well (`errors` says each one's error), else null
        "results": [
            asdict(result) | {"stopped": stopped(result.errors) or None}
            for result in detail.results
        ],
    }
    if detail.rounds:  # a steady-state run's only: every other run's document is as it was
        found["rounds"] = [rounds.to_json() for rounds in detail.rounds]
    return found


def _local(moment: datetime | None) -> str:
    """`2026-11-29 14:05` in the local time zone (time.localtime: a third of astimezone's and
    strftime's cost, which a 10,000-run listing pays per row)."""
    if moment is None:
        return "-"
    t = time.localtime(moment.timestamp())
    return f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d} {t.tm_hour:02d}:{t.tm_min:02d}"


def format_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    head = "  ".join(cell.ljust(w) for cell, w in zip(header, widths, strict=True))
    return "\n".join(line.rstrip() for line in [head, *lines])


def format_run_table(runs: list[RunSummary]) -> str:
    if not runs:
        return "No runs recorded yet."
    rows = [
        [
            str(r.id),
            _local(r.started_at),
            f"{r.status.value} (partial)" if r.partial else r.status.value,  # as history show
            r.host,
            r.target,
            f"{r.engine} {r.engine_version}".strip(),
            r.name,
        ]
        for r in runs
    ]
    return format_table(["ID", "Started", "Status", "Host", "Target", "Engine", "Name"], rows)


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _result_row(result: ResultValue) -> list[str]:
    spread = (
        f"{_figure(result.min_value)} .. {_figure(result.max_value)}"
        if result.min_value is not None and result.max_value is not None
        else ""
    )
    missing = stopped(result.errors) or "-"  # a phase cancelled or failed says so
    return [
        result.phase,
        result.metric,
        _figure(result.value) if result.value is not None else missing,
        result.unit,
        spread,
        str(result.repetitions) if result.value is not None else "-",  # none measured it
    ]


def format_detail(detail: RunDetail) -> str:
    run_ = detail.summary
    duration = f"{run_.duration_s:.1f} s" if run_.duration_s is not None else "-"
    lines = [
        f"Run {run_.id}: {run_.name}",
        f"  status    {run_.status.value}",
        f"  host      {_measured_on(detail)}",
        f"  target    {run_.target}",
        f"  engine    {run_.engine} {run_.engine_version}".rstrip(),
        f"  started   {_local(run_.started_at)}",
        f"  finished  {_local(run_.finished_at)} ({duration})",
        f"  source    {detail.source}",
        f"  samples   {detail.sample_count}",
    ]
    if run_.tags:
        lines.append(f"  tags      {', '.join(run_.tags)}")
    if detail.notes:
        lines.append(f"  notes     {detail.notes}")
    lines += _group_lines(detail)
    lines.append("")
    if detail.results:
        rows = [_result_row(result) for result in detail.results]
        means = _means_note(detail)
        header = ["Phase", "Metric", "Value" if means else "Median", "Unit", "Min .. max", "Reps"]
        flagged = list(dict.fromkeys(f for result in detail.results for f in result.flags))
        if flagged:  # the guards a figure tripped (model/guards.py), named, then explained
            header.append("Guards")
            for row, result in zip(rows, detail.results, strict=True):
                row.append(",".join(result.flags))
        lines.append(format_table(header, rows))
        if means:
            lines.append(means)
        if flagged:
            from stripewise.model.guards import guard  # lazy: kept out of `history list`

            lines += ["", "Guards tripped (the figure is not the disks' alone):"]
            lines += [f"  {name}: {guard(name).title}: {guard(name).meaning}" for name in flagged]
            lines += [f"  {said}" for said in detail.member_stand_outs]  # who stood out
        lines += _stopped_lines(detail.results)
    else:
        lines.append("No results recorded.")
    for found in detail.rounds:
        lines += ["", *rounds_lines(found)]
    return "\n".join(lines)


def _stopped_lines(results: tuple[ResultValue, ...]) -> list[str]:
    """Each phase whose repetitions did not all end well, and why: `random_write: cancelled`,
    `seq_read: failed: fio: /data is not a directory`."""
    errors = {r.phase: r.errors for r in results if r.errors}
    if not errors:
        return []
    return ["", "Stopped:", *(f"  {phase}: {stopped_text(e)}" for phase, e in errors.items())]


def _means_note(detail: RunDetail) -> str:
    """What the Value column holds where it is no median of repetitions; empty when all are."""
    scaling = any(r.phase.startswith(("scaling_", "alone_")) for r in detail.results)
    steady = sorted({found.phase for found in detail.rounds})
    said = ["the median of the repetitions"] if not scaling else []
    if scaling:
        said.append("the mean of each step's passes (scaling_N: N disks at once)")
    if steady:
        said.append(
            f"for {', '.join(steady)}: the mean of the steady window's rounds (MB/s, IOPS;"
            " CPU weighted by each round's time), latency the last round's"
        )
    return f"Value: {'; '.join(said)}." if scaling or steady else ""


def rounds_lines(found: PhaseRounds) -> list[str]:
    """A steady-state phase's rounds: its verdict, then each round's figure, the window's
    marked (its mean is the phase's figure)."""
    kept, window = found.kept, found.kept.window
    said = [f"mean {_figure(window.mean)} {found.unit}"]
    said += [
        f"{name} {percent:.1f} %"
        for name, percent in (("excursion", window.excursion_pct), ("slope", window.slope_pct))
        if percent is not None
    ]
    lines = [
        f"Steady state, {found.phase} repetition {kept.repetition}: {kept.verdict()}",
        f"  window: rounds {kept.window_start}-{len(kept.rounds)}, {', '.join(said)}",
    ]
    figures = [_figure(figure) for figure in kept.rounds]
    width = max(len(found.unit), *map(len, figures))
    lines.append(f"  {'Round':>5}  {found.unit:>{width}}")
    for number, figure in enumerate(figures, start=1):
        mark = "  window" if number >= kept.window_start else ""
        lines.append(f"  {number:>5}  {figure:>{width}}{mark}")
    return lines


def _measured_on(detail: RunDetail) -> str:
    """What the run was measured on: a group's host run names its host (the history's host
    is the machine that drove the group, which measured nothing of it)."""
    if detail.parent_run_id is not None and detail.host_label:
        return f"{detail.host_label} (run from {detail.summary.host})"
    return detail.summary.host


def _group_lines(detail: RunDetail) -> list[str]:
    """A group run names its hosts' runs and says when its totals are partial; a host run
    names the group run it belongs to."""
    context = detail.context
    if detail.parent_run_id is not None:
        return [f"  group     host {detail.host_label} of group run {detail.parent_run_id}"]
    if not detail.host_runs:
        return []
    errors = {h.host: h.error for h in context.hosts or ()}
    lines = [f"  hosts     {count_noun(len(detail.host_runs), 'host')}; the results are their sum"]
    for host_run in detail.host_runs:
        error = (errors.get(host_run.host) or "").removeprefix(f"{host_run.host}: ")
        said = f": {error}" if error else ""  # the line names the host already
        lines.append(f"    run {host_run.run_id:<5} {host_run.host}  {host_run.status}{said}")
    if context.partial:
        lines.append("  partial   not every host completed: the totals leave the others out")
    return lines


def _spec_json(detail: RunDetail) -> dict[str, Any]:
    """The spec as the helper echoed it; imported here, as `history list` (the command run
    most) never shows one and the spec's codec costs it a fifth of its start."""
    from stripewise.protocol.spec import spec_to_json

    assert detail.spec is not None
    return spec_to_json(detail.spec)

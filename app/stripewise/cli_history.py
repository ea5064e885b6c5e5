"""`stripewise history ...`: read recorded runs without the GUI."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from datetime import datetime
from typing import Any

from stripewise.model.run import ResultValue, RunDetail, RunSummary


def run(args: argparse.Namespace, url: str) -> int:
    from stripewise.cli import CliError

    if args.history_command == "list":
        from stripewise.history import quicklist

        runs = quicklist.list_runs(url, limit=args.limit)
        if runs is not None:
            _print_runs(runs, as_json=args.json)
            return 0
    from stripewise.history import database
    from stripewise.history.store import HistoryStore

    try:
        db = database.open_database(url)
    except database.DatabaseError as exc:
        raise CliError(str(exc)) from None
    try:
        store = HistoryStore(db)
        if args.history_command == "list":
            _print_runs(store.list_runs(limit=args.limit), as_json=args.json)
            return 0
        try:
            detail = store.get_run(args.run_id)
        except database.DatabaseError as exc:
            raise CliError(str(exc)) from None
        if args.history_command == "show":
            if args.json:
                print(json.dumps(detail_json(detail), indent=2))
            else:
                print(format_detail(detail))
            return 0
        return _export(args, store, detail)
    finally:
        db.close()


def _print_runs(runs: list[RunSummary], *, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"runs": [summary_json(r) for r in runs]}, indent=2))
    else:
        print(format_run_table(runs))


def _export(args: argparse.Namespace, store: Any, detail: RunDetail) -> int:
    from stripewise.cli import CliError
    from stripewise.history import export

    if args.format == "csv":
        text = export.export_run_csv(detail)
    else:
        text = export.export_run_json(detail, store.samples(detail.summary.id))
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {args.output}: {exc.strerror}") from None
    print(f"run {detail.summary.id} written to {args.output}", file=sys.stderr)
    return 0


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
    }


def detail_json(detail: RunDetail) -> dict[str, Any]:
    return summary_json(detail.summary) | {
        "source": detail.source,
        "notes": detail.notes,
        "spec": detail.spec,
        "context": detail.context,
        "sample_count": detail.sample_count,
        "results": [asdict(result) for result in detail.results],
    }


def _local(moment: datetime | None) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M") if moment is not None else "-"


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
            r.status.value,
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
    return [
        result.phase,
        result.metric,
        _figure(result.value),
        result.unit,
        spread,
        str(result.repetitions),
    ]


def format_detail(detail: RunDetail) -> str:
    run_ = detail.summary
    duration = f"{run_.duration_s:.1f} s" if run_.duration_s is not None else "-"
    lines = [
        f"Run {run_.id}: {run_.name}",
        f"  status    {run_.status.value}",
        f"  host      {run_.host}",
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
    lines.append("")
    if detail.results:
        rows = [_result_row(result) for result in detail.results]
        lines.append(
            format_table(["Phase", "Metric", "Median", "Unit", "Min .. max", "Reps"], rows)
        )
    else:
        lines.append("No results recorded.")
    return "\n".join(lines)

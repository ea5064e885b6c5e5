"""`stripewise import FILE`: bonnie++, fio or iozone results from elsewhere as history runs.

Warnings about parts of the file that were skipped go to stderr, one line each. With `--json`
prints `{"file", "sha256", "runs": [...], "warnings": [...]}` where each run carries its stored id,
name, host, engine, target, time, format and a list of `{"phase", "metric", "unit", "value"}`
(see docs/importing.md); without it, a short table per run.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import itertools
import json
import math
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

from stripewise.cli.errors import CliError, database_url, open_history
from stripewise.cli.history_format import format_table
from stripewise.cli.json_text import indented_json
from stripewise.cli.options import add_db_option, path_argument
from stripewise.history import database
from stripewise.history.import_parse import ChildParse, ParseFailed
from stripewise.history.imported_runs import ImportReport, StoredImport
from stripewise.history.imports import (
    IMPORTED_PREFIX,
    MAX_IMPORT_BYTES,
    UNKNOWN_HOST,
    DuplicateImport,
    import_prepared,
    open_results,
)
from stripewise.history.prepared_runs import prepare
from stripewise.importers import ImportFormatError
from stripewise.input_files import InputFileError
from stripewise.model.wording import count_noun

FORMATS = ("auto", "bonnie", "fio", "iozone")
# Files from this size on are parsed in a second process (about 5,000 bonnie++ runs, 3 s of
# work): below it, starting one costs more than it saves.
PARSE_APART_BYTES = 2**20


def fill_parser(parser: argparse.ArgumentParser) -> None:
    """The `import` command's arguments."""
    parser.add_argument(
        "file", type=path_argument, metavar="FILE", help="a results file or saved output"
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="what the file holds (default: recognise it)",
    )
    parser.add_argument("--name", metavar="NAME", help="run name (default: from the file)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    add_db_option(parser, top=False)


def run(args: argparse.Namespace) -> int:
    # What is loaded by now (the modules, SQLAlchemy's) outlives the import: left out of the
    # collector's full passes, which otherwise walk it again and again through 100,000 runs.
    gc.freeze()
    try:
        return _import(args)
    finally:
        gc.unfreeze()


def _import(args: argparse.Namespace) -> int:
    url = database_url(args)
    path: Path = args.file
    warnings: Callable[[], list[str]]  # complete once the runs are
    with contextlib.ExitStack() as resources:
        try:
            if _parse_apart(path):
                child = resources.enter_context(ChildParse(path, args.format, MAX_IMPORT_BYTES))
                sha256, runs, warnings = child.sha256, child.runs(), lambda: child.warnings
            else:
                parsed, sha256 = open_results(path, args.format)
                runs = (prepare(run, path.name, sha256) for run in parsed.runs())
                warnings = lambda: parsed.warnings  # noqa: E731
            # The first run is read before the history is opened: a file with none is
            # refused without creating one.
            first = next(runs, None)
        except (InputFileError, ImportFormatError, ParseFailed) as exc:
            raise CliError(f"{exc}; nothing was imported") from None
        if first is None:
            raise CliError(f"{path.name}: no runs found; nothing was imported")
        db = resources.enter_context(contextlib.closing(open_history(url)))
        report = resources.enter_context(ImportReport())
        try:
            ids = import_prepared(
                db,
                itertools.chain([first], runs),
                source_name=path.name,
                sha256=sha256,
                name=args.name,
                report=report,
            )
        except (ImportFormatError, ParseFailed) as exc:  # past the first run: all undone
            raise CliError(f"{exc}; nothing was imported") from None
        except (DuplicateImport, database.DatabaseError) as exc:
            raise CliError(str(exc)) from None
        for warning in warnings():
            print(f"stripewise: warning: {warning}", file=sys.stderr)
        # The runs as stored, put aside as each batch was written: read back and printed a
        # batch at a time, never all held at once.
        if args.json:
            _write_json(sys.stdout, path.name, sha256, report.runs(), warnings())
        else:
            runs_json = (_run_json(run) for run in report.runs())
            _write_text(sys.stdout, path.name, len(ids), runs_json)
    return 0


def _parse_apart(path: Path) -> bool:
    """Whether the file is parsed in a second process while this one stores its runs: a
    large file (its parse is half the import's work), with a second CPU to parse it on."""
    try:
        size = path.stat().st_size if path.is_file() else 0
    except OSError:
        size = 0  # refused as the parse here refuses it, naming why
    return size >= PARSE_APART_BYTES and len(os.sched_getaffinity(0)) > 1


def _write_json(
    out: TextIO, file_name: str, sha256: str, runs: Iterable[StoredImport], warnings: list[str]
) -> None:
    """`json.dumps(document, indent=2)` of the whole document, written a run at a time."""
    empty = {"file": file_name, "sha256": sha256, "runs": [], "warnings": warnings}
    head, tail = indented_json(empty).split('"runs": []', 1)
    out.write(head + '"runs": [')
    for index, run in enumerate(runs):
        out.write(("," if index else "") + "\n    ")
        out.write(_run_text(run))
    out.write("\n  ]" + tail + "\n")


# A run's report as `json.dumps(indent=2)` lays it out four spaces in: its scalars by the C
# encoder at depth 3 (it puts no line break elsewhere: a string's own are escaped, so a break
# is where `indent=2` would put one), each metric at depth 4 as `_metric_head` lays it out.
_RUN_ITEMS = json.JSONEncoder(separators=(",\n      ", ": "), check_circular=False).encode
_METRIC_END = "\n        }"


@functools.lru_cache(maxsize=1024)
def _metric_head(phase: str, metric: str, unit: str) -> str:
    """A metric of the report up to its value, made once per kind of figure (a bonnie++ run
    has 42 kinds, each repeated in every run of its file; bounded for a file of many)."""
    return (
        f'        {{\n          "phase": {json.dumps(phase)},\n          "metric": '
        f'{json.dumps(metric)},\n          "unit": {json.dumps(unit)},\n          "value": '
    )


def _run_text(run: StoredImport) -> str:
    """One run of the report (its metrics last), laid out as the document's `indent=2`; a
    finite figure is its float's repr, as json writes it."""
    scalars = _RUN_ITEMS(_run_scalars(run))
    metrics = "[]"
    if run.results:
        isfinite, encode = math.isfinite, json.dumps
        items = ",\n".join(
            _metric_head(phase, metric, unit)
            + (
                "null"
                if value is None
                else repr(value)
                if value.__class__ is float and isfinite(value)
                else encode(value)
            )
            + _METRIC_END
            for phase, metric, unit, value in run.results
        )
        metrics = "[\n" + items + "\n      ]"
    return "{\n      " + scalars[1:-1] + ',\n      "metrics": ' + metrics + "\n    }"


def _run_scalars(run: StoredImport) -> dict[str, Any]:
    """A run of the report but its metrics."""
    unknown = run.machine_id == f"{IMPORTED_PREFIX}{UNKNOWN_HOST}"
    return {
        "id": run.id,
        "name": run.name,
        "host": None if unknown else run.hostname,
        "engine": run.engine,
        "engine_version": run.engine_version,
        "target": run.target,
        "started_at": run.started_at.isoformat(),
        "format": run.record.format,
        "line": run.record.line,
    }


def _run_json(run: StoredImport) -> dict[str, Any]:
    metrics = [
        {"phase": phase, "metric": metric, "unit": unit, "value": value}
        for phase, metric, unit, value in run.results
    ]
    return _run_scalars(run) | {"metrics": metrics}


def _write_text(out: TextIO, file_name: str, count: int, runs: Iterable[dict[str, Any]]) -> None:
    out.write(f"Imported {count_noun(count, 'run')} from {file_name}\n")
    for run in runs:
        engine = f"{run['engine']} {run['engine_version']}".strip()
        out.write(
            f"\nRun {run['id']}: {run['name']}\n"
            f"  host {run['host'] or '-'}, {engine}, {run['format']} (line {run['line']})\n"
        )
        rows = [[m["phase"], m["metric"], _figure(m["value"]), m["unit"]] for m in run["metrics"]]
        out.write(format_table(["Phase", "Metric", "Value", "Unit"], rows) + "\n")


def _figure(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.3f}".rstrip("0").rstrip(".")

"""`stripewise experiment ...`: run an experiment (cli.experiment_run), and read the ones the
history keeps: list, show, export, compare, delete and restore (docs/experiments.md).

Each reading action is a function taking the parsed arguments and an open database; a problem
the user can act on (an unknown id, two experiments of different parameters, a file that
cannot be written) is one line on stderr and exit 2, as for `stripewise history`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from stripewise.cli.errors import CliError, database_url, open_history
from stripewise.cli.history_format import format_table
from stripewise.cli.options import Parser, add_db_option, path_argument, positive_int
from stripewise.model.wording import noun_for
from stripewise.output_files import EXPORT_SUFFIXES, OutputFileError, write_output

if TYPE_CHECKING:
    from stripewise.history.connection import Database
    from stripewise.history.experiments import ExperimentSummary, StoredExperiment

EXPORT_FORMATS = ("html", "csv", "json")

Action = Callable[[argparse.Namespace, "Database"], int]


# --- parsers -------------------------------------------------------------------------------


def fill_parser(experiment: argparse.ArgumentParser) -> None:
    actions = experiment.add_subparsers(
        dest="experiment_command", metavar="ACTION", required=True, parser_class=Parser
    )
    _add_run(actions)

    def add(name: str, help_text: str, action: Action) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = actions.add_parser(name, help=help_text)
        parser.set_defaults(experiment_action=action)
        add_db_option(parser, top=False)
        return parser

    listing = add("list", "kept experiments, newest first", _list)
    listing.add_argument("--json", action="store_true", help='{"experiments": [...]}')
    listing.add_argument("--trash", action="store_true", help="the deleted ones instead")

    show = add("show", "one experiment: its points with intervals and the recommendation", _show)
    show.add_argument("experiment_id", type=positive_int, metavar="ID")
    show.add_argument("--json", action="store_true", help="the design and the result")

    export = add("export", "write an experiment as HTML (with its charts), CSV or JSON", _export)
    export.add_argument("experiment_id", type=positive_int, metavar="ID")
    export.add_argument("--format", choices=EXPORT_FORMATS, help="default: from the FILE suffix")
    export.add_argument(
        "-o", "--output", type=path_argument, metavar="FILE", help="default: stdout"
    )

    compare = add("compare", "two experiments of the same parameters, value by value", _compare)
    compare.add_argument("experiment_ids", type=positive_int, nargs=2, metavar="ID")
    compare.add_argument("--json", action="store_true", help="machine-readable output")

    from stripewise.cli.experiment_apply import apply_recommendation, fill_apply_parser

    apply = add(
        "apply", "put a better verdict's values in force (journaled; --persist: at boot)",
        apply_recommendation,
    )  # fmt: skip
    fill_apply_parser(apply)

    delete = add("delete", "move an experiment and its runs to the trash", _delete)
    delete.add_argument("experiment_id", type=positive_int, metavar="ID")
    restore = add("restore", "bring an experiment and its runs back from the trash", _restore)
    restore.add_argument("experiment_id", type=positive_int, metavar="ID")


def _add_run(actions: argparse._SubParsersAction[Any]) -> None:
    """`experiment run`, whose options and driver live in cli.experiment_run."""
    from stripewise.cli.experiment_run import fill_run_parser, run

    parser: argparse.ArgumentParser = actions.add_parser(
        "run", help="vary one or two parameters on a target and say which value wins"
    )
    fill_run_parser(parser)
    parser.set_defaults(experiment_run=run)


# --- dispatch ------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    driver = getattr(args, "experiment_run", None)
    if driver is not None:
        return int(driver(args))
    from stripewise.history.errors import DatabaseError  # lazy: SQL only for the readers

    db = open_history(database_url(args))
    try:
        return int(args.experiment_action(args, db))
    except DatabaseError as exc:  # an unknown id, a stored document it cannot read...
        raise CliError(str(exc)) from None
    finally:
        db.close()


# --- list and show -------------------------------------------------------------------------


def _list(args: argparse.Namespace, db: Database) -> int:
    from stripewise.history.experiments import list_experiments

    found = list_experiments(db, trash=args.trash)
    if args.json:
        print(json.dumps({"experiments": [summary_json(e) for e in found]}, indent=2))
    elif not found:
        print("The trash holds no experiment." if args.trash else "No experiments kept yet.")
    else:
        rows = [
            [
                str(e.id),
                _local(e.created_at),
                e.status.value,
                ", ".join(e.parameters),
                str(e.points),
                str(e.runs),
                "-" if e.verdict is None else e.verdict.words,
                e.recommended_text or "-",
                e.name,
            ]
            for e in found
        ]
        header = ["ID", "Started", "Status", "Varied", "Points", "Runs", "Verdict", "Keep", "Name"]
        print(format_table(header, rows))
    return 0


def summary_json(e: ExperimentSummary) -> dict[str, Any]:
    """An experiment as `experiment list --json` gives it."""
    return {
        "id": e.id,
        "name": e.name,
        "target": e.target,
        "host": e.host,
        "parameters": list(e.parameters),
        "status": e.status.value,
        "created_at": e.created_at.isoformat(),
        "finished_at": None if e.finished_at is None else e.finished_at.isoformat(),
        "verdict": None if e.verdict is None else e.verdict.value,
        "recommended": None if e.recommended is None else dict(e.recommended),
        "points": e.points,
        "runs": e.runs,
        "deleted_at": None if e.deleted_at is None else e.deleted_at.isoformat(),
    }


def _show(args: argparse.Namespace, db: Database) -> int:
    from stripewise.history.experiment_export import experiment_json
    from stripewise.history.experiments import get_experiment

    stored = get_experiment(db, args.experiment_id)
    if args.json:
        sys.stdout.write(experiment_json(stored))
    else:
        print(show_text(stored))
    return 0


def show_text(stored: StoredExperiment) -> str:
    """Its facts, then the result as `experiment run` printed it: each point's mean with its
    95 % interval, the drift, and the recommendation with its evidence."""
    from stripewise.cli.experiment_text import result_text
    from stripewise.history.experiment_export import parameter_names

    s, design = stored.summary, stored.design
    lines = [
        f"Experiment #{s.id}: {s.name}",
        f"  status:    {s.status.value}{' (in the trash)' if s.deleted_at else ''}",
        f"  host:      {s.host}",
        f"  target:    {s.target}",
        f"  varied:    {', '.join(parameter_names(stored))}",
        f"  metric:    {design.objective.label} ({design.objective.metric.unit})",
        f"  precision: \u00b1 {design.half_width_pct:g} % or {design.max_passes} passes",
        f"  started:   {_local(s.created_at)}; finished: {_local(s.finished_at)}",
        f"  runs:      {len(stored.run_ids)}",
    ]
    if stored.result is None:
        status = s.status
        why = (
            f"it ended {status.value} before it had one" if status.finished else "it has not ended"
        )
        return "\n".join([*lines, "", f"No result: {why}."])
    # a failed point is named in the recommendation's reason already: no notes
    return "\n".join(lines) + "\n" + result_text(stored.result, [], just_saved=False).rstrip("\n")


def _local(moment: datetime | None) -> str:
    return "-" if moment is None else moment.astimezone().strftime("%Y-%m-%d %H:%M")


# --- export and compare --------------------------------------------------------------------


def _export(args: argparse.Namespace, db: Database) -> int:
    from stripewise.history.experiment_export import export_experiment
    from stripewise.history.experiments import get_experiment

    fmt = args.format or (EXPORT_SUFFIXES.get(args.output.suffix.lower()) if args.output else None)
    if fmt is None:
        raise CliError("choose --format html, csv or json (or name -o FILE with that suffix)")
    text = export_experiment(get_experiment(db, args.experiment_id), fmt)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        write_output(args.output, text)
    except OutputFileError as exc:
        raise CliError(str(exc)) from None
    print(f"experiment {args.experiment_id} written to {args.output}", file=sys.stderr)
    return 0


def _compare(args: argparse.Namespace, db: Database) -> int:
    from stripewise.cli.experiment_compare import comparable, compare_json, compare_text
    from stripewise.history.experiments import get_experiment

    first_id, second_id = args.experiment_ids
    first, second = get_experiment(db, first_id), get_experiment(db, second_id)
    comparable(first, second)
    if args.json:
        print(json.dumps(compare_json(first, second), indent=2))
    else:
        print(compare_text(first, second))
    return 0


# --- trash ---------------------------------------------------------------------------------


def _delete(args: argparse.Namespace, db: Database) -> int:
    from stripewise.history.experiments import delete_experiment, get_experiment

    if get_experiment(db, args.experiment_id).summary.deleted_at is not None:
        print(f"experiment {args.experiment_id} already in the trash")
        return 0
    moved = delete_experiment(db, args.experiment_id)
    print(
        f"moved experiment {args.experiment_id} and its {noun_for(len(moved), 'run')} "
        f"({len(moved)}) to the trash; `stripewise experiment restore {args.experiment_id}` "
        "brings them back"
    )
    return 0


def _restore(args: argparse.Namespace, db: Database) -> int:
    from stripewise.history.experiments import get_experiment, restore_experiment

    if get_experiment(db, args.experiment_id).summary.deleted_at is None:
        print(f"experiment {args.experiment_id} not in the trash: left as is")
        return 0
    moved = restore_experiment(db, args.experiment_id)
    print(f"restored experiment {args.experiment_id} and its {noun_for(len(moved), 'run')}")
    return 0

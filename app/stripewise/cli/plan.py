"""`stripewise plan FILE`: evaluate a plan file, print it (or its JSON), write its script.

A file that cannot be read as a plan exits 2 with one line naming file, table and key, and so
does one whose hardware is impossible (more disks on a controller than it has ports); a valid
plan whose arrays have problems exits 0 and lists them.

A plan of a machine (its host key, from `--inventory` or the file) is predicted with the
ceilings scaling tests measured on that machine: from the history `--db` or $STRIPEWISE_DB
names, else the user's own history when there is one; without a history, catalog figures or a
guess (docs/prediction-model.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from stripewise.cli.errors import EXIT_FAILED, CliError, database_url, open_history
from stripewise.cli.options import add_db_option, path_argument
from stripewise.history.errors import DatabaseError
from stripewise.history.location import ENV_VAR, default_database_url, plain_sqlite_path
from stripewise.inventory import InventoryError, load_inventory
from stripewise.model.ceilings import MeasuredCeiling
from stripewise.model.evaluate import PlanReport
from stripewise.model.plan import Plan
from stripewise.model.topology import Inventory
from stripewise.output_files import OutputFileError, write_output
from stripewise.planner.checks import evaluate_plan, hardware_errors
from stripewise.planner.commands import PlanNotReady
from stripewise.planner.plan_file import PlanFileError, load_plan
from stripewise.planner.report_json import format_plan, plan_json
from stripewise.planner.script import homehost, shell_script


def fill_parser(plan: argparse.ArgumentParser) -> None:
    plan.add_argument("file", type=path_argument, metavar="FILE", help="a plan file (TOML)")
    plan.add_argument("--json", action="store_true", help="machine-readable output")
    plan.add_argument(
        "--inventory",
        type=path_argument,
        metavar="FILE",
        default=argparse.SUPPRESS,
        help="the machine's snapshot, udev dump or umockdev file: its disks may then be named "
        "by kernel name or serial without [[disk]] tables",
    )
    plan.add_argument(
        "--script", type=path_argument, metavar="FILE", help="write the commented shell script"
    )
    add_db_option(plan, top=False)


def run(args: argparse.Namespace) -> int:
    inventory = _inventory(getattr(args, "inventory", None))
    try:
        plan = load_plan(args.file, inventory)
    except PlanFileError as exc:
        raise CliError(str(exc)) from None
    errors = hardware_errors(plan)
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise CliError(f"{args.file}: {errors[0].message}{more}")
    report = evaluate_plan(plan, measured=_measured_ceilings(args, plan))
    host = homehost(plan, inventory)
    status = 0
    if args.script is not None:
        status = _write_script(args.script, plan, report, host)
    if args.json:
        print(json.dumps(plan_json(plan, report, host), indent=2))
    else:
        print(format_plan(plan, report))
        if args.script is None and any(a.ok and a.array.members for a in report.arrays):
            print(f"commands: stripewise plan {args.file} --script FILE")
    return status


def _measured_ceilings(args: argparse.Namespace, plan: Plan) -> tuple[MeasuredCeiling, ...]:
    """The plan's host's measured ceilings. A history named (--db, $STRIPEWISE_DB) that cannot
    be read is an error; the user's own history is read only when it exists, and a problem
    with it is said and passed over: the plan is still evaluated on catalog figures."""
    if plan.host is None:
        return ()
    from stripewise.history.ceilings import newest_ceilings

    named = args.db is not None or bool(os.environ.get(ENV_VAR, "").strip())
    try:
        url = database_url(args) if named else default_database_url()
    except DatabaseError:
        return ()  # no data folder: no history of the user's own
    if not named and not ((path := plain_sqlite_path(url)) is not None and path.is_file()):
        return ()
    try:
        db = open_history(url)
        try:
            return newest_ceilings(db, plan.host)
        finally:
            db.close()
    except (CliError, DatabaseError) as exc:
        if named:
            raise CliError(f"measured ceilings not read: {exc}") from None
        print(
            f"stripewise: measured ceilings not read ({exc}): catalog figures used", file=sys.stderr
        )
        return ()


def _inventory(path: Path | None) -> Inventory | None:
    if path is None:
        return None
    try:
        return load_inventory(path)
    except InventoryError as exc:
        raise CliError(str(exc)) from None


def _write_script(path: Path, plan: Plan, report: PlanReport, host: str) -> int:
    try:
        script = shell_script(plan, report.arrays, host)
    except PlanNotReady as exc:
        print(f"stripewise: no script written: {exc}", file=sys.stderr)
        return EXIT_FAILED
    try:
        write_output(path, script, mode=0o700)
    except OutputFileError as exc:
        raise CliError(str(exc)) from None
    print(f"script written to {path}: read it, then run it as root", file=sys.stderr)
    return 0

"""`stripewise history ...`: read, compare, export and annotate recorded runs without the GUI.

Each action is a function taking the parsed arguments and an open store. `history list` reads
SQLite directly (quicklist) and PostgreSQL with psycopg alone (quicklist_pg); the SQL and
comparison imports stay inside the functions that need them so that it loads no SQLAlchemy.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stripewise.cli.errors import CliError, database_url, open_history
from stripewise.cli.history_format import (
    detail_json,
    format_comparison,
    format_detail,
    format_run_table,
    summary_json,
)
from stripewise.cli.options import Parser, add_db_option, nonempty, path_argument, positive_int
from stripewise.history import quicklist
from stripewise.model.run import RunSummary
from stripewise.model.wording import count_noun, noun_for
from stripewise.output_files import EXPORT_SUFFIXES, OutputFileError, write_output

if TYPE_CHECKING:
    from stripewise.history.store import HistoryStore
    from stripewise.model.run_detail import RunDetail

EXPORT_FORMATS = ("csv", "json", "html")

Action = Callable[[argparse.Namespace, "HistoryStore"], int]


# --- parsers -------------------------------------------------------------------------------


def fill_parser(history: argparse.ArgumentParser) -> None:
    actions = history.add_subparsers(
        dest="history_command", metavar="ACTION", required=True, parser_class=Parser
    )
    listing = actions.add_parser("list", help="runs, newest first")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.add_argument(
        "--limit", type=positive_int, default=None, metavar="N", help="the newest N runs only"
    )
    add_db_option(listing, top=False)
    show = actions.add_parser("show", help="one run with its results")
    show.add_argument("run_id", type=positive_int, metavar="ID")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    add_db_option(show, top=False)
    _add_actions(actions)


def _add_actions(actions: argparse._SubParsersAction[Any]) -> None:
    """compare, export and the annotating actions under `stripewise history`."""

    def add(name: str, help_text: str, run: Action) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = actions.add_parser(name, help=help_text)
        parser.set_defaults(history_run=run)
        add_db_option(parser, top=False)
        return parser

    def ids(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("run_ids", type=positive_int, nargs="+", metavar="ID")

    def one_id(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("run_id", type=positive_int, metavar="ID")

    compare = add("compare", "2 to 8 runs side by side against a baseline", _compare)
    ids(compare)
    compare.add_argument(
        "--baseline",
        type=positive_int,
        metavar="ID",
        help="default: the run marked as baseline when exactly one is, else the first ID",
    )
    compare.add_argument("--json", action="store_true", help="the comparison document")

    export = add("export", "write a run, or a comparison of several, as CSV, JSON or HTML", _export)
    ids(export)
    export.add_argument("--format", choices=EXPORT_FORMATS, help="default: from the -o FILE suffix")
    export.add_argument(
        "-o", "--output", type=path_argument, metavar="FILE", help="default: stdout"
    )
    export.add_argument("--baseline", type=positive_int, metavar="ID", help="for a comparison")

    tag = add("tag", "add tags to a run (or remove them)", _tag)
    one_id(tag)
    tag.add_argument("tags", nargs="+", type=nonempty, metavar="TAG")
    tag.add_argument("--remove", action="store_true", help="remove these tags instead")

    note = add("note", "set a run's notes (empty TEXT clears them)", _note)
    one_id(note)
    note.add_argument("text", metavar="TEXT")

    rename = add("rename", "give a run another name", _rename)
    one_id(rename)
    rename.add_argument("name", metavar="NAME")

    baseline = add("baseline", "mark a run as the one others are compared against", _baseline)
    one_id(baseline)
    baseline.add_argument("--clear", action="store_true", help="unmark it")

    delete = add("delete", "move runs to the trash (`history restore` brings them back)", _delete)
    ids(delete)
    delete.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    restore = add("restore", "bring runs back from the trash", _restore)
    ids(restore)


# --- dispatch ------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    url = database_url(args)
    if args.history_command == "list":
        runs = quicklist.list_runs(url, limit=args.limit)
        if runs is None and url.startswith("postgresql+psycopg://"):
            from stripewise.history import quicklist_pg  # psycopg alone, as quicklist for SQLite

            runs = quicklist_pg.list_runs(url, limit=args.limit)
        if runs is not None:
            _print_runs(runs, as_json=args.json)
            return 0
    # lazy: SQLAlchemy costs more than `history list` may take
    from stripewise.history import database
    from stripewise.history.store import HistoryStore

    try:
        db = open_history(url)
    except CliError as exc:  # it cannot be written to sync what waits: list it as it is
        if args.history_command != "list":
            raise
        runs = quicklist.list_runs(url, limit=args.limit, as_is=True)
        if runs is None:
            raise
        _print_runs(runs, as_json=args.json)
        print(f"stripewise: {exc}", file=sys.stderr)  # with what waits in the spool
        return 0
    try:
        store = HistoryStore(db)
        action: Action = getattr(args, "history_run", None) or _READERS[args.history_command]
        return action(args, store)
    except database.DatabaseError as exc:  # an unknown run id, a lost connection...
        raise CliError(str(exc)) from None
    finally:
        db.close()


def _list(args: argparse.Namespace, store: HistoryStore) -> int:
    _print_runs(store.list_runs(limit=args.limit), as_json=args.json)
    return 0


def _show(args: argparse.Namespace, store: HistoryStore) -> int:
    detail = store.get_run(args.run_id)
    if args.json:
        print(json.dumps(detail_json(detail), indent=2))
    else:
        from stripewise.history.stand_outs import with_stand_outs  # reads flagged runs' samples

        if store.in_trash(args.run_id):  # shown all the same: it may be what is looked for
            print(f"In the trash: `stripewise history restore {args.run_id}` brings it back.\n")
        print(format_detail(with_stand_outs(store, detail)))
    return 0


_READERS: dict[str, Action] = {"list": _list, "show": _show}


def _print_runs(runs: list[RunSummary], *, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"runs": [summary_json(r) for r in runs]}, indent=2))
    else:
        print(format_run_table(runs))


# --- compare -------------------------------------------------------------------------------


def _check_ids(run_ids: Sequence[int], baseline: int | None) -> None:
    from stripewise.model.compare import MAX_RUNS, MIN_RUNS  # lazy: kept out of `history list`

    if not MIN_RUNS <= len(run_ids) <= MAX_RUNS:
        raise CliError(f"compare needs {MIN_RUNS} to {MAX_RUNS} runs, got {len(run_ids)}")
    if twice := sorted({i for i in run_ids if run_ids.count(i) > 1}):
        raise CliError(f"run {twice[0]} is given twice")
    if baseline is not None and baseline not in run_ids:
        listed = ", ".join(str(i) for i in run_ids)
        raise CliError(f"baseline run {baseline} is not among the compared runs ({listed})")


def _compare(args: argparse.Namespace, store: HistoryStore) -> int:
    from stripewise.history import export  # lazy: SQL
    from stripewise.history.comparison import load_compared

    _check_ids(args.run_ids, args.baseline)
    comparison = load_compared(store, args.run_ids, args.baseline)
    if args.json:
        sys.stdout.write(export.export_comparison_json(comparison))
    else:
        print(format_comparison(comparison))
    return 0


# --- export --------------------------------------------------------------------------------


def _export_format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    found = EXPORT_SUFFIXES.get(args.output.suffix.lower()) if args.output is not None else None
    if found is None:
        raise CliError("choose --format csv, json or html (or name -o FILE with that suffix)")
    return found


def _export(args: argparse.Namespace, store: HistoryStore) -> int:
    from stripewise.history.comparison import export_text  # lazy: SQL

    fmt = _export_format(args)
    if len(args.run_ids) > 1 or args.baseline is not None:
        _check_ids(args.run_ids, args.baseline)
        what = "comparison of runs " + ", ".join(str(i) for i in args.run_ids)
    else:
        what = f"run {args.run_ids[0]}"
    return _write(args.output, export_text(store, args.run_ids, fmt, args.baseline), what)


def _write(output: Path | None, text: str, what: str) -> int:
    if output is None:
        sys.stdout.write(text)
        return 0
    try:
        write_output(output, text)
    except OutputFileError as exc:
        raise CliError(str(exc)) from None
    print(f"{what} written to {output}", file=sys.stderr)
    return 0


# --- annotations ---------------------------------------------------------------------------


def _checked(call: Callable[[], Any]) -> Any:
    """The store refuses names, tags and notes out of bounds with a ValueError."""
    try:
        return call()
    except ValueError as exc:
        raise CliError(str(exc)) from None


def _tag(args: argparse.Namespace, store: HistoryStore) -> int:
    current = list(store.get_run(args.run_id).summary.tags)
    given = [" ".join(tag.split()) for tag in args.tags]
    if args.remove:
        tags = [tag for tag in current if tag not in given]
    else:
        tags = current + [tag for tag in given if tag not in current]
    _checked(lambda: store.set_tags(args.run_id, tags))
    shown = ", ".join(store.get_run(args.run_id).summary.tags) or "none"
    print(f"run {args.run_id} tags: {shown}")
    return 0


def _note(args: argparse.Namespace, store: HistoryStore) -> int:
    _checked(lambda: store.set_notes(args.run_id, args.text))
    print(f"run {args.run_id} notes {'set' if args.text else 'cleared'}")
    return 0


def _rename(args: argparse.Namespace, store: HistoryStore) -> int:
    _checked(lambda: store.rename_run(args.run_id, args.name))
    print(f"run {args.run_id} renamed to {args.name.strip()!r}")
    return 0


def _baseline(args: argparse.Namespace, store: HistoryStore) -> int:
    store.set_baseline(args.run_id, not args.clear)
    print(f"run {args.run_id} is {'no longer' if args.clear else 'now'} a baseline")
    return 0


def _ids_text(run_ids: Sequence[int]) -> str:
    return ", ".join(str(i) for i in run_ids)


def _confirm(runs: Sequence[RunDetail]) -> bool:
    """Asks on the terminal; without one there is nobody to ask, so nothing is deleted."""
    if not sys.stdin.isatty():
        raise CliError("not deleting without --yes: standard input is not a terminal to ask on")
    for detail in runs:
        print(f"  #{detail.summary.id}  {detail.summary.name}", file=sys.stderr)
    asked = f"Move {count_noun(len(runs), 'run')} to the trash? [y/N] "
    print(asked, end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _delete(args: argparse.Namespace, store: HistoryStore) -> int:
    ids = list(dict.fromkeys(args.run_ids))
    runs = store.get_runs(ids)  # every id must exist before anything moves
    if not args.yes and not _confirm(runs):
        print("nothing deleted", file=sys.stderr)
        return 1
    moved = store.delete_runs(ids)
    if moved:
        print(
            f"moved {noun_for(len(moved), 'run')} {_ids_text(moved)} to the trash; "
            f"`stripewise history restore {' '.join(map(str, moved))}` brings "
            f"{noun_for(len(moved), 'it', 'them')} back"
        )
    if kept := sorted(set(ids) - set(moved)):
        print(f"{noun_for(len(kept), 'run')} {_ids_text(kept)} already in the trash")
    return 0


def _restore(args: argparse.Namespace, store: HistoryStore) -> int:
    ids = sorted(set(args.run_ids))
    restored = store.restore_runs(ids)
    if restored:
        print(f"restored {noun_for(len(restored), 'run')} {_ids_text(restored)}")
    if kept := [i for i in ids if i not in restored]:
        print(f"{noun_for(len(kept), 'run')} {_ids_text(kept)} not in the trash: left as is")
    return 0

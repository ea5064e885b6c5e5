"""Entry point `stripewise`: the GUI by default, headless subcommands otherwise.

Imports are deferred into the command functions so each command loads only what it uses.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from stripewise import __version__
from stripewise.gui import VIEW_NAMES

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class CliError(Exception):
    """A problem the user can act on: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line instead of argparse's usage block: scripts read the message."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _add_db_option(parser: argparse.ArgumentParser, *, top: bool) -> None:
    parser.add_argument(
        "--db",
        metavar="URL",
        default=None if top else argparse.SUPPRESS,
        help="history database: any SQLAlchemy URL or a SQLite file path "
        "(default: $STRIPEWISE_DB, else history.db in the user's data directory)",
    )


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """With `argv`, only the command it runs gets its full parser; the others are listed with
    their help, which is all `stripewise --help` shows. Building every command's parser costs
    more than `history list` may take. Without `argv`, every parser is built."""
    parser = _Parser(
        prog="stripewise",
        description="Storage-tuning assistant: hardware map, array planner, tuning, benchmarks.",
    )
    parser.add_argument("--version", action="version", version=f"stripewise {__version__}")
    _add_db_option(parser, top=True)
    parser.add_argument("--screenshot", metavar="FILE", type=Path, help="render the window to PNG")
    parser.add_argument(
        "--view", choices=VIEW_NAMES, default=None, help="page to open (default: the last one)"
    )
    parser.add_argument(
        "--theme",
        choices=("system", "light", "dark"),
        default="system",
        help="colour scheme (default: follow the system)",
    )
    parser.add_argument(
        "--inventory",
        type=Path,
        metavar="FILE",
        help="show a saved snapshot, `udevadm info --export-db` or umockdev file "
        "instead of this machine's hardware",
    )
    parser.add_argument(
        "--window-size",
        type=_window_size,
        metavar="WxH",
        help="window size in pixels, e.g. 1600x1000 (useful with --screenshot)",
    )
    parser.add_argument("--bench-startup", action="store_true", help=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    wanted = None if argv is None else _command_in(argv, _options_with_value(parser))
    for name, help_text in COMMAND_HELP.items():
        sub = commands.add_parser(name, help=help_text)
        if argv is None or name == wanted:
            _FILLERS[name](sub)
    return parser


def _options_with_value(parser: argparse.ArgumentParser) -> set[str]:
    """The parser's own options that take a value (--db URL), read off the parser itself."""
    return {
        option
        for action in parser._actions  # argparse keeps no public list of them
        if action.nargs != 0
        for option in action.option_strings
    }


def _command_in(argv: Sequence[str], with_value: set[str]) -> str | None:
    """The subcommand word, skipping the top-level options and their values."""
    tokens = iter(argv)
    for token in tokens:
        if token in with_value:
            next(tokens, None)
        elif not token.startswith("-"):
            return token
    return None


def _fill_doctor(doctor: argparse.ArgumentParser) -> None:
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    _add_db_option(doctor, top=False)


def _fill_history(history: argparse.ArgumentParser) -> None:
    from stripewise import cli_history

    history_commands = history.add_subparsers(
        dest="history_command", metavar="ACTION", required=True, parser_class=_Parser
    )
    listing = history_commands.add_parser("list", help="runs, newest first")
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--limit", type=_positive_int, default=None, metavar="N")
    _add_db_option(listing, top=False)
    show = history_commands.add_parser("show", help="one run with its results")
    show.add_argument("run_id", type=_positive_int, metavar="ID")
    show.add_argument("--json", action="store_true")
    _add_db_option(show, top=False)
    cli_history.add_actions(history_commands, _add_db_option, _positive_int)


def _fill_inventory(inventory: argparse.ArgumentParser) -> None:
    inventory.add_argument("--json", action="store_true", help="print the snapshot JSON")
    inventory.add_argument(
        "--from",
        dest="source",
        type=Path,
        metavar="FILE",
        help="a saved snapshot, `udevadm info --export-db` output, or a umockdev recording",
    )
    inventory.add_argument("--save", type=Path, metavar="FILE", help="write a snapshot file")


def _fill_plan(plan: argparse.ArgumentParser) -> None:
    plan.add_argument("file", type=Path, metavar="FILE", help="a plan file (TOML)")
    plan.add_argument("--json", action="store_true", help="machine-readable output")
    plan.add_argument(
        "--inventory",
        type=Path,
        metavar="FILE",
        default=argparse.SUPPRESS,
        help="the machine's snapshot, udev dump or umockdev file: its disks may then be named "
        "by kernel name or serial without [[disk]] tables",
    )
    plan.add_argument(
        "--script", type=Path, metavar="FILE", help="write the commented shell script"
    )


def _fill_bench(bench: argparse.ArgumentParser) -> None:
    bench.add_argument(
        "--target",
        required=True,
        metavar="PATH",
        help="a directory on a mounted filesystem, or a whole block device",
    )
    bench.add_argument("--size", required=True, metavar="SIZE", help="e.g. 8G, 512M")
    bench.add_argument("--engine", choices=("fio", "builtin"), default="builtin")
    bench.add_argument(
        "--phases",
        default="seq_write,rewrite,seq_read,random_read",
        help="comma-separated: seq_write, rewrite, seq_read, random_read, random_write, mixed",
    )
    bench.add_argument("--block-size", default="1M", metavar="SIZE")
    io = bench.add_mutually_exclusive_group()
    io.add_argument("--direct", action="store_true", default=True, help="O_DIRECT (default)")
    io.add_argument("--buffered", action="store_true", help="through the page cache")
    bench.add_argument("--streams", type=_positive_int, default=1, metavar="N")
    bench.add_argument("--queue-depth", type=_positive_int, default=1, metavar="N")
    bench.add_argument("--repeat", type=_positive_int, default=1, metavar="N")
    bench.add_argument(
        "--rate", type=_finite, default=2.0, metavar="HZ", help="samples per second, 1 to 10"
    )
    bench.add_argument("--json", action="store_true", help="one JSON event per line")
    bench.add_argument("--save", action="store_true", help="keep the run in the history")
    bench.add_argument(
        "--confirm-serial",
        metavar="SERIAL",
        help="required to write to a block device: its serial number",
    )
    bench.add_argument(
        "--overwrite",
        action="store_true",
        help="with --confirm-serial: write over a partition table or filesystem",
    )
    _add_db_option(bench, top=False)


def _fill_import(parser: argparse.ArgumentParser) -> None:
    from stripewise import cli_import

    cli_import.fill_parser(parser)
    _add_db_option(parser, top=False)


def _fill_tune(tune: argparse.ArgumentParser) -> None:
    from stripewise import cli_tune, cli_tune_write

    cli_tune_write.add_write_commands(cli_tune.fill_parser(tune, _Parser))


def _fill_db(db: argparse.ArgumentParser) -> None:
    db_commands = db.add_subparsers(
        dest="db_command", metavar="ACTION", required=True, parser_class=_Parser
    )
    info = db_commands.add_parser("info", help="URL, schema revision and run count")
    _add_db_option(info, top=False)
    aside = db_commands.add_parser(
        "move-aside", help="rename an unreadable SQLite file so a fresh one is created"
    )
    _add_db_option(aside, top=False)


def _fill_desktop(desktop: argparse.ArgumentParser) -> None:
    desktop.add_argument(
        "--prefix",
        type=Path,
        default=None,
        help="data directory to install into (default: $XDG_DATA_HOME or ~/.local/share)",
    )


COMMAND_HELP = {
    "doctor": "check what Stripewise can do on this machine",
    "history": "list, show, compare, export, tag and delete recorded runs",
    "inventory": "controllers, slots and disks (live, or from a snapshot or udev dump)",
    "plan": "evaluate an array plan file and write its commands",
    "bench": "run a benchmark through the helper",
    "import": "add bonnie++, fio or iozone results recorded elsewhere to the history",
    "tune": "tuning presets and the current values of the storage tunables",
    "db": "the history database itself",
    "install-desktop-entry": "add Stripewise to the desktop's application menu",
}
_FILLERS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "doctor": _fill_doctor,
    "history": _fill_history,
    "inventory": _fill_inventory,
    "plan": _fill_plan,
    "bench": _fill_bench,
    "import": _fill_import,
    "tune": _fill_tune,
    "db": _fill_db,
    "install-desktop-entry": _fill_desktop,
}


def _window_size(text: str) -> tuple[int, int]:
    width, sep, height = text.lower().partition("x")
    if not sep or not width.isdigit() or not height.isdigit():
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 1600x1000: {text!r}")
    size = int(width), int(height)
    if not (640 <= size[0] <= 7680 and 480 <= size[1] <= 4320):
        raise argparse.ArgumentTypeError(f"window size out of range 640x480..7680x4320: {text}")
    return size


def _finite(text: str) -> float:
    """A number; nan and inf, which float() reads too, cannot be sent to the helper."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more: {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    args = build_parser(words).parse_args(words)
    try:
        if args.command is None:
            from stripewise.gui.app import run_gui

            return run_gui(args)
        if args.command == "doctor":
            return _doctor(args)
        if args.command == "history":
            from stripewise import cli_history

            return cli_history.run(args, _database_url(args))
        if args.command == "import":
            from stripewise import cli_import

            return cli_import.run(args, _database_url(args))
        if args.command == "inventory":
            from stripewise import cli_inventory

            return cli_inventory.run(args)
        if args.command == "plan":
            from stripewise import cli_plan

            return cli_plan.run(args)
        if args.command == "bench":
            from stripewise import cli_bench

            return cli_bench.run(args)
        if args.command == "tune":
            from stripewise import cli_tune

            return cli_tune.run(args)
        if args.command == "db":
            return _db(args)
        if args.command == "install-desktop-entry":
            from stripewise.desktop_entry import install_desktop_entry

            for path in install_desktop_entry(args.prefix):
                print(path)
            return EXIT_OK
    except CliError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return 130
    raise AssertionError(f"unhandled command {args.command}")


def _fail(message: str) -> int:
    print(f"stripewise: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _database_url(args: argparse.Namespace) -> str:
    from stripewise.history.errors import DatabaseError
    from stripewise.history.location import resolve_database_url

    try:
        return resolve_database_url(args.db)
    except DatabaseError as exc:
        raise CliError(str(exc)) from None


def _doctor(args: argparse.Namespace) -> int:
    from stripewise import doctor

    checks = doctor.run_checks(_database_url(args))
    if args.json:
        print(json.dumps(doctor.as_json(checks), indent=2))
    else:
        print("\n".join(doctor.format_lines(checks)))
    return EXIT_OK if doctor.can_run(checks) else EXIT_FAILED


def _db(args: argparse.Namespace) -> int:
    from stripewise.history import database

    url = _database_url(args)
    if args.db_command == "move-aside":
        path = database.sqlite_path_of(url)
        if path is None:
            raise CliError(f"{database.display_url(url)} is not a SQLite file: nothing to move")
        if not path.exists():
            raise CliError(f"{path} does not exist: nothing to move")
        moved = database.move_aside(path)
        print(f"moved {path} to {moved}; a fresh database is created at the next start")
        return EXIT_OK
    try:
        db = database.open_database(url, migrate=False)
    except database.DatabaseError as exc:
        raise CliError(str(exc)) from None
    try:
        runs = None
        if db.schema_revision == database.HEAD_REVISION:
            from stripewise.history.store import HistoryStore

            runs = HistoryStore(db).count_runs()  # DatabaseError when a table is missing
    except database.DatabaseError as exc:
        raise CliError(str(exc)) from None
    finally:
        db.close()
    print(f"url:      {database.display_url(url)}")
    print(f"schema:   {db.schema_revision or 'empty'} (this version: {database.HEAD_REVISION})")
    if runs is not None:
        print(f"runs:     {runs}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

"""Entry point `stripewise`: the GUI by default, headless subcommands otherwise.

Each command is a module of this package with `fill_parser(parser)` and `run(args) -> int`
(`Command`); only the one being run is imported, so each command loads only what it uses.

A reader that stops reading (`stripewise history show 3 | head`) ends any command quietly with
EXIT_PIPE_CLOSED, here once for all of them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import select
import sys
from collections.abc import Iterable, Sequence
from typing import Protocol, cast

from stripewise.cli.errors import EXIT_PIPE_CLOSED, CliError, fail
from stripewise.cli.options import Parser, add_db_option, path_argument
from stripewise.cli.terminal import guard_terminals
from stripewise.cli.version import VersionAction
from stripewise.gui import VIEW_NAMES


class Command(Protocol):
    """What a command module provides."""

    def fill_parser(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


# command -> (its module in this package, its line in `stripewise --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "doctor": ("doctor", "check what Stripewise can do on this machine"),
    "history": ("history", "list, show, compare, export, tag and delete recorded runs"),
    "inventory": (
        "inventory",
        "controllers, slots and disks (live, or from a snapshot or udev dump)",
    ),
    "bays": ("bays", "the chassis's bays and the disk in each: show, import FILE, export FILE"),
    "plan": ("plan", "evaluate an array plan file and write its commands"),
    "bench": ("bench", "run a benchmark through the helper"),
    "experiment": (
        "experiment",
        "vary a tunable or the workload, say which value wins; list, show, export, compare",
    ),
    "import": (
        "imports",
        "add bonnie++, fio or iozone results recorded elsewhere to the history",
    ),
    "tune": ("tune", "tuning presets and the current values of the storage tunables"),
    "db": ("db", "the history database itself"),
    "hosts": ("hosts", "host groups for runs on several hosts; check their fio servers"),
    "health": ("health", "each disk's SMART health: failing, worn or fine (smartctl)"),
    "install-desktop-entry": ("desktop", "add Stripewise to the desktop's application menu"),
}


def command(name: str) -> Command:
    """The command's module, imported now: loading them all costs more than `history list`
    may take."""
    return cast(Command, importlib.import_module(f"stripewise.cli.{COMMANDS[name][0]}"))


# what only the window reads (--theme, its colours, misleads nobody when a command ignores it)
WINDOW_OPTIONS = ("--screenshot", "--view", "--inventory", "--window-size", "--remote")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """With `argv`, only the command it runs gets its full parser; the others are listed with
    their help, which is all `stripewise --help` shows. Without `argv`, every parser is built."""
    parser = Parser(
        prog="stripewise",
        description="Storage-tuning assistant: hardware map, array planner, tuning, benchmarks.",
    )
    parser.add_argument(
        "--version",
        action=VersionAction,
        help="show the versions of Stripewise, Qt, PySide6, Python and fio, and exit",
    )
    add_db_option(parser, top=True)
    parser.add_argument(
        "--screenshot", metavar="FILE", type=path_argument, help="render the window to PNG"
    )
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
        type=path_argument,
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
    parser.add_argument(
        "--remote",
        action="store_true",
        help="show the window on a private VNC server (loopback only, one-time password) to reach "
        "through `ssh -L`: for a server without a desktop",
    )
    parser.add_argument("--bench-startup", action="store_true", help=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    wanted = None if argv is None else _command_in(argv, _options_with_value(parser))
    for name, (_module, help_text) in COMMANDS.items():
        sub = commands.add_parser(name, help=help_text)
        if argv is None or name == wanted:
            command(name).fill_parser(sub)
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
    at = _command_at(argv, with_value)
    return None if at is None else argv[at]


def _command_at(argv: Sequence[str], with_value: set[str]) -> int | None:
    skip_value = False
    for index, token in enumerate(argv):
        if skip_value:
            skip_value = False
        elif not token.startswith("-"):
            return index
        elif "=" not in token:
            skip_value = _long_option(token, with_value) in with_value
    return None


def _long_option(token: str, options: Iterable[str]) -> str | None:
    """The option a word names, as argparse reads it: whole, or a prefix of exactly one."""
    name = token.partition("=")[0]
    longs = [option for option in options if option.startswith("--")]
    matches = [o for o in longs if o == name] or [o for o in longs if o.startswith(name)]
    return matches[0] if name.startswith("--") and len(matches) == 1 else None


def _window_option_with(words: Sequence[str], parser: argparse.ArgumentParser) -> str | None:
    """A window option given before a command, which would otherwise be dropped in silence:
    `stripewise --inventory dump.txt inventory` must not show this machine instead."""
    at = _command_at(words, _options_with_value(parser))
    for token in words[:at]:
        option = _long_option(token, parser._option_string_actions)
        if option in WINDOW_OPTIONS:
            return option
    return None


def _window_size(text: str) -> tuple[int, int]:
    width, sep, height = text.lower().partition("x")
    if not sep or not width.isdigit() or not height.isdigit():
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 1600x1000: {text!r}")
    size = int(width), int(height)
    if not (640 <= size[0] <= 7680 and 480 <= size[1] <= 4320):
        raise argparse.ArgumentTypeError(f"window size out of range 640x480..7680x4320: {text}")
    return size


def main(argv: list[str] | None = None) -> int:
    try:
        try:
            return _main(argv)
        finally:
            # What is still buffered goes now, not at interpreter exit where a closed pipe can
            # only be reported as "Exception ignored ... BrokenPipeError"; `--help` too.
            sys.stdout.flush()
    except BrokenPipeError:
        if not _stdout_reader_gone():
            raise  # a pipe to a helper or a tool: a real failure, not a reader that had enough
        # Python's recipe (docs: signal, "Note on SIGPIPE"): stdout to devnull, so the flush
        # at exit finds somewhere to put what is left instead of failing again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_PIPE_CLOSED


def _utf8(word: str) -> bool:
    """Whether a word of the command line was UTF-8: Python keeps other bytes as lone
    surrogates (surrogateescape), which no text encoding takes back."""
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _stdout_reader_gone() -> bool:
    """The read end of stdout is closed: Linux reports POLLERR on a pipe with no reader."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _fd, events in poller.poll(0))
    except (OSError, ValueError):  # no file descriptor (captured, or closed)
        return False


def _main(argv: list[str] | None) -> int:
    guard_terminals()
    words = sys.argv[1:] if argv is None else argv
    garbled = next((word for word in words if not _utf8(word)), None)
    if garbled is not None:  # stored or printed, it would fail far from here (a run measured)
        shown = os.fsencode(garbled).decode("utf-8", "backslashreplace")
        return fail(f"argument '{shown}' is not UTF-8 text: names, tags, notes and paths are")
    parser = build_parser(words)
    args = parser.parse_args(words)
    try:
        window_option = args.command and _window_option_with(words, parser)
        if window_option:
            raise CliError(
                f"{window_option} is an option of the window, not of `stripewise {args.command}`"
            )
        if args.command is None:
            from stripewise.cli import window  # lazy: Qt loads only for the window

            return window.run(args)
        return command(args.command).run(args)
    except CliError as exc:
        return fail(str(exc))
    except KeyboardInterrupt:
        return 130

"""The parsers' commands and options as plain values, read once off argparse.

argparse keeps no public list of a parser's actions or subcommands, so this module is the one
place that reads its private attributes; the renderers see only these dataclasses. Options and
subcommands whose help is `argparse.SUPPRESS` are internal (tests, benches) and left out.
"""

from __future__ import annotations

import argparse
import enum
from dataclasses import dataclass
from pathlib import Path


class ValueKind(enum.Enum):
    """What a shell should offer for an option's value or a positional argument."""

    NONE = "none"  # a flag: takes no value
    WORD = "word"  # free text: nothing to offer
    CHOICES = "choices"
    FILE = "file"  # files and directories
    DIRECTORY = "directory"


# Metavars that name something on disk. --db takes a URL or a SQLite file path; a file is what
# an admin types most often, so it completes as one.
_FILE_METAVARS = frozenset({"FILE", "PATH", "URL"})
_DIRECTORY_METAVARS = frozenset({"DIR", "DIRECTORY"})


@dataclass(frozen=True)
class Argument:
    """One option (flags set) or positional argument (no flags) of a command."""

    flags: tuple[str, ...]  # e.g. ("-o", "--output"); empty for a positional
    metavar: str  # what the value is called: "FILE", or the dest in capitals
    help: str
    kind: ValueKind
    choices: tuple[str, ...] = ()
    required: bool = False
    repeatable: bool = False  # --host A --host B, or a positional taking several values
    optional_value: bool = False  # a positional with nargs "?" or "*"
    excludes: tuple[str, ...] = ()  # flags of options in a mutually exclusive group with it
    is_help: bool = False  # -h/--help: every parser has it, so a man page says it once
    count: int = 1  # values a positional takes every time (`compare ID ID`: 2)
    negatable: bool = False  # --latency-log | --no-latency-log (BooleanOptionalAction)

    @property
    def synopsis_flag(self) -> str:
        """The flag a synopsis shows: the first long one (the name an admin reads), both of a
        negatable pair."""
        if self.negatable:
            return " | ".join(self.flags)
        return next((flag for flag in self.flags if flag.startswith("--")), self.flags[0])

    @property
    def takes_value(self) -> bool:
        return self.kind is not ValueKind.NONE


@dataclass(frozen=True)
class Command:
    """A parser: the program itself or one of its (nested) subcommands."""

    path: tuple[str, ...]  # ("stripewise", "history", "list")
    help: str  # its line in the parent's command list
    description: str
    options: tuple[Argument, ...]
    positionals: tuple[Argument, ...]
    subcommands: tuple[Command, ...]
    subcommand_metavar: str = "COMMAND"

    @property
    def name(self) -> str:
        return " ".join(self.path)

    def walk(self) -> list[Command]:
        """This command and every one below it, depth first, in the parser's order."""
        found = [self]
        for sub in self.subcommands:
            found.extend(sub.walk())
        return found


def read_parser(parser: argparse.ArgumentParser, help_text: str = "") -> Command:
    return _read(parser, (parser.prog,), help_text)


def _read(parser: argparse.ArgumentParser, path: tuple[str, ...], help_text: str) -> Command:
    options: list[Argument] = []
    positionals: list[Argument] = []
    subcommands: list[Command] = []
    metavar = "COMMAND"
    excluded = _exclusions(parser)
    for action in parser._actions:  # no public list (see the module's docstring)
        if isinstance(action, argparse._SubParsersAction):
            metavar = str(action.metavar or action.dest).upper()
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) in seen or helps.get(name) == argparse.SUPPRESS:
                    continue  # an alias of one already read, or hidden
                seen.add(id(sub))
                subcommands.append(_read(sub, (*path, name), helps.get(name, "")))
        elif action.help != argparse.SUPPRESS:
            argument = _argument(action, excluded.get(action, ()), parser.prog)
            (options if action.option_strings else positionals).append(argument)
    return Command(
        path=path,
        help=help_text,
        description=parser.description or help_text,
        options=tuple(options),
        positionals=tuple(positionals),
        subcommands=tuple(subcommands),
        subcommand_metavar=metavar,
    )


def _exclusions(parser: argparse.ArgumentParser) -> dict[argparse.Action, tuple[str, ...]]:
    excluded: dict[argparse.Action, tuple[str, ...]] = {}
    for group in parser._mutually_exclusive_groups:
        for action in group._group_actions:
            excluded[action] = tuple(
                flag
                for other in group._group_actions
                if other is not action
                for flag in other.option_strings
            )
    return excluded


def _argument(action: argparse.Action, excludes: tuple[str, ...], prog: str) -> Argument:
    choices = tuple(str(choice) for choice in action.choices) if action.choices else ()
    takes_value = action.nargs != 0
    many = action.nargs in ("+", "*", argparse.REMAINDER) or isinstance(
        action, argparse._AppendAction
    )
    return Argument(
        flags=tuple(action.option_strings),
        metavar=_metavar(action),
        help=_expanded_help(action, prog),
        kind=_kind(action, choices) if takes_value else ValueKind.NONE,
        choices=choices,
        required=action.required,
        repeatable=many,
        optional_value=action.nargs in ("?", "*"),
        excludes=excludes,
        is_help=isinstance(action, argparse._HelpAction),
        count=action.nargs if isinstance(action.nargs, int) and action.nargs > 1 else 1,
        negatable=isinstance(action, argparse.BooleanOptionalAction),
    )


def _expanded_help(action: argparse.Action, prog: str) -> str:
    """The help as `--help` prints it: `%%` one `%`, `%(default)s` the default, as argparse's
    HelpFormatter._expand_help does."""
    if not action.help or "%" not in action.help:
        return action.help or ""
    params = {name: value for name, value in vars(action).items() if value is not argparse.SUPPRESS}
    params["prog"] = prog
    for name, value in list(params.items()):
        if hasattr(value, "__name__"):
            params[name] = value.__name__
    if params.get("choices") is not None:
        params["choices"] = ", ".join(str(choice) for choice in params["choices"])
    return action.help % params


def _metavar(action: argparse.Action) -> str:
    if isinstance(action.metavar, str):
        return action.metavar
    return action.dest.upper().replace("_", "-")


def _kind(action: argparse.Action, choices: tuple[str, ...]) -> ValueKind:
    if choices:
        return ValueKind.CHOICES
    metavar = action.metavar if isinstance(action.metavar, str) else ""
    if metavar in _DIRECTORY_METAVARS:
        return ValueKind.DIRECTORY
    if metavar in _FILE_METAVARS or action.type is Path:
        return ValueKind.FILE
    return ValueKind.WORD

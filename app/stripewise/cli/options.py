"""The parser class, argument types and options the commands' parsers share."""

from __future__ import annotations

import argparse
import contextlib
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from stripewise.cli.errors import EXIT_USAGE
from stripewise.model.numbers import ascii_float, ascii_int

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

MAX_WHOLE = 2**63 - 1  # SQLite's and PostgreSQL's largest integer


# a minus, then a number and what may follow it: a negative size ("-4M") or window size
# ("-1x5"), or -inf, which argparse's own pattern (digits only) takes for an option, so
# `--size -4M` said "expected one argument", not why; no option of ours starts with a digit
_NEGATIVE_VALUE = re.compile(r"^-(?:(?:\d|\.\d)[A-Za-z0-9.]*|inf|infinity|nan)$", re.IGNORECASE)


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # argparse's private pattern (3.11 to 3.13): where it is gone, the old message stays
        if hasattr(self, "_negative_number_matcher"):
            self._negative_number_matcher = _NEGATIVE_VALUE

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        """Help and usage into a reader that is gone are dropped, as Python 3.11.4's argparse
        does (Debian 12's 3.11.2 raised, so `stripewise --help` into a closed pipe exited 141
        there and 0 elsewhere)."""
        with contextlib.suppress(OSError):
            super()._print_message(message, file)

    def error(self, message: str) -> NoReturn:
        """One line instead of argparse's usage block: scripts read the message."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def add_db_option(parser: argparse.ArgumentParser, *, top: bool) -> None:
    parser.add_argument(
        "--db",
        metavar="URL",
        default=None if top else argparse.SUPPRESS,
        help="history database: any SQLAlchemy URL or a SQLite file path "
        "(default: $STRIPEWISE_DB, else history.db in the user's data directory)",
    )


def finite(text: str) -> float:
    """A number in ASCII digits; nan and inf, which float() reads too, cannot be sent to the
    helper."""
    if text.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    try:
        value = ascii_float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def positive_int(text: str) -> int:
    return _at_least(1, text)


def whole_number(text: str) -> int:
    return _at_least(0, text)


def _at_least(low: int, text: str) -> int:
    """ASCII digits, at most MAX_WHOLE: run ids and counts go to SQL as 64-bit integers."""
    shown = repr(text) if len(text) <= 40 else f"{text[:20]!r}... ({len(text)} characters)"
    try:
        value = ascii_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {shown}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be {low} or more: {value}")
    if value > MAX_WHOLE:
        raise argparse.ArgumentTypeError(f"too large: {shown} (at most {MAX_WHOLE})")
    return value


def path_argument(text: str) -> Path:
    """A file or directory named on the command line: never empty (Path("") is ".", which
    every message would then name instead of the empty value)."""
    if not text:
        raise argparse.ArgumentTypeError("empty path")
    return Path(text)


def nonempty(text: str) -> str:
    """A name, id or serial: something besides spaces (an empty one would mean none)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty")
    return text


# the spec's wire fields (what the helper's refusal names) as the options that set them
_OPTIONS = {
    "target": "--target",
    "size": "--size",
    "block_size": "--block-size",
    "phases": "--phases",
    "streams": "--streams",
    "repetitions": "--repeat",
    "sample_rate_hz": "--rate",
    "engine": "--engine",
    "queue_depth": "--queue-depth",
    "cpu_latency_us": "--cpu-latency-us",
    "steady_state": "--steady-state",
    "precondition": "--precondition",
    "max_rounds": "--max-rounds",
    "confirm_serial": "--confirm-serial",
}


def as_options(refusal: str) -> str:
    """A spec refusal ("sample_rate_hz: 1 to 10; size: ...") in the command's words ("--rate:
    1 to 10; --size: ..."): each field the options set named by its option where it labels a
    reason, and anywhere when its name is an identifier (steady_state), not a word of prose."""
    fields = "|".join(_OPTIONS)
    labelled = re.sub(rf"(^|; )({fields}):", lambda f: f"{f[1]}{_OPTIONS[f[2]]}:", refusal)
    named = "|".join(field for field in _OPTIONS if "_" in field)
    return re.sub(rf"(?<![-\w])({named})\b", lambda f: _OPTIONS[f[1]], labelled)

"""Files people hand Stripewise (plans, presets, results to import, inventory snapshots and
dumps, the catalog), read with bounds: a regular file only (never /dev/zero, a FIFO or a
directory), no larger than its kind's cap, checked before a byte is read; JSON and TOML nested
at most MAX_DEPTH deep. Every refusal is an InputFileError whose message is one line naming
the file; callers turn it into their own error type.

Standard library only: the helper bounds its JSON requests with `parse_json` too.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import tomllib
from collections.abc import Iterator
from typing import Any

# Plans, presets, snapshots and fio reports nest 10 levels at most. The parsers recurse once
# per level, and so does much that walks what they return: thousands of `[` end in a
# RecursionError somewhere far from the file.
MAX_DEPTH = 64

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)
# Brackets nest only outside strings (and TOML comments): those are matched whole, unnamed.
# Linear on any text: the quantifiers are possessive, and a quote that opens no whole string
# matches `cut` once (retrying at each later quote rescanned to the end each time, O(n^2)).
_BRACKETS = r"|(?P<open>[\[{])|(?P<close>[\]}])"
_ONLY_BRACKETS = re.compile(_BRACKETS[1:])
_JSON_TOKENS = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"|(?P<cut>")' + _BRACKETS, re.DOTALL)
_TOML_TOKENS = re.compile(
    r'"""[^"\\]*+(?:(?:\\.|"(?!""))[^"\\]*+)*+"{3,5}'
    r"|'''[^']*+(?:'(?!'')[^']*+)*+'{3,5}"
    r'|"(?!"")[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'  # `"""` opens a multi-line string, never ""
    r"|'(?!'')[^'\n]*+'"
    r"|(?P<cut>[\"'])"
    r"|#[^\n]*+"
    r"|(?P<dot>\.)|(?P<end>[=,\n])" + _BRACKETS,  # a key's dots nest tables; `=`... end it
    re.DOTALL,
)


# `\ud800`..`\udfff` as JSON escapes them: a surrogate, text only as half of a pair
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
LONE_SURROGATE = "a string holds an unpaired UTF-16 surrogate (a \\udXXX escape): not text"


class InputFileError(ValueError):
    """A file refused before or while reading it; the message is one line naming it."""


class UnreadableFileError(InputFileError, OSError):
    """A file that could not be opened or read at all: an OSError too, as callers expect."""


def read_bytes(path: str | os.PathLike[str], *, what: str, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most `max_bytes`; `what` names its kind in messages
    ("a plan file"). The checks are made on the open descriptor, never on the name before
    opening it (which could point elsewhere by then), and at most max_bytes + 1 bytes are
    read, so a file that grows meanwhile or reports no size (/proc) is refused too."""
    name = os.fspath(path)
    try:
        # O_NONBLOCK: a FIFO opens at once instead of waiting for a writer
        fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as exc:
        raise UnreadableFileError(f"cannot read {name}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((k for test, k in _KINDS if test(info.st_mode)), "a special file")
            raise InputFileError(f"{name} is {kind}, not a regular file")
        if info.st_size > max_bytes:
            raise InputFileError(_too_large(name, f"{info.st_size:,} bytes", what, max_bytes))
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise UnreadableFileError(f"cannot read {name}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise InputFileError(_too_large(name, f"more than {_size(max_bytes)}", what, max_bytes))
    return data


def read_text(path: str | os.PathLike[str], *, what: str, max_bytes: int) -> str:
    """`read_bytes` as UTF-8 text."""
    data = read_bytes(path, what=what, max_bytes=max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(f"{os.fspath(path)}: not UTF-8 text (byte {exc.start})") from None


def parse_json(text: str, origin: str, *, surrogates: bool = False) -> Any:
    """JSON nested at most MAX_DEPTH deep, without NaN or Infinity (not JSON, though Python
    reads them), nor (unless `surrogates`) an unpaired surrogate; `origin` names the text in
    messages. The helper's requests keep theirs: each field's own check refuses it by name."""
    check_depth(text, origin)
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise InputFileError(f"{origin}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    except InputFileError as exc:
        raise InputFileError(f"{origin}: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise InputFileError(f"{origin}: {_unreadable(exc)}") from None
    if not surrogates and lone_surrogate_in(text, value):
        raise InputFileError(f"{origin}: {LONE_SURROGATE}")
    return value


def lone_surrogate_in(text: str, value: object) -> bool:
    """Whether a string of `value`, decoded from the JSON `text`, holds a UTF-16 surrogate a
    `\\udXXX` escape left unpaired: not text (no UTF-8 holds it), and stored or printed it
    fails far from the file. The text is searched first: most never escape one."""
    if not _SURROGATE_ESCAPE.search(text):
        return False
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and not item.isascii():
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
    return False


def parse_toml(text: str, origin: str) -> dict[str, Any]:
    """TOML nested at most MAX_DEPTH deep; `origin` names the text in messages."""
    check_depth(text, origin, toml=True)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputFileError(f"{origin}: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise InputFileError(f"{origin}: {_unreadable(exc)}") from None
    # a table's header, a dotted key and an inline table under it nest together
    if _deepest(data) > MAX_DEPTH:
        raise InputFileError(f"{origin}: nested deeper than {MAX_DEPTH} levels")
    return data


def check_depth(text: str, origin: str, *, toml: bool = False) -> None:
    """Refuse brackets nested deeper than MAX_DEPTH outside strings, and TOML keys of more
    parts (`a.b.c`: tomllib's time grows with the square of a key's parts), before any
    parser reads them."""
    marks = text.count("[") + text.count("{") + (text.count(".") if toml else 0)
    if marks <= MAX_DEPTH:
        return  # cannot nest deeper: most files end here
    depth = parts = 0  # brackets open; the dots of the key being read
    for mark in _marks(text, toml):
        parts = parts + 1 if mark == "dot" else 0
        if mark == "open":
            depth += 1
        elif mark == "close":
            depth = max(depth - 1, 0)
        if depth + parts > MAX_DEPTH:
            raise InputFileError(f"{origin}: nested deeper than {MAX_DEPTH} levels")


def _marks(text: str, toml: bool) -> Iterator[str]:
    """What nests outside strings and comments: `open` and `close` for each bracket, and in
    TOML `dot` for each dot, `end` where a key or value ends."""
    for token in (_TOML_TOKENS if toml else _JSON_TOKENS).finditer(text):
        if token.lastgroup == "cut":
            if toml:
                return  # tomllib stops at that quote: nothing after it is parsed
            # A JSON string that never closes holds every later quote escaped, so no later
            # quote opens a string either: the rest is brackets (some readers resume after a
            # broken value, and must find them counted).
            for bracket in _ONLY_BRACKETS.finditer(text, token.end()):
                yield "open" if bracket.group() in "[{" else "close"
            return
        if token.lastgroup is not None:
            yield token.lastgroup


def _deepest(data: object) -> int:
    """How deep tables and arrays nest in `data` (the document's own table is level 0, as
    check_depth counts), without recursing."""
    deepest = 0
    stack: list[tuple[object, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            deepest = max(deepest, depth)
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
    return deepest


def _refuse_constant(name: str) -> None:
    raise InputFileError(f"{name} is not a number JSON allows")


def _unreadable(exc: ValueError | RecursionError) -> str:
    if isinstance(exc, RecursionError):  # the backstop of check_depth
        return "nested too deeply"
    # the parsers wrap every other ValueError; int() past its digit limit is left
    return f"a whole number longer than {sys.get_int_max_str_digits()} digits"


def _too_large(name: str, size: str, what: str, max_bytes: int) -> str:
    return f"{name}: {size}; {what} is at most {_size(max_bytes)}"


def _size(count: int) -> str:
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale and count % scale == 0:
            return f"{count // scale} {unit}"
    return f"{count:,} bytes"

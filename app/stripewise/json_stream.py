"""JSON values read one after another out of a longer text (fio logs, udev JSON dumps), each
from where it starts, in time linear in the text however many of them are broken.

`json.JSONDecoder().raw_decode(text, start)` alone is not: its error counts the lines from the
start of the whole text (quadratic over many broken values), a value nested in a broken one
is decoded again up to the same error, and a value nested a thousand deep recurses as deep.
Here each value is decoded from a copy that ends at a line end, doubled while the value goes
on: a JSON token never spans lines (strict strings hold no line break), so an error within
the copy is the error in the text. After an error, a value that starts a line inside the
broken one is known from its brackets to end before the error (decoded) or to fail at it (the
same error, not decoded again); values nested deeper than MAX_DEPTH are found by counting
brackets, once for every value starting a line within them.

Standard library only, like input_files.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from stripewise.input_files import LONE_SURROGATE, MAX_DEPTH, lone_surrogate_in

_FIRST_WINDOW = 256  # characters decoded first; doubled while the value goes on
# A string to the end of its line at most (unterminated, the decoder fails there too)
_TOKENS = re.compile(r'"[^"\\\n]*+(?:\\[^\n][^"\\\n]*+)*+"?|(?P<open>[\[{])|(?P<close>[\]}])')


class JsonValueError(ValueError):
    """A value that does not decode: the line of the error (1-based) and json's message."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


class NestedTooDeep(JsonValueError):
    """A value nested deeper than MAX_DEPTH; `line` is where it starts."""


@dataclass(frozen=True)
class _Failure:
    """A value that failed at `error_at`, and the values starting a line inside it that close
    before that: each other one fails at the same place."""

    start: int
    error_at: int
    line: int
    message: str
    closed: frozenset[int] = field(default_factory=frozenset)


@dataclass
class _Scan:
    """Brackets counted from a value's start: the open ones (position, whether it starts its
    line), and where the start got nested too deep."""

    opened: list[tuple[int, bool]] = field(default_factory=list)
    leading: bool = False  # only blanks since the last line break
    after: int = 0  # the end of the last token
    too_deep_at: int | None = None
    closed: bool = False


class JsonStream:
    """Decode values of `text` at the positions the reader asks for, and tell lines."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._decoder = json.JSONDecoder()
        self._failure: _Failure | None = None
        # values starting a line found nested too deep by counting, and where
        self._too_deep: dict[int, int] = {}
        self._at, self._line = 0, 1  # a position and its line, moved as lines are asked for

    def line_at(self, position: int) -> int:
        """The line (1-based) of `position`, counted from the last one asked for: readers ask
        in order, give or take one value, so counting stays linear."""
        if position >= self._at:
            self._line += self.text.count("\n", self._at, position)
        else:
            self._line -= self.text.count("\n", position, self._at)
        self._at = position
        return self._line

    def decode(self, start: int) -> tuple[Any, int]:
        """The value starting at `start` and where it ends, as `raw_decode` gives them; raises
        JsonValueError (NestedTooDeep past MAX_DEPTH, where json would report an error after
        that depth)."""
        failure = self._failure
        within = failure is not None and failure.start < start < failure.error_at
        if failure is not None and within and start not in failure.closed:
            # what decoding would find again, at the same place (raised anew: an exception
            # raised again keeps every traceback it went through)
            raise JsonValueError(failure.line, failure.message)
        text, window = self.text, _FIRST_WINDOW
        while True:
            end = _line_end(text, start + window)
            too_deep_at = self._too_deep.get(start)
            if (
                too_deep_at is None
                and text.count("{", start, end) + text.count("[", start, end) > MAX_DEPTH
            ):
                too_deep_at = self._nesting(start, end)
            if too_deep_at is not None:  # decoded to there: an error before it is json's
                end = _line_end(text, too_deep_at)
            try:
                value, used = self._decoder.raw_decode(text[start:end])
            except json.JSONDecodeError as exc:
                error_at, message = start + exc.pos, exc.msg
            except RecursionError:  # not past MAX_DEPTH: a backstop
                error_at, message = -1, ""
            else:
                if too_deep_at is None and lone_surrogate_in(text[start : start + used], value):
                    raise JsonValueError(self.line_at(start), LONE_SURROGATE)
                if too_deep_at is None:
                    return value, start + used
                error_at, message = -1, ""
            if error_at < 0 or (too_deep_at is not None and error_at >= end):
                raise NestedTooDeep(self.line_at(start), f"nested deeper than {MAX_DEPTH} levels")
            if error_at < end or end == len(text):
                break  # an error within the copy: the text's own
            window *= 2  # the copy ended first: the value goes on
        # raised here, not in `except`: no cycle through json's error keeps the text alive
        line = self.line_at(error_at)
        self._failure = _Failure(start, error_at, line, message, self._closed(start, error_at))
        raise JsonValueError(line, message)

    def _nesting(self, start: int, end: int) -> int | None:
        """Where the value at `start` gets nested deeper than MAX_DEPTH, if before `end`; every
        value starting a line that gets so in the counting is remembered. Counting goes on to
        twice that distance, so a run of such values is counted once, not once each."""
        scan = _Scan(after=start)
        self._count(scan, start, end)
        if scan.too_deep_at is not None and not scan.closed:
            self._count(scan, end, _line_end(self.text, 2 * scan.too_deep_at - start))
        return scan.too_deep_at

    def _count(self, scan: _Scan, start: int, end: int) -> None:
        text, opened = self.text, scan.opened
        for token in _TOKENS.finditer(text, start, end):
            self._lead(scan, token.start())
            scan.after = token.end()
            if token.lastgroup == "open":
                opened.append((token.start(), scan.leading))
                if len(opened) > MAX_DEPTH:  # the one this many levels up is now too deep
                    at, opens_line = opened[-MAX_DEPTH - 1]
                    if opens_line:
                        self._too_deep[at] = token.start()
                    if scan.too_deep_at is None:  # the first time: the start's own
                        scan.too_deep_at = token.start()
            elif token.lastgroup == "close" and opened:
                opened.pop()
                if not opened:
                    scan.closed = True
                    return
            scan.leading = False

    def _closed(self, start: int, stop: int) -> frozenset[int]:
        """The values starting a line after `start` whose brackets close before `stop`."""
        scan = _Scan(after=start)
        closed: set[int] = set()
        for token in _TOKENS.finditer(self.text, start, stop):
            self._lead(scan, token.start())
            scan.after = token.end()
            if token.lastgroup == "open":
                scan.opened.append((token.start(), scan.leading))
            elif token.lastgroup == "close" and scan.opened:
                at, opens_line = scan.opened.pop()
                if opens_line:
                    closed.add(at)
            scan.leading = False
        return frozenset(closed)

    def _lead(self, scan: _Scan, position: int) -> None:
        """Whether only blanks stand between the last line break and `position`, from what
        lies since the last token."""
        gap = self.text[scan.after : position]
        newline = gap.rfind("\n")
        if newline >= 0:
            scan.leading, gap = True, gap[newline + 1 :]
        scan.leading = scan.leading and (not gap or gap.isspace())


def _line_end(text: str, position: int) -> int:
    """Just after the line break at or after `position`, or the end of the text."""
    found = text.find("\n", position)
    return len(text) if found < 0 else found + 1

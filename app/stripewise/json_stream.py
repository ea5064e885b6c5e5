"""JSON values read one after another out of a longer text (fio logs, udev JSON dumps), each
from where it starts, in time linear in the text however many of them are broken.

`json.JSONDecoder().raw_decode(text, start)` alone is not: its error counts the lines from the
start of the whole text (quadratic over many broken values), a value nested in a broken one
is decoded again up to the same error, and a value nested a thousand deep recurses as deep.
Here each value is decoded from a copy that ends at a line end: a JSON token never spans
lines (strict strings hold no line break), so an error within the copy is the error in the
text. Brackets are counted first (at most MAX_DEPTH deep), and a value at the start of a line
inside a broken one is known, from the brackets, to end before the error (decoded) or to fail
at it (the same error, not decoded again).

Standard library only, like input_files.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from stripewise.input_files import MAX_DEPTH

_FIRST_WINDOW = 1024  # characters read first; doubled while a value is still open
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
    """A value that failed at `error_at`, and which values starting a line inside it close
    before that: each other one fails at the same place."""

    start: int
    error_at: int
    line: int
    message: str
    closed: frozenset[int] = field(default_factory=frozenset)


class JsonStream:
    """Decode values of `text` at the positions the reader asks for, and tell lines."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._decoder = json.JSONDecoder()
        self._failure: _Failure | None = None
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
        JsonValueError (NestedTooDeep past MAX_DEPTH)."""
        failure = self._failure
        within = failure is not None and failure.start < start < failure.error_at
        if failure is not None and within and start not in failure.closed:
            # what decoding would find again, at the same place (raised anew: an exception
            # raised again keeps every traceback it went through)
            raise JsonValueError(failure.line, failure.message)
        end, closed = self._extent(start)
        try:
            value, used = self._decoder.raw_decode(self.text[start:end])
        except json.JSONDecodeError as exc:
            error_at, message = start + exc.pos, exc.msg
        except RecursionError:  # not past MAX_DEPTH: a backstop
            error_at, message = -1, ""
        else:
            return value, start + used
        # raised here, not in `except`: no cycle through json's error keeps the text alive
        if error_at < 0:
            raise NestedTooDeep(self.line_at(start), "nested too deeply")
        line = self.line_at(error_at)
        before = frozenset(at for at, close in closed.items() if close < error_at)
        self._failure = _Failure(start, error_at, line, message, before)
        raise JsonValueError(line, message)

    def _extent(self, start: int) -> tuple[int, dict[int, int]]:
        """Where a copy of the value at `start` can end (after a line break, past where its
        brackets close, or the end of the text), and where each bracket opening a line in it
        closes."""
        text = self.text
        if text[start : start + 1] not in ("{", "["):  # a number, a string...: one line
            return _line_end(text, start), {}
        window = _FIRST_WINDOW
        while True:
            end = _line_end(text, start + window)
            closed_at, closed = self._brackets(start, end)
            if closed_at is not None:
                return _line_end(text, closed_at - 1), closed
            if end == len(text):
                return end, closed
            window *= 2

    def _brackets(self, start: int, end: int) -> tuple[int | None, dict[int, int]]:
        """Where the brackets from `start` close again (None: not before `end`), and where
        each one that opens a line closes; raises NestedTooDeep."""
        text = self.text
        opened: list[tuple[int, bool]] = []  # position, whether it opens its line
        closed: dict[int, int] = {}
        leading = True  # only blanks since the last line break
        after = start
        for token in _TOKENS.finditer(text, start, end):
            gap = text[after : token.start()]
            newline = gap.rfind("\n")
            if newline >= 0:
                leading, gap = True, gap[newline + 1 :]
            leading = leading and (not gap or gap.isspace())
            after = token.end()
            if token.lastgroup == "open":
                opened.append((token.start(), leading))
                if len(opened) > MAX_DEPTH:
                    raise NestedTooDeep(self.line_at(start), f"nested deeper than {MAX_DEPTH}")
            elif token.lastgroup == "close" and opened:
                at, opens_line = opened.pop()
                if opens_line:
                    closed[at] = token.start()
                if not opened:
                    return token.end(), closed
            leading = False
        return None, closed


def _line_end(text: str, position: int) -> int:
    """Just after the line break at or after `position`, or the end of the text."""
    found = text.find("\n", position)
    return len(text) if found < 0 else found + 1

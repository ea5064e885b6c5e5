"""fio's streamed JSON (`--output-format=json --status-interval=N`) read as it arrives.

fio prints one pretty-printed object per interval and a final one, without separators: each
starts with `{` and ends with `}` alone in column 0 (nested braces are indented). Other lines
("fio: terminating on signal 2", blank lines) may come between objects. The objects' figures
are read by `fio.report`.

What fio prints is untrusted: fio runs with the caller's credentials, so the caller can make
it print anything (ptrace). Lines and objects are bounded, numbers must be finite, and a
figure no run can have makes the object unusable rather than the helper.
"""

from __future__ import annotations

import codecs
import json
from collections import deque
from typing import Any

_JOBS_PER_STATUS_STEP = 16  # a status object of 64 jobs is ~0.4 MB: print it less often
MAX_LINE_CHARS = 64 * 1024  # fio's pretty-printed lines are short
MAX_OBJECT_CHARS = 16 * 2**20  # a status object of 64 jobs with histograms is well under this


class StatusStream:
    """Feed it pipe chunks of any size; it yields each complete object once."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial: list[str] = []  # the unfinished last line, in the pieces it came in
        self._partial_chars = 0
        self._lines: list[str] | None = None  # the object being collected, if any
        self._size = 0  # characters collected in it
        self.dropped = 0  # characters thrown away as over a bound
        # lines outside objects and objects that did not parse, the latest few (each cut short)
        self.noise: deque[str] = deque(maxlen=50)

    def feed(self, chunk: bytes | str) -> list[dict[str, Any]]:
        """The objects this chunk completes, in order."""
        text = chunk if isinstance(chunk, str) else self._decoder.decode(chunk)
        lines = text.split("\n")
        # a line is joined once it ends: joined at each chunk, a line fio writes a byte at a
        # time would be copied once per byte (quadratic in the line)
        self._partial.append(lines.pop())
        self._partial_chars += len(self._partial[-1])
        if lines:
            lines[0] = "".join(self._partial[:-1]) + lines[0]
            self._partial, self._partial_chars = self._partial[-1:], len(self._partial[-1])
        if self._partial_chars > MAX_LINE_CHARS:  # no line of fio's is this long
            self.dropped += self._partial_chars
            self._partial, self._partial_chars = [], 0
            self._abandon()
        found = (self._line(line.rstrip("\r")) for line in lines)
        return [obj for obj in found if obj is not None]

    def _abandon(self) -> None:
        if self._lines is not None:
            self.dropped += self._size
            self._lines, self._size = None, 0

    def _noise(self, text: str) -> None:
        self.noise.append(text[:1000])

    def _line(self, line: str) -> dict[str, Any] | None:
        if len(line) > MAX_LINE_CHARS:
            self.dropped += len(line)
            self._abandon()
            return None
        if line == "{":  # a top-level start; an unfinished object before it was cut off
            if self._lines:
                self._noise("\n".join(self._lines))
            self._lines, self._size = [line], 2
            return None
        if self._lines is None:
            if line.strip():
                self._noise(line)
            return None
        self._lines.append(line)
        self._size += len(line) + 1
        if self._size > MAX_OBJECT_CHARS:
            self._abandon()
            return None
        if line != "}":
            return None
        lines, self._lines, self._size = self._lines, None, 0
        return self._parse(lines)

    def _parse(self, lines: list[str]) -> dict[str, Any] | None:
        for candidate in (lines, [x for x in lines if x[:1] in (" ", "{", "}")]):
            try:
                found = json.loads("\n".join(candidate), parse_constant=_no_constant)
            except (ValueError, RecursionError):
                continue
            if isinstance(found, dict):
                return found
        self._noise("\n".join(lines))
        return None


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a figure")


def status_interval_ms(sample_rate_hz: float, jobs: int) -> int:
    """How often fio is asked for its totals: once per sampling period, so each live rate is
    taken between two of its reports (fio >= 3 takes millisecond intervals); less often for
    many jobs, whose objects cost fio and the helper a few percent of a CPU at 10 a second."""
    steps = -(-max(1, jobs) // _JOBS_PER_STATUS_STEP)
    return max(100, round(1000 / sample_rate_hz)) * steps

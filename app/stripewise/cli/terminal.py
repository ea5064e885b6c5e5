"""What the commands print to a terminal holds no control characters but line ends and tabs.

Names come from outside: a disk's model and serial are what its firmware says (a hostile USB
device says what it likes), a run's name and host what an imported file says. Printed raw, an
escape sequence among them moves the cursor, rewrites earlier lines or retitles the terminal.
On a terminal each other C0 and C1 control is shown as `^[`-style text (as `cat -v` does);
a pipe or a file gets the text as it is (JSON escapes them itself).
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

KEPT = "\t\n\r"  # \r: the progress line redraws itself
_SHOWN = {
    code: f"^{chr(code ^ 0x40)}" for code in (*range(0x20), 0x7F) if chr(code) not in KEPT
} | {code: f"\\x{code:02x}" for code in range(0x80, 0xA0)}


class PrintableText:
    """A terminal's text stream, its controls shown as text."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(text.translate(_SHOWN))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding...
        return getattr(self._stream, name)


def guard_terminals() -> None:
    """stdout and stderr, when each is a terminal, shown printable from here on."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        isatty = getattr(stream, "isatty", None)
        if isatty is not None and isatty() and not isinstance(stream, PrintableText):
            setattr(sys, name, PrintableText(stream))

"""What the commands print to a terminal holds no control characters but line ends and tabs.

Names come from outside: a disk's model and serial are what its firmware says (a hostile USB
device says what it likes), a run's name and host what an imported file says. Printed raw, an
escape sequence among them moves the cursor, rewrites earlier lines or retitles the terminal.
On a terminal each other C0 control is shown as `^[`-style text (as `cat -v` does), DEL and each
C1 control as JSON escapes it (`\\u009b`); a pipe or a file gets the text as it is.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

KEPT = "\t\n\r"  # \r: the progress line redraws itself
# C0 as `^[`; DEL and C1 as JSON writes them (`\u009b`), so JSON on a terminal stays JSON (its
# strings never hold C0 raw: json escapes those itself)
_SHOWN = {code: f"^{chr(code ^ 0x40)}" for code in range(0x20) if chr(code) not in KEPT} | {
    code: f"\\u{code:04x}" for code in (0x7F, *range(0x80, 0xA0))
}


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

"""Numbers as the documented grammars write them: ASCII digits only.

Python's int() and float() also read Arabic-Indic, Devanagari and full-width digits ("١٠٢٤"
is 1024), underscores ("1_000") and blanks around the number; regular expressions' \\d
matches those digits too. A value an admin did not type in ASCII is a paste from somewhere
else, not a number to guess at: every user-facing number goes through these instead.
"""

from __future__ import annotations

import re

_WHOLE = re.compile(r"[+-]?[0-9]+", re.ASCII)
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def ascii_int(text: str) -> int:
    """A whole number of ASCII digits with an optional sign; ValueError otherwise (also past
    Python's digit limit)."""
    if _WHOLE.fullmatch(text) is None:
        raise ValueError(f"not a whole number: {text!r}")
    return int(text)


def ascii_float(text: str) -> float:
    """A decimal number of ASCII digits (sign, point, exponent): never nan or inf."""
    if _DECIMAL.fullmatch(text) is None:
        raise ValueError(f"not a number: {text!r}")
    return float(text)

"""`json.dumps(value, indent=2)` at the speed of the C encoder, for a report of many runs.

The standard library indents in pure Python (its C encoder does not indent): printing the
figures of 100,000 imported runs took longer than storing them. Here each scalar is encoded as
`json` encodes it (strings by its C `encode_basestring_ascii`, floats by `float.__repr__`,
NaN and the infinities by name) and objects and lists are laid out as `indent=2` lays them.
"""

from __future__ import annotations

import math
from json.encoder import encode_basestring_ascii
from typing import Any

_STEP = "  "


def indented_json(value: Any, pad: str = "") -> str:
    """`json.dumps(value, indent=2)` with every line after the first starting with `pad`, for
    values made of dicts with string keys, lists, strings, numbers, booleans and None."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = pad + _STEP
        items = [f"{encode_basestring_ascii(k)}: {_item(v, inner)}" for k, v in value.items()]
        return f"{{\n{inner}" + f",\n{inner}".join(items) + f"\n{pad}}}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        inner = pad + _STEP
        items = [_item(item, inner) for item in value]
        return f"[\n{inner}" + f",\n{inner}".join(items) + f"\n{pad}]"
    return _scalar(value)


def _item(value: Any, pad: str) -> str:
    """The commonest items (strings, finite floats) without a call each: a run's report is
    mostly its figures' names and values."""
    if type(value) is str:
        return encode_basestring_ascii(value)
    if type(value) is float and math.isfinite(value):
        return float.__repr__(value)
    return indented_json(value, pad)


def _scalar(value: object) -> str:
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        if math.isfinite(value):
            return float.__repr__(value)
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, int):
        return int.__repr__(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

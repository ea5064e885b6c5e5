"""A tunable's value as `tune show` prints it and the GUI shows it: with its unit, and bytes
and centisecs also in the words people think in (`536870912 bytes (512 MiB)`)."""

from __future__ import annotations

from stripewise.model.tunables import TUNABLES


def shown(key: str, value: object) -> str:
    """A value with its unit: `4096 KiB`, `40 %`, `536870912 bytes (512 MiB)`, `3000 centisecs
    (30 s)`; a scheduler name (and anything of a key this version does not know) as is."""
    knob = TUNABLES.get(key)
    if knob is None or knob.unit == "name" or not isinstance(value, int):
        return str(value)
    text = f"{value} {knob.unit}"
    if knob.unit == "bytes" and value:
        text += f" ({_binary(value)})"
    elif knob.unit == "centisecs":
        text += f" ({value / 100:g} s)"
    return text


def bare(key: str, value: object) -> str:
    """The number alone where the unit is said beside it (the value after `->`, a Unit
    column), keeping what bytes and centisecs come to: `536870912 (512 MiB)`."""
    knob = TUNABLES.get(key)
    if knob is not None and knob.unit in ("bytes", "centisecs") and isinstance(value, int):
        return shown(key, value).replace(f" {knob.unit}", "", 1)
    return str(value)


def _binary(value: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.4g} {unit}"
    return f"{value} B"

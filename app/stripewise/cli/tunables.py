"""What `tune`'s reading and writing commands share: the --device option, values with units."""

from __future__ import annotations

import argparse

from stripewise.model.tunables import TUNABLES


def add_device_option(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument(
        "--device",
        dest="devices",
        action="append",
        required=required,
        metavar="DEV",
        help="a whole disk or md array: kernel name (sdb, md0) or /dev path; repeatable",
    )


def shown(key: str, value: int | str) -> str:
    """A value with its unit: `4096 KiB`, `40 %`, `536870912 bytes (512 MiB)`, `3000 centisecs
    (30 s)`; a scheduler name as is."""
    unit = TUNABLES[key].unit
    if unit == "name" or not isinstance(value, int):
        return str(value)
    text = f"{value} {unit}"
    if unit == "bytes" and value:
        text += f" ({_binary(value)})"
    elif unit == "centisecs":
        text += f" ({value / 100:g} s)"
    return text


def bare(key: str, value: int | str) -> str:
    """The current value before `->`: the number alone when the new one names the unit."""
    unit = TUNABLES[key].unit
    if unit in ("bytes", "centisecs") and isinstance(value, int):
        return shown(key, value).replace(f" {unit}", "", 1)
    return str(value)


def _binary(value: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.4g} {unit}"
    return f"{value} B"

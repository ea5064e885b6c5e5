"""Writing a plan file: `dumps_plan` turns a Plan into the TOML that `plan_file.loads_plan`
reads back to an equal plan, capacities in exact decimal GB where they can be, strings escaped
as TOML wants them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields
from decimal import Decimal
from typing import Any

from stripewise.model.plan import Plan, PlanController, PlanDisk, PlannedArray
from stripewise.planner.plan_file import ARRAY_KEYS, FORMAT, GB, VERSION


def dumps_plan(plan: Plan) -> str:
    """The plan as TOML that `loads_plan` reads back to an equal plan."""
    lines = [
        "# Stripewise array plan. `stripewise plan FILE` evaluates it; --script writes the",
        "# commands. Sizes: capacity_gb in decimal GB (10^9 bytes); speeds in MB/s (10^6 B/s)",
        "# at the outer tracks; chunk_kb and block_kb in KiB.",
        f"format = {_toml(FORMAT)}",
        f"version = {VERSION}",
        f"name = {_toml(plan.name)}",
        f"currency = {_toml(plan.currency)}",
    ]
    if plan.host is not None:
        lines.append(f"inventory = {_toml(plan.host)}")
    if plan.notes:
        lines.append(f"notes = {_toml(plan.notes)}")
    for controller in plan.controllers:
        values = _values(controller)
        if "label" in values:  # next to the id, where people look for it
            values = {"id": values.pop("id"), "label": values.pop("label"), **values}
        lines += ["", "[[controller]]", *_pairs(values)]
    for disk in plan.disks:
        values = _values(disk)
        capacity = values.pop("capacity_bytes")
        key, size = _capacity_pair(capacity)
        values = {
            "id": values.pop("id"),
            "controller": values.pop("controller"),
            key: size,
            **values,
        }
        lines += ["", "[[disk]]", *_pairs(values)]
    for array in plan.arrays:
        values = _values(array)
        values["chunk_kb"] = values.pop("chunk_kib")
        values["block_kb"] = values.pop("block_kib")
        values = {k: values[k] for k in ARRAY_KEYS if k in values}
        lines += ["", "[[array]]", *_pairs(values)]
    return "\n".join(lines) + "\n"


def _capacity_pair(capacity: int) -> tuple[str, object]:
    """Decimal GB where that is exact and readable (500.107862016), else whole bytes."""
    gb = (Decimal(capacity) / GB).normalize()
    if capacity >= 10**6 and len(gb.as_tuple().digits) <= 15:
        return "capacity_gb", _Literal(format(gb, "f"))
    return "capacity_bytes", capacity


def _values(item: PlanController | PlanDisk | PlannedArray) -> dict[str, Any]:
    """Fields that are set, in declaration order (None means "not said": left out). Fields
    not compared say where an item came from (`PlanDisk.read_from_machine`), which a file
    cannot vouch for: not written."""
    values = {f.name: getattr(item, f.name) for f in fields(item) if f.compare}
    return {key: value for key, value in values.items() if value is not None}


class _Literal(str):
    """Already TOML (a number written exactly)."""


def _pairs(values: Mapping[str, Any]) -> list[str]:
    return [f"{key} = {_toml(value)}" for key, value in values.items()]


_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _toml(value: Any) -> str:
    if isinstance(value, _Literal):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot write {value} to a plan file")
        if value.is_integer() and abs(value) < 2**53:
            return str(int(value))  # 1064, not 1064.0: read back as the same float
        return repr(value)
    if isinstance(value, str):
        out = []
        for char in value:
            if char in _ESCAPES:
                out.append(_ESCAPES[char])
            elif ord(char) < 0x20 or ord(char) == 0x7F:
                out.append(f"\\u{ord(char):04x}")
            else:
                out.append(char)
        return '"' + "".join(out) + '"'
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to a plan file")

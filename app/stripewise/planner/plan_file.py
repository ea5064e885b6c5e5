"""Plan files: TOML, versioned, written by hand or by Stripewise.

    format = "stripewise-plan"
    version = 1
    name = "X4500 data arrays"
    [[controller]]  id, label, model, bus, bus_mb_s, ports, hypothetical, price, catalog
    [[disk]]        id, controller, capacity_gb | capacity_bytes, seq_read_mb_s, seq_write_mb_s,
                    inner_ratio, random_iops, price, catalog, model, serial, wwn, stable_path,
                    slot, state, state_reason, hypothetical
    [[array]]       name, level, members, chunk_kb, group_size, spares, filesystem, block_kb,
                    mountpoint

With an inventory the [[controller]] and [[disk]] tables may be left out: the machine's own
controllers and disks are used, a [[disk]] or [[controller]] with the id of a real one adjusts
it, and array members may name real disks by kernel name or serial. Every error names the
file, the table and the key.

A controller's `label` is what people call it ("LSI SAS 9300-8i #2"), distinct in the plan.
Figures must lie within the bounds of model.plan (ports 1-1024, capacity up to 1 PB, speeds
above 0). A controller with more disks than ports loads (the planner shows the problem), but
`stripewise plan` refuses it unless each of those disks was read from the machine: the
inventory's, or without one a real disk with a serial, wwn or stable_path in a file naming its
machine (`inventory`, as saved plans of a machine do). A serial alone says nothing.

This module reads them; `plan_writer.dumps_plan` writes them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any, overload

from stripewise.input_files import InputFileError, parse_toml, read_text
from stripewise.model.file_errors import FileFieldError, header_problem
from stripewise.model.plan import (
    BLOCK_CHOICES_KIB,
    CHUNK_CHOICES_KIB,
    CONTROLLER_LIMITS,
    DEFAULT_CHUNK_KIB,
    DEFAULT_INNER_RATIO,
    DISK_LIMITS,
    MAX_CAPACITY_BYTES,
    MAX_PORTS,
    Filesystem,
    Plan,
    PlanController,
    PlanDisk,
    PlannedArray,
    RaidLevel,
)
from stripewise.model.topology import DiskState, Inventory
from stripewise.planner.catalog import Catalog, load_catalog
from stripewise.planner.from_inventory import catalog_controller, catalog_disk, plan_from_inventory

FORMAT = "stripewise-plan"
VERSION = 1
GB = 10**9
MAX_GB = MAX_CAPACITY_BYTES // GB
MAX_PLAN_BYTES = 16 * 2**20  # a plan of 10,000 disks is about 2 MiB
DISK_STATES = tuple(s.value for s in DiskState)

_TOP_KEYS = ("format", "version", "name", "currency", "inventory", "notes")
_TABLES = ("controller", "disk", "array")
_CONTROLLER_KEYS = (
    *("id", "label", "model", "bus", "bus_mb_s", "ports", "hypothetical", "price", "catalog"),
)
_DISK_KEYS = (
    *("id", "controller", "capacity_gb", "capacity_bytes", "seq_read_mb_s", "seq_write_mb_s"),
    *("inner_ratio", "random_iops", "price", "catalog", "model", "serial", "wwn"),
    *("stable_path", "slot", "state", "state_reason", "hypothetical"),
)
ARRAY_KEYS = (
    *("name", "level", "members", "chunk_kb", "group_size", "spares", "filesystem"),
    *("block_kb", "mountpoint"),
)


class PlanFileError(FileFieldError):
    """A plan file that cannot be used; the message names the file, the table and the key."""


def load_plan(
    path: Path | str, inventory: Inventory | None = None, catalog: Catalog | None = None
) -> Plan:
    try:
        text = read_text(path, what="a plan file", max_bytes=MAX_PLAN_BYTES)
    except InputFileError as exc:
        raise PlanFileError(str(exc), str(path)) from None
    return loads_plan(text, str(path), inventory, catalog)


def loads_plan(
    text: str,
    origin: str = "plan.toml",
    inventory: Inventory | None = None,
    catalog: Catalog | None = None,
) -> Plan:
    try:
        data = parse_toml(text, origin)
    except InputFileError as exc:
        raise PlanFileError(str(exc), origin) from None
    return _Reader(origin, inventory, catalog).plan(data)


class _Table:
    """One table of the file with typed getters whose errors say where they are."""

    def __init__(self, origin: str, table: str, label: str, data: Mapping[str, Any]) -> None:
        self.origin, self.table, self.label, self.data = origin, table, label, data

    def fail(self, key: str | None, message: str) -> PlanFileError:
        return PlanFileError.at(self.origin, self.label, self.table, key, message)

    def check_keys(self, known: tuple[str, ...]) -> None:
        for key in self.data:
            if key not in known:
                raise self.fail(key, f"unknown key (known keys: {', '.join(known)})")

    def has(self, key: str) -> bool:
        return key in self.data

    @overload
    def text(self, key: str, default: str) -> str: ...
    @overload
    def text(self, key: str, default: str | None = None) -> str | None: ...
    def text(self, key: str, default: str | None = None) -> str | None:
        if key not in self.data:
            return default
        value = self.data[key]
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {_show(value)}")
        return value

    def required(self, key: str, default: str | None = None) -> str:
        """A non-empty string, from the table or else `default`."""
        value = self.text(key, default)
        if value is None:
            raise self.fail(key, "missing")
        if not value.strip():
            raise self.fail(key, "must not be empty")
        return value

    @overload
    def number(self, key: str, low: float, high: float, default: float) -> float: ...
    @overload
    def number(
        self, key: str, low: float, high: float, default: float | None = None
    ) -> float | None: ...
    def number(
        self, key: str, low: float, high: float, default: float | None = None
    ) -> float | None:
        if key not in self.data:
            return default
        value = self.data[key]
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or not low <= value <= high:
            allowed = f"a number between {_bound(low)} and {_bound(high)}"
            raise self.fail(key, f"must be {allowed}, got {_show(value)}")
        return float(value)

    @overload
    def whole(self, key: str, choices: tuple[int, ...] | range, default: int) -> int: ...
    @overload
    def whole(self, key: str, choices: tuple[int, ...] | range, default: None) -> int | None: ...
    def whole(self, key: str, choices: tuple[int, ...] | range, default: int | None) -> int | None:
        if key not in self.data:
            return default
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int) or value not in choices:
            if isinstance(choices, range):
                allowed = f"a whole number from {choices.start} to {choices.stop - 1}"
            else:
                allowed = "one of " + ", ".join(str(c) for c in choices)
            raise self.fail(key, f"must be {allowed}, got {_show(value)}")
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, got {_show(value)}")
        return value

    def names(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(key, f"must be a list of disk names, got {_show(value)}")
        return tuple(value)

    @overload
    def choice(self, key: str, allowed: tuple[str, ...], default: str) -> str: ...
    @overload
    def choice(self, key: str, allowed: tuple[str, ...], default: None = None) -> str | None: ...
    def choice(self, key: str, allowed: tuple[str, ...], default: str | None = None) -> str | None:
        value = self.text(key, default)
        if value is not None and value not in allowed:
            raise self.fail(key, f"{value!r} is not one of {', '.join(allowed)}")
        return value


def _figure(row: _Table, key: str, default: float | None) -> float | None:
    """A disk figure within the model's bounds (DISK_LIMITS)."""
    return row.number(key, *DISK_LIMITS[key], default)


def _bound(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else format(value, "f").rstrip("0")


def _show(value: object) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return repr(value)  # "8.0": as "8", a refused whole number would read as a whole one
    if isinstance(value, float | int) and not isinstance(value, bool):
        return f"{value:g}" if isinstance(value, float) else str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    return repr(value)


class _Reader:
    def __init__(self, origin: str, inventory: Inventory | None, catalog: Catalog | None) -> None:
        self.origin = origin
        self.inventory = inventory
        self._catalog = catalog
        self.base = plan_from_inventory(inventory, catalog) if inventory is not None else None
        self.machine: str | None = None  # the file's `inventory`: the machine it was planned on

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = load_catalog()
        return self._catalog

    def plan(self, data: dict[str, Any]) -> Plan:
        top = _Table(self.origin, "", "top level", data)
        for key in data:
            if key not in _TOP_KEYS + _TABLES:
                raise top.fail(key, f"unknown key (known: {', '.join(_TOP_KEYS + _TABLES)})")
        problem = header_problem(
            top.text("format"), data.get("version"), (FORMAT, VERSION), "a plan file", _show
        )
        if problem is not None:
            raise top.fail(*problem)
        currency = top.text("currency", "USD")
        if not re.fullmatch(r"[A-Z]{3}", currency):
            raise top.fail("currency", f"must be a three-letter code such as USD, got {currency!r}")
        host = self.machine = top.text("inventory")
        if host is None and self.inventory is not None:
            host = self.inventory.host.key
        controllers = self._controllers(self._rows(data, "controller"))
        disks = self._disks(self._rows(data, "disk"), {c.id for c in controllers})
        arrays = self._arrays(self._rows(data, "array"), disks)
        return Plan(
            name=top.text("name", "Untitled plan"),
            controllers=controllers,
            disks=disks,
            arrays=arrays,
            host=host,
            currency=currency,
            notes=top.text("notes", ""),
        )

    def _rows(self, data: dict[str, Any], table: str) -> list[_Table]:
        rows = data.get(table, [])
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise PlanFileError(
                f"{self.origin}: {table}: must be [[{table}]] tables", self.origin, table
            )
        key = "name" if table == "array" else "id"
        out = []
        for index, row in enumerate(rows, 1):
            ident = row.get(key)
            label = f"[[{table}]] " + (f"{ident!r}" if isinstance(ident, str) else f"#{index}")
            out.append(_Table(self.origin, table, label, row))
        return out

    # --- controllers ---------------------------------------------------------------------------
    def _controllers(self, rows: list[_Table]) -> tuple[PlanController, ...]:
        found = {c.id: c for c in self.base.controllers} if self.base else {}
        from_file: set[str] = set()
        labels: dict[str, str] = {}
        for row in rows:
            row.check_keys(_CONTROLLER_KEYS)
            ident = row.required("id")
            if ident in from_file:
                raise row.fail("id", f"{ident!r} is used by another [[controller]]")
            from_file.add(ident)
            controller = self._controller(row, ident, found.get(ident))
            if controller.label is not None and labels.setdefault(controller.label, ident) != ident:
                raise row.fail(
                    "label", f"{controller.label!r} is the label of {labels[controller.label]!r}"
                )
            found[ident] = controller
        return tuple(found.values())

    def _controller(self, row: _Table, ident: str, real: PlanController | None) -> PlanController:
        base = real or PlanController(id=ident)
        if row.has("catalog"):
            entry_id = row.required("catalog")
            entry = self.catalog.controller(entry_id)
            if entry is None:
                raise row.fail("catalog", f"no controller {entry_id!r} in the catalog")
            base = catalog_controller(entry, ident)
        label = row.text("label", base.label)
        if label is not None and not label.strip():
            raise row.fail("label", "must not be empty (leave it out to use the model)")
        return PlanController(
            id=ident,
            model=row.text("model", base.model),
            bus=row.text("bus", base.bus),
            bus_mb_s=row.number("bus_mb_s", *CONTROLLER_LIMITS["bus_mb_s"], base.bus_mb_s),
            ports=row.whole("ports", range(1, MAX_PORTS + 1), base.ports),
            hypothetical=row.flag("hypothetical", base.hypothetical),
            price=row.number("price", *CONTROLLER_LIMITS["price"], base.price),
            label=label,
        )

    # --- disks ---------------------------------------------------------------------------------
    def _disks(self, rows: list[_Table], controllers: set[str]) -> tuple[PlanDisk, ...]:
        found = {d.id: d for d in self.base.disks} if self.base else {}
        from_file: set[str] = set()
        for row in rows:
            row.check_keys(_DISK_KEYS)
            ident = row.required("id")
            if ident in from_file:
                raise row.fail("id", f"{ident!r} is used by another [[disk]]")
            from_file.add(ident)
            disk = self._disk(row, ident, found.get(ident))
            if disk.controller not in controllers:
                known = ", ".join(sorted(controllers)) or "none: add [[controller]] tables"
                raise row.fail(
                    "controller", f"unknown controller {disk.controller!r} (known: {known})"
                )
            found[ident] = disk
        return tuple(found.values())

    def _disk(self, row: _Table, ident: str, real: PlanDisk | None) -> PlanDisk:
        base = real
        if row.has("catalog"):
            entry_id = row.required("catalog")
            entry = self.catalog.disk(entry_id)
            if entry is None:
                raise row.fail("catalog", f"no disk {entry_id!r} in the catalog")
            if real is None:
                base = catalog_disk(entry, row.required("controller"), ident)
            else:  # a real disk the catalog knows better than the inventory did
                base = replace(
                    real,
                    seq_read_mb_s=entry.outer_mb_s,
                    seq_write_mb_s=entry.outer_write_mb_s,
                    inner_ratio=entry.inner_ratio,
                    random_iops=entry.random_iops,
                )
        if real is not None:
            for key in ("serial", "wwn"):
                said, has = row.text(key), getattr(real, key)
                if said is not None and has is not None and said != has:
                    raise row.fail(
                        key,
                        f"the plan says {said!r} but {ident} on this machine has {has!r}: kernel "
                        "names change when disks or controllers move; plan again on this inventory",
                    )
        hypothetical = row.flag("hypothetical", base.hypothetical if base else False)
        disk = PlanDisk(
            id=ident,
            controller=row.required("controller", base.controller if base else None),
            capacity_bytes=self._capacity(row, base.capacity_bytes if base else None, hypothetical),
            seq_read_mb_s=_figure(row, "seq_read_mb_s", base.seq_read_mb_s if base else None),
            seq_write_mb_s=_figure(row, "seq_write_mb_s", base.seq_write_mb_s if base else None),
            inner_ratio=row.number(
                "inner_ratio",
                *DISK_LIMITS["inner_ratio"],
                base.inner_ratio if base else DEFAULT_INNER_RATIO,
            ),
            random_iops=_figure(row, "random_iops", base.random_iops if base else None),
            price=_figure(row, "price", base.price if base else None),
            model=row.text("model", base.model if base else None),
            serial=row.text("serial", base.serial if base else None),
            wwn=row.text("wwn", base.wwn if base else None),
            stable_path=row.text("stable_path", base.stable_path if base else None),
            slot=row.text("slot", base.slot if base else None),
            state=row.choice("state", DISK_STATES, base.state if base else "free"),
            hypothetical=hypothetical,
            state_reason=row.text("state_reason", base.state_reason if base else None),
        )
        return replace(disk, read_from_machine=self._read_from_machine(disk, real))

    def _read_from_machine(self, disk: PlanDisk, real: PlanDisk | None) -> bool:
        """The inventory's disk, unless the file moves it or makes it one to buy; without an
        inventory, a real disk with an identity in a plan of a machine (as saved)."""
        if disk.hypothetical:
            return False
        if self.base is not None:
            return bool(real and real.read_from_machine and disk.controller == real.controller)
        return self.machine is not None and bool(disk.serial or disk.wwn or disk.stable_path)

    def _capacity(self, row: _Table, default: int | None, hypothetical: bool) -> int:
        """Decimal GB (exact: 500.107862016 is 500,107,862,016 bytes), more than 0, or whole
        bytes, where 0 means unknown: allowed for real disks only (a dump that did not record
        the size), and what `dumps_plan` writes for them."""
        if row.has("capacity_gb") and row.has("capacity_bytes"):
            raise row.fail("capacity_bytes", "give capacity_gb or capacity_bytes, not both")
        if row.has("capacity_bytes"):
            value = row.data["capacity_bytes"]
            low = 1 if hypothetical else 0
            if (
                isinstance(value, bool)
                or not isinstance(value, int)
                or not low <= value <= MAX_GB * GB
            ):
                raise row.fail(
                    "capacity_bytes",
                    f"must be a whole number from {low} to {MAX_GB * GB}, got {_show(value)}",
                )
            return value
        if not row.has("capacity_gb"):
            if default is None:
                raise row.fail("capacity_gb", 'missing (or give catalog = "<catalog disk id>")')
            return default
        value = row.data["capacity_gb"]
        gb = row.number("capacity_gb", 0.001, MAX_GB, 0.0)
        exact = Decimal(repr(gb)) if isinstance(value, float) else Decimal(value)
        return int((exact * GB).to_integral_value())

    # --- arrays --------------------------------------------------------------------------------
    def _arrays(self, rows: list[_Table], disks: tuple[PlanDisk, ...]) -> tuple[PlannedArray, ...]:
        ids = {d.id for d in disks}
        by_serial: dict[str, list[str]] = {}
        for disk in disks:
            if disk.serial:
                by_serial.setdefault(disk.serial, []).append(disk.id)
        taken: dict[str, str] = {}
        arrays: list[PlannedArray] = []
        names: set[str] = set()  # a set: a scan of the arrays so far is quadratic in them
        for row in rows:
            row.check_keys(ARRAY_KEYS)
            name = row.required("name")
            if name in names:
                raise row.fail("name", f"{name!r} is used by another [[array]]")
            names.add(name)
            members = self._members(row, "members", ids, by_serial, taken, name)
            spares = self._members(row, "spares", ids, by_serial, taken, name)
            level = row.choice("level", tuple(x.value for x in RaidLevel))
            if level is None:
                raise row.fail("level", "missing")
            filesystem = row.choice("filesystem", tuple(f.value for f in Filesystem))
            mountpoint = row.text("mountpoint")
            if mountpoint is not None and not mountpoint.startswith("/"):
                raise row.fail("mountpoint", f"must be an absolute path, got {mountpoint!r}")
            arrays.append(
                PlannedArray(
                    name=name,
                    level=RaidLevel(level),
                    members=members,
                    chunk_kib=row.whole("chunk_kb", CHUNK_CHOICES_KIB, DEFAULT_CHUNK_KIB),
                    group_size=row.whole("group_size", range(2, 1025), None),
                    spares=spares,
                    filesystem=Filesystem(filesystem) if filesystem else None,
                    block_kib=row.whole("block_kb", BLOCK_CHOICES_KIB, 4),
                    mountpoint=mountpoint,
                )
            )
        return tuple(arrays)

    def _members(
        self,
        row: _Table,
        key: str,
        ids: set[str],
        by_serial: dict[str, list[str]],
        taken: dict[str, str],
        array: str,
    ) -> tuple[str, ...]:
        out: dict[str, None] = {}  # in order, and looked up without a scan
        for given in row.names(key):
            if given in ids:
                disk = given
            elif len(by_serial.get(given, ())) == 1:
                disk = by_serial[given][0]
            elif given in by_serial:
                raise row.fail(
                    key, f"serial {given!r} belongs to several disks: {', '.join(by_serial[given])}"
                )
            else:
                hint = "" if ids else " (the plan has no disks: add [[disk]] tables or --inventory)"
                raise row.fail(key, f"unknown disk {given!r}{hint}")
            if disk in out:
                raise row.fail(key, f"disk {given!r} is listed twice")
            if disk in taken:
                where = "this array" if taken[disk] == array else f"array {taken[disk]!r}"
                raise row.fail(key, f"disk {given!r} is already used by {where}")
            taken[disk] = array
            out[disk] = None
        return tuple(out)

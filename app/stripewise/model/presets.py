"""Tuning presets: TOML files of wanted values, their includes, and what they mean on a machine.

    format = "stripewise-preset"
    version = 1
    name = "streaming-throughput"          # the file name without .toml
    description = \"\"\"...\"\"\"
    include = ["kernel-defaults"]          # optional; later includes, then this file, win
    [device]   read_ahead_kb, scheduler, nr_requests, max_sectors_kb   (every chosen disk)
    [md]       stripe_cache_size                                       (md RAID 4/5/6 only)
    [global]   "vm.dirty_ratio", "vm.dirty_bytes", ...                 (/proc/sys/vm)

A number is written as is; ">=N" raises only (a larger current value is kept); a scheduler is a
name or a list of names, the first one the device offers is taken. Setting one of a ratio/bytes
pair overrides an included value of either. Pure: files are read in `stripewise.tuning`, and
current values come in as `DeviceState`. Every error names the file, the table and the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from stripewise.input_files import InputFileError, parse_toml
from stripewise.model.file_errors import FileFieldError, header_problem
from stripewise.model.numbers import ascii_int
from stripewise.model.tunable_values import shown
from stripewise.model.tunables import (
    PAGE_BYTES,
    TUNABLES,
    Change,
    DeviceLimits,
    Scope,
    Setting,
    TuningError,
    pair_effects,
    tunable,
    validate,
)

FORMAT = "stripewise-preset"
VERSION = 1
SCHEDULERS = ("none", "mq-deadline", "kyber", "bfq")  # blk-mq's; noop/deadline/cfq gone in 5.0
PRESET_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")

_TOP_KEYS = ("format", "version", "name", "description", "include")
_TABLES = {"device": Scope.DEVICE, "md": Scope.MD, "global": Scope.GLOBAL}
_RAISE_ONLY = re.compile(r">=\s*([0-9]+)", re.ASCII)
# a device's knobs in write order: switching the scheduler resets nr_requests, so it goes first
_DEVICE_ORDER = tuple(
    dict.fromkeys(("scheduler", *(k for k, t in TUNABLES.items() if t.scope is not Scope.GLOBAL)))
)
_GLOBAL_ORDER = tuple(k for k, t in TUNABLES.items() if t.scope is Scope.GLOBAL)


class PresetError(FileFieldError):
    """A preset that cannot be used; the message names the file, the table and the key."""


@dataclass(frozen=True)
class Wanted:
    """One value of a preset: a number (raise only with ">=N") or schedulers by preference."""

    key: str  # canonical: read_ahead_kb, vm.dirty_ratio
    value: int | tuple[str, ...]
    raise_only: bool = False
    origin: str = ""  # the file that set it

    @property
    def shown(self) -> str:
        if isinstance(self.value, tuple):
            return ", ".join(self.value)
        return f">={self.value}" if self.raise_only else str(self.value)


@dataclass(frozen=True)
class PresetFile:
    """One file as written, includes not yet followed."""

    name: str
    description: str
    include: tuple[str, ...]
    values: Mapping[str, Wanted]
    origin: str


@dataclass(frozen=True)
class Preset:
    """A preset with its includes merged: `values` in write order (device knobs, then global)."""

    name: str
    description: str
    origin: str
    values: Mapping[str, Wanted]
    includes: tuple[str, ...] = ()  # every preset pulled in, in the order they were merged

    @property
    def summary(self) -> str:
        return summary(self.description)


@dataclass(frozen=True)
class DeviceState:
    """A device's current values (scheduler: the active one) and what it allows."""

    name: str
    values: Mapping[str, int | str]
    limits: DeviceLimits = field(default_factory=DeviceLimits)
    md_level: str | None = None  # raid0, raid5... for md arrays
    queue_depth: int | None = None  # hardware queue tags: nr_requests' limit with scheduler none

    @property
    def has_stripe_cache(self) -> bool:
        return self.limits.is_md_with_stripe_cache


@dataclass(frozen=True)
class SkippedChange(Change):
    """A preset value that does not apply to this device (not md RAID 4/5/6, no scheduler it
    offers): shown with its note, never written."""

    @property
    def changes_anything(self) -> bool:
        return False


def summary(description: str) -> str:
    """The first line of a description."""
    lines = description.strip().splitlines()
    return lines[0].strip() if lines else ""


# --- reading -------------------------------------------------------------------------------
def parse_preset(text: str, origin: str, expected_name: str | None = None) -> PresetFile:
    """One preset file's text; `expected_name` (the file name without .toml) must be its name."""
    try:
        data = parse_toml(text, origin)
    except InputFileError as exc:
        raise PresetError(str(exc), origin) from None
    top = _Where(origin, None)
    for key in data:
        if key not in _TOP_KEYS and key not in _TABLES:
            known = ", ".join((*_TOP_KEYS, *(f"[{t}]" for t in _TABLES)))
            raise top.fail(key, f"unknown key (known: {known})")
    problem = header_problem(
        data.get("format"), data.get("version"), (FORMAT, VERSION), "a preset file", _show
    )
    if problem is not None:
        raise top.fail(*problem)
    name = data.get("name")
    if not isinstance(name, str) or not PRESET_NAME.fullmatch(name):
        raise top.fail(
            "name",
            f"must be lower-case letters, digits, '.', '_' or '-', got {_show(name)}",
        )
    if expected_name is not None and name != expected_name:
        raise top.fail("name", f"{name!r} does not match the file name {expected_name}.toml")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise top.fail("description", f"must be a string, got {_show(description)}")
    include = data.get("include", [])
    if not isinstance(include, list) or not all(isinstance(i, str) for i in include):
        raise top.fail("include", f"must be a list of preset names, got {_show(include)}")
    for included in include:
        if not PRESET_NAME.fullmatch(included):
            raise top.fail("include", f"{included!r} is not a preset name")
    values: dict[str, Wanted] = {}
    for table, scope in _TABLES.items():
        if table not in data:
            continue
        rows = data[table]
        where = _Where(origin, table)
        if not isinstance(rows, dict):
            raise where.fail(None, f"must be a table [{table}], got {_show(rows)}")
        for written, raw in rows.items():
            wanted = _wanted(where, scope, written, raw)
            if wanted.key in values:
                raise where.fail(written, f"{wanted.key} is given twice")
            pair = TUNABLES[wanted.key].pair
            if pair and pair in values:
                raise where.fail(
                    written,
                    f"set either {pair} or {wanted.key}, not both: writing one zeroes the other",
                )
            values[wanted.key] = wanted
    return PresetFile(name, description, tuple(include), values, origin)


class _Where:
    def __init__(self, origin: str, table: str | None) -> None:
        self.origin, self.table = origin, table

    def fail(self, key: str | None, message: str) -> PresetError:
        label = f"[{self.table}]" if self.table else "top level"
        return PresetError.at(self.origin, label, self.table, key, message)


def _wanted(where: _Where, scope: Scope, written: str, raw: Any) -> Wanted:
    try:
        knob = tunable(written)
    except TuningError:
        known = ", ".join(k for k, t in TUNABLES.items() if t.scope is scope)
        raise where.fail(written, f"unknown key (known in [{where.table}]: {known})") from None
    if knob.scope is not scope:
        raise where.fail(written, f"belongs in [{knob.scope.value}], not [{where.table}]")
    if knob.choices:
        names = [raw] if isinstance(raw, str) else raw
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise where.fail(written, f"must be a name or a list of names, got {_show(raw)}")
        for name in names:
            if name not in SCHEDULERS:
                raise where.fail(
                    written,
                    f"{name!r} is not a blk-mq scheduler ({', '.join(SCHEDULERS)}; "
                    "noop, deadline and cfq are gone since Linux 5.0)",
                )
        return Wanted(knob.key, tuple(dict.fromkeys(names)), origin=where.origin)
    raise_only = False
    number: object = raw
    if isinstance(raw, str):
        match = _RAISE_ONLY.fullmatch(raw.strip())
        if match is None:
            raise where.fail(
                written,
                f'must be a whole number of {knob.unit} or ">=N" (raise only), got {_show(raw)}',
            )
        raise_only, number = True, ascii_int(match.group(1))
    if isinstance(number, bool) or not isinstance(number, int):
        raise where.fail(written, f"must be a whole number of {knob.unit}, got {_show(raw)}")
    if knob.pair and knob.unit == "bytes" and number == 0:
        raise where.fail(
            written, f"the kernel refuses 0; set {knob.pair} instead to use the ratio again"
        )
    try:
        value = validate(knob.key, number)
    except TuningError as exc:
        raise where.fail(written, str(exc).removeprefix(f"{knob.key}: ")) from None
    assert isinstance(value, int)
    return Wanted(knob.key, value, raise_only, where.origin)


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if value is None:
        return "nothing"
    return repr(value)


# --- includes --------------------------------------------------------------------------------
def combine(top: PresetFile, library: Mapping[str, PresetFile]) -> Preset:
    """`top` with its includes (looked up by name in `library`) merged under it.

    Includes are merged in the order listed, each after its own includes; a later one overrides
    an earlier one and the including file overrides them all. A file that sets either half of
    a ratio/bytes pair overrides both halves. A cycle is an error that names it."""
    merged: dict[str, Wanted] = {}
    order: list[str] = []

    def visit(preset: PresetFile, chain: tuple[str, ...]) -> None:
        for name in preset.include:
            if name in chain:
                cycle = " -> ".join((*chain[chain.index(name) :], name))
                raise PresetError(
                    f"{preset.origin}: top level include: include cycle {cycle}",
                    preset.origin,
                    None,
                    "include",
                )
            try:
                included = library[name]
            except KeyError:
                known = ", ".join(sorted(library)) or "none"
                raise PresetError(
                    f"{preset.origin}: top level include: unknown preset {name!r} (known: {known})",
                    preset.origin,
                    None,
                    "include",
                ) from None
            visit(included, (*chain, name))
            if name not in order:
                order.append(name)
        for key, wanted in preset.values.items():
            pair = TUNABLES[key].pair
            if pair:
                merged.pop(pair, None)
            merged[key] = wanted

    visit(top, (top.name,))
    ordered = {k: merged[k] for k in (*_DEVICE_ORDER, *_GLOBAL_ORDER) if k in merged}
    return Preset(top.name, top.description, top.origin, ordered, tuple(order))


# --- resolving against the machine ---------------------------------------------------------
def resolve(
    preset: Preset,
    devices: Mapping[str, DeviceState],
    global_values: Mapping[str, int] | None = None,
) -> list[Change]:
    """current -> new for every value of the preset on these devices, in write order: each
    device's knobs (scheduler first), then the global ones. A value that does not apply is a
    `SkippedChange` with the reason in its note; a raise-only value below the current one
    keeps the current one. Raises TuningError naming the device when a device refuses a
    fixed value (max_sectors_kb above max_hw_sectors_kb, nr_requests above the queue depth)."""
    changes: list[Change] = []
    for name, state in devices.items():
        changes += _device_changes(preset, name, state)
    current = global_values or {}
    for key in _GLOBAL_ORDER:
        if key in preset.values:
            changes.append(_global_change(preset.values[key], current))
    return changes


def _device_changes(preset: Preset, name: str, state: DeviceState) -> list[Change]:
    out: list[Change] = []
    new_scheduler: str | None = None
    for key in _DEVICE_ORDER:
        wanted = preset.values.get(key)
        if wanted is None:
            continue
        current = state.values.get(key)
        if isinstance(wanted.value, tuple):
            change = _scheduler_change(wanted.value, name, state)
            if change.changes_anything:
                new_scheduler = str(change.setting.value)
                if "nr_requests" not in preset.values:
                    change = _with_note(change, "the switch resets nr_requests to its default")
            out.append(change)
        elif TUNABLES[key].scope is Scope.MD and not state.has_stripe_cache:
            what = f"md {state.md_level}" if state.md_level else "not an md array"
            out.append(
                SkippedChange(
                    Setting(key, wanted.value, name),
                    None,
                    f"skipped: {name} is {what}; {key} exists on md RAID 4/5/6 only",
                )
            )
        else:
            out.append(_number_change(wanted, name, state, current, new_scheduler))
    return out


def _scheduler_change(names: tuple[str, ...], device: str, state: DeviceState) -> Change:
    current = state.values.get("scheduler")
    offered = state.limits.schedulers
    pick = next((n for n in names if n in offered), None)
    if pick is None:
        return SkippedChange(
            Setting("scheduler", names[0], device),
            current,
            f"skipped: {device} offers none of {', '.join(names)} "
            f"(it offers: {', '.join(offered) or 'nothing'})",
        )
    note = f"the first of {', '.join(names)} that {device} offers" if len(names) > 1 else ""
    validate("scheduler", pick, state.limits)
    return Change(Setting("scheduler", pick, device), current, note)


def _number_change(
    wanted: Wanted,
    device: str,
    state: DeviceState,
    current: int | str | None,
    new_scheduler: str | None,
) -> Change:
    key = wanted.key
    assert isinstance(wanted.value, int)
    value = wanted.value
    notes: list[str] = []
    known = current if isinstance(current, int) else None
    if wanted.raise_only and known is not None and known > value:
        value = known
        notes.append("kept: already larger")
    limit, why = _device_limit(key, state, new_scheduler)
    if limit is not None and value > limit:
        if not wanted.raise_only:
            raise TuningError(f"{device}: {key} {value} is more than {why} ({limit})")
        value = limit
        notes = [f"capped at {why} ({limit})"]
    checked = validate(key, value, state.limits)
    # the switch resets nr_requests: written after it even when it reads as the new value now;
    # `current` stays what the device holds, as `tune show` says
    rewritten = key == "nr_requests" and new_scheduler is not None
    if rewritten:
        notes.insert(0, "written after the scheduler switch, which resets it")
    if current is None:
        notes.append("current value unknown")
    return Change(Setting(key, checked, device), current, "; ".join(notes), rewritten=rewritten)


def _device_limit(
    key: str, state: DeviceState, new_scheduler: str | None
) -> tuple[int | None, str]:
    if key == "max_sectors_kb":
        return state.limits.max_hw_sectors_kb, "max_hw_sectors_kb"
    if key == "nr_requests":
        scheduler = new_scheduler or state.values.get("scheduler")
        if scheduler == "none" and state.queue_depth:
            return state.queue_depth, "the hardware queue depth, its limit with scheduler none"
    return None, ""


def _global_change(wanted: Wanted, current_values: Mapping[str, int]) -> Change:
    key = wanted.key
    knob = TUNABLES[key]
    assert isinstance(wanted.value, int)
    current = current_values.get(key)
    value = wanted.value
    notes: list[str] = []
    if wanted.raise_only and current is not None and current > value:
        return Change(Setting(key, current), current, "kept: already larger")
    setting = Setting(key, validate(key, value))
    effects = pair_effects(setting)
    if knob.pair and current is not None:
        other = current_values.get(knob.pair)
        if other and not in_force(key, current_values):
            notes.append(
                f"switches from {knob.pair} at {shown(knob.pair, other)}: "
                f"the kernel sets {knob.pair} to 0"
            )
    if current is None:
        notes.append("current value unknown")
    return Change(setting, current, "; ".join(notes), effects)


def in_force(key: str, values: Mapping[str, int | str]) -> bool:
    """Whether this half of a ratio/bytes pair is the one the kernel uses: the bytes knob when
    it is non-zero, else the ratio. Knobs without a pair are always in force."""
    knob = tunable(key)
    if knob.pair is None:
        return True
    bytes_key = knob.key if knob.unit == "bytes" else knob.pair
    bytes_in_force = values.get(bytes_key, 0) not in (0, "0")
    return bytes_in_force if knob.unit == "bytes" else not bytes_in_force


def _with_note(change: Change, note: str) -> Change:
    joined = f"{change.note}; {note}" if change.note else note
    return replace(change, note=joined)


CUSTOM = "(custom)"  # no file can have this name: every knob as it is now, to edit by hand


def as_now(devices: Mapping[str, DeviceState], global_values: Mapping[str, int]) -> list[Change]:
    """Every knob of these devices and the global ones in force, each at its current value:
    the starting point for values typed by hand."""
    changes: list[Change] = []
    for name, state in devices.items():
        for key in _DEVICE_ORDER:
            if key == "stripe_cache_size" and not state.has_stripe_cache:
                continue
            if (value := state.values.get(key)) is not None:
                changes.append(Change(Setting(key, value, name), value))
    for key in _GLOBAL_ORDER:
        if key in global_values and in_force(key, global_values):
            changes.append(Change(Setting(key, global_values[key]), global_values[key]))
    return changes


def edited(
    change: Change, text: str, state: DeviceState | None, global_values: Mapping[str, int]
) -> Change:
    """The preview's row with the value typed into it, checked as a preset's value is: the
    device's schedulers and limits, the knob's range, the kernel's ratio/bytes rule."""
    key = change.setting.key
    knob = tunable(key)
    if knob.scope is not Scope.GLOBAL and state is None:
        raise TuningError(f"{key}: the device's current state is unknown")
    if knob.choices:
        assert state is not None
        validate(key, text, state.limits)
        return _with_note(_scheduler_change((text.strip(),), state.name, state), "edited")
    try:
        number = ascii_int(text.strip())
    except ValueError:
        raise TuningError(f"{key}: expected a whole number of {knob.unit}, not {text!r}") from None
    wanted = Wanted(knob.key, number)
    if knob.pair and knob.unit == "bytes" and number == 0 and global_values.get(key) != 0:
        raise TuningError(f"{key}: the kernel refuses 0; set {knob.pair} to use the ratio again")
    if knob.scope is Scope.GLOBAL:
        return _with_note(_global_change(wanted, global_values), "edited")
    assert state is not None
    page_kib = PAGE_BYTES // 1024
    kept = number - number % page_kib if key == "read_ahead_kb" else number
    note = "edited" + (f"; the kernel keeps {kept} (whole {page_kib} KiB pages)" * (kept != number))
    return _with_note(
        _number_change(wanted, state.name, state, state.values.get(knob.key), None), note
    )

"""Tuning verbs: `tuning.read`, `tuning.apply`, `tuning.verify`, `tuning.revert`, `tuning.persist`.

Every path written is `relative_path()` of a validated key and device (the allowlist in
`model.tunables`), joined to the helper's root ("/" except in tests). Before the first write
of an apply the previous values go into a journal (JSON, fsync'd, renamed into place), so a
later helper, after a crash of this one or of the GUI, can write them back. A write refused
by the kernel rolls back the writes before it, in reverse order.

As tuned does for the ratio/bytes pairs: when the knob being set reads 0 its counterpart is in
force, so the counterpart's value is journaled and written back on revert (which zeroes the
knob again), so the mode that was in force comes back.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import secrets
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stripewise.model.tunables import (
    GLOBAL_KEYS,
    TUNABLES,
    DeviceLimits,
    Scope,
    Setting,
    Tunable,
    TuningError,
    check_device_name,
    check_together,
    parse_scheduler,
    relative_path,
    tunable,
    validate,
)
from stripewise.protocol.wire import ProtocolError, Request

if TYPE_CHECKING:
    from stripewise.helper.session import Session

DEFAULT_STATE_DIR = "/var/lib/stripewise"
JOURNAL_NAME = "tuning-journal.json"
JOURNAL_VERSION = 1
MAX_SETTINGS = 256
MAX_DEVICES = 256
KEEP_ENTRIES = 32  # applies remembered; older ones are dropped from the journal
SYSCTL_FILE = "etc/sysctl.d/90-stripewise.conf"
UDEV_FILE = "etc/udev/rules.d/90-stripewise.rules"
_JOURNAL_ID = re.compile(r"^[0-9A-Za-z-]{1,40}\Z")  # \Z: "$" allows a final "\n"
_UDEV_SAFE = re.compile(r"^[A-Za-z0-9_.:+-]{1,128}\Z")  # no glob, quote or space in a match
_OPEN_STATES = ("pending", "applied", "partial")  # something may still be changed
Value = int | str | None


# --- reading and writing one knob ------------------------------------------------------------
def read_text(path: str) -> str:
    """The file's text, stripped; never follows a symlink in the last component."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        return os.read(fd, 65536).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)


def write_text(path: str, text: str) -> None:
    """One write(2), as sysfs wants it; O_TRUNC so a plain file (tests' --root) is replaced."""
    data = text.encode()
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if os.write(fd, data) != len(data):
            raise OSError(errno.EIO, f"short write to {path}")
    finally:
        os.close(fd)


def parse_value(knob: Tunable, text: str) -> Value:
    if knob.choices:
        active, names = parse_scheduler(text)
        return active or (names[0] if len(names) == 1 else None)  # md shows a bare "none"
    try:
        return int(text)
    except ValueError:
        return None


def kernel_error(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "error")
    return f"{exc.strerror or 'failed'} ({name})"


@dataclass
class Machine:
    """The files the verbs touch, under `root` ("/" except in tests)."""

    root: str

    def path(self, relative: str) -> str:
        return os.path.join(self.root, relative)

    def read(self, key: str, device: str | None) -> Value:
        try:
            return parse_value(tunable(key), read_text(self.path(relative_path(key, device))))
        except OSError:
            return None

    def write(self, key: str, device: str | None, value: int | str) -> None:
        write_text(self.path(relative_path(key, device)), str(value))

    def block(self, name: str, *parts: str) -> str:
        return os.path.join(self.root, "sys/block", name, *parts)

    def attribute(self, name: str, *parts: str) -> str | None:
        try:
            return read_text(self.block(name, *parts))
        except OSError:
            return None

    def limits(self, name: str) -> DeviceLimits:
        _active, schedulers = parse_scheduler(self.attribute(name, "queue", "scheduler") or "")
        hw = self.attribute(name, "queue", "max_hw_sectors_kb")
        return DeviceLimits(
            schedulers=schedulers,
            max_hw_sectors_kb=int(hw) if hw and hw.isdigit() else None,
            is_md_with_stripe_cache=os.path.isfile(self.block(name, "md", "stripe_cache_size")),
        )

    def queue_depth(self, name: str) -> int | None:
        """Tags per hardware queue: nr_requests' limit with scheduler none."""
        try:
            queues = os.listdir(self.block(name, "mq"))
        except OSError:
            return None
        depths = [self.attribute(name, "mq", queue, "nr_tags") for queue in queues]
        numbers = [int(d) for d in depths if d and d.isdigit() and int(d) > 0]
        return min(numbers) if numbers else None

    def diskseq(self, name: str) -> str | None:
        """Changes whenever the device gets new media (a loop device re-attached): a revert
        never writes to a different disk that took the same name."""
        return self.attribute(name, "diskseq")


def _bad(message: str, request: Request) -> ProtocolError:
    return ProtocolError("bad_args", message, request.id)


def _check_args(request: Request, allowed: set[str]) -> dict[str, Any]:
    unknown = set(request.args) - allowed
    if unknown:
        raise _bad(f"unknown arguments: {sorted(unknown)}", request)
    return request.args


def _require_root(session: Session, request: Request, what: str) -> None:
    if not session.privileged:
        raise ProtocolError(
            "not_privileged", f"{what} needs root: the helper runs as an ordinary user", request.id
        )


def _device(machine: Machine, name: object, request: Request) -> str:
    """A kernel name that passes check_device_name and exists under <root>/sys/block."""
    if not isinstance(name, str):
        raise _bad(f"device must be a kernel name such as sdb, not {name!r}", request)
    try:
        bare = check_device_name(name)
    except TuningError as exc:
        raise _bad(str(exc), request) from None
    if not os.path.isdir(machine.block(bare)):
        if os.path.exists(os.path.join(machine.root, "sys/class/block", bare, "partition")):
            raise _bad(f"{bare} is a partition: tune its whole disk", request)
        raise ProtocolError("not_found", f"/dev/{bare} does not exist", request.id)
    return bare


# --- tuning.read -----------------------------------------------------------------------------
def handle_read(session: Session, request: Request) -> dict[str, Any]:
    args = _check_args(request, {"devices"})
    machine = Machine(session.root)
    names = args.get("devices", [])
    if not isinstance(names, list) or len(names) > MAX_DEVICES:
        raise _bad(f"devices: a list of at most {MAX_DEVICES} kernel names", request)
    devices: dict[str, Any] = {}
    for raw in names:
        name = _device(machine, raw, request)
        limits = machine.limits(name)
        values = {
            key: machine.read(key, name)
            for key, knob in TUNABLES.items()
            if knob.scope is Scope.DEVICE
            or (knob.scope is Scope.MD and limits.is_md_with_stripe_cache)
        }
        devices[name] = {
            "values": values,
            "limits": {
                "schedulers": list(limits.schedulers),
                "max_hw_sectors_kb": limits.max_hw_sectors_kb,
                "stripe_cache_size": limits.is_md_with_stripe_cache,
                "queue_depth": machine.queue_depth(name),
            },
        }
    try:
        entries = Journal(session.state_dir).load(set_aside=False)
    except OSError:
        entries = []  # an ordinary user may not read root's journal: nothing to show
    newest = next((e for e in reversed(entries) if e.get("state") in _OPEN_STATES), None)
    return {
        "devices": devices,
        "globals": {key: machine.read(key, None) for key in GLOBAL_KEYS},
        "units": {key: knob.unit for key, knob in TUNABLES.items()},
        "journal": _summary(newest) if newest else None,
    }


def _summary(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: entry.get(k) for k in ("id", "label", "state", "created", "boot_id")}


# --- validation shared by apply and persist --------------------------------------------------
def validated_settings(machine: Machine, raw: object, request: Request) -> list[Setting]:
    """Every setting checked before anything is written: shape, count, key, device (its name
    and its existence), value against the device's own limits, and the pair rules."""
    if not isinstance(raw, list) or not raw:
        raise _bad("settings: a non-empty list of {key, value, device?}", request)
    if len(raw) > MAX_SETTINGS:
        raise _bad(f"settings: at most {MAX_SETTINGS} at a time, not {len(raw)}", request)
    limits: dict[str, DeviceLimits] = {}
    settings: list[Setting] = []
    for index, item in enumerate(raw):
        where = f"settings[{index}]"
        if not isinstance(item, dict) or set(item) - {"key", "value", "device"}:
            raise _bad(f"{where}: an object with key, value and (per device) device", request)
        key, value, device = item.get("key"), item.get("value"), item.get("device")
        if not isinstance(key, str):
            raise _bad(f"{where}: key must be text", request)
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise _bad(f"{where}: value must be a number or a name", request)
        try:
            knob = tunable(key)
            name = None if device is None else _device(machine, device, request)
            relative_path(knob.key, name)  # global vs device vs md: refused here by name
            if name is not None and name not in limits:
                limits[name] = machine.limits(name)
            device_limits = limits.get(name) if name else None
            if knob.scope is Scope.MD and not (
                device_limits and device_limits.is_md_with_stripe_cache
            ):
                raise TuningError(f"{name} has no stripe cache (md RAID 4/5/6 only)")
            settings.append(Setting(knob.key, validate(knob.key, value, device_limits), name))
        except TuningError as exc:
            raise _bad(f"{where}: {exc}", request) from None
    try:
        check_together(settings)
    except TuningError as exc:
        raise _bad(str(exc), request) from None
    for setting in settings:
        if setting.key == "nr_requests" and setting.device:
            _check_queue_depth(machine, setting, settings, request)
    return settings


def _check_queue_depth(
    machine: Machine, setting: Setting, settings: list[Setting], request: Request
) -> None:
    """Without a scheduler nr_requests may not exceed the hardware queue's tags (EINVAL);
    the scheduler that counts is the one this same apply sets, if it sets one."""
    scheduler = next(
        (s.value for s in settings if s.key == "scheduler" and s.device == setting.device),
        machine.read("scheduler", setting.device),
    )
    depth = machine.queue_depth(str(setting.device))
    if scheduler == "none" and depth is not None and int(setting.value) > depth:
        raise _bad(
            f"{setting.label}: {setting.value} is more than the hardware queue depth "
            f"({depth}), its limit with scheduler none",
            request,
        )


def write_order(settings: list[Setting]) -> list[Setting]:
    """As given, except that a device's scheduler goes first: switching the scheduler resets
    nr_requests, so a later nr_requests would otherwise be lost."""
    return sorted(settings, key=lambda s: 0 if s.key == "scheduler" else 1)


# --- the journal ------------------------------------------------------------------------------
class Journal:
    """`tuning-journal.json` in the state directory: a list of applies, newest last."""

    def __init__(self, state_dir: str) -> None:
        self.directory = state_dir
        self.path = os.path.join(state_dir, JOURNAL_NAME)
        self.warnings: list[str] = []

    def load(self, *, set_aside: bool = True) -> list[dict[str, Any]]:
        """The entries; an unreadable journal is moved aside (when about to write a new one)
        with a warning, since nothing in it can be trusted to write back."""
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
        except FileNotFoundError:
            return []
        except (ValueError, UnicodeDecodeError):
            return self._set_aside("is not valid JSON", set_aside)
        entries = data.get("entries") if isinstance(data, dict) else None
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            return self._set_aside("has no list of entries", set_aside)
        return entries

    def _set_aside(self, problem: str, move: bool) -> list[dict[str, Any]]:
        if not move:
            self.warnings.append(f"{self.path} {problem}")
            return []
        aside = f"{self.path}.unreadable-{time.strftime('%Y%m%dT%H%M%S')}"
        with contextlib.suppress(OSError):
            os.rename(self.path, aside)
            self.warnings.append(f"{self.path} {problem}: moved to {aside}")
        return []

    def save(self, entries: list[dict[str, Any]]) -> None:
        """Temp file, fsync, rename over the old one, fsync the directory: a crash leaves the
        old journal or the new one, never half of one."""
        kept = entries[-KEEP_ENTRIES:]
        data = json.dumps({"version": JOURNAL_VERSION, "entries": kept}, indent=1)
        atomic_write(self.path, data + "\n", 0o644)  # tuning.verify works unprivileged

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One apply, revert or persist at a time, also across helper processes."""
        os.makedirs(self.directory, mode=0o755, exist_ok=True)
        fd = os.open(
            os.path.join(self.directory, "tuning.lock"),
            os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def atomic_write(path: str, text: str, mode: int) -> None:
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o755, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=directory)
    try:
        os.fchmod(fd, mode)
        os.write(fd, text.encode())
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.rename(temporary, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    directory_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(directory_fd)
    finally:
        os.close(directory_fd)


def boot_id() -> str | None:
    """The running boot (always the real one: a reboot resets every value a journal holds)."""
    try:
        return read_text("/proc/sys/kernel/random/boot_id")
    except OSError:
        return None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


# --- tuning.apply -----------------------------------------------------------------------------
def handle_apply(session: Session, request: Request) -> dict[str, Any]:
    args = _check_args(request, {"settings", "label"})
    _require_root(session, request, "changing tunables")
    label = args.get("label")
    if label is not None and (
        not isinstance(label, str) or len(label) > 200 or not label.isprintable()
    ):
        raise _bad("label: printable text of at most 200 characters", request)
    machine = Machine(session.root)
    settings = write_order(validated_settings(machine, args.get("settings"), request))
    journal = Journal(session.state_dir)
    try:
        return _apply(machine, journal, settings, label, request)
    except OSError as exc:  # the journal: before the first write, or the final bookkeeping
        raise ProtocolError(
            "io_error", f"journal {journal.path}: {exc.strerror or exc}", request.id
        ) from None


def _apply(
    machine: Machine,
    journal: Journal,
    settings: list[Setting],
    label: str | None,
    request: Request,
) -> dict[str, Any]:
    with journal.locked():
        entries = journal.load()
        entry = _new_entry(machine, settings, label, request)
        entries.append(entry)
        journal.save(entries)  # the previous values are on disk before the first write
        changes: list[dict[str, Any]] = entry["changes"]
        done: list[dict[str, Any]] = []
        # a second pass rewrites what a later write undid (max_sectors_kb can raise
        # read_ahead_kb); what still differs then is the kernel's rounding, shown as such
        for attempt in range(2):
            for change in changes if attempt == 0 else _not_sticking(machine, changes):
                try:
                    machine.write(change["key"], change["device"], change["written"])
                except OSError as exc:
                    failures = restore(machine, [*done, change] if attempt == 0 else changes)
                    entry["state"] = "partial" if failures else "rolled_back"
                    entry["error"] = (
                        f"{_label(change['key'], change['device'])}: {kernel_error(exc)}"
                    )
                    with contextlib.suppress(OSError):  # the kernel's refusal is the news here
                        journal.save(entries)
                    raise ProtocolError(
                        "write_failed", _failure_text(change, exc, len(done), failures), request.id
                    ) from None
                if attempt == 0:
                    done.append(change)
        for change in changes:
            change["after"] = machine.read(change["key"], change["device"])
            change["side_effects"] = [
                {**effect, "after": machine.read(effect["key"], None)}
                for effect in change["side_effects"]
            ]
        entry["state"] = "applied"
        journal.save(entries)
    return {
        "journal": entry["id"],
        "label": label,
        "settings": [_shown(change) for change in changes],
        "warnings": journal.warnings,
    }


def _not_sticking(machine: Machine, changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in changes if machine.read(c["key"], c["device"]) != c["written"]]


# Knobs the kernel resets when another one is written: switching the scheduler sets
# nr_requests to the new scheduler's default; a new max_sectors_kb may raise read_ahead_kb.
# They are journaled with it and written back after it.
ALSO_CHANGES = {"scheduler": ("nr_requests",), "max_sectors_kb": ("read_ahead_kb",)}


def _new_entry(
    machine: Machine, settings: list[Setting], label: str | None, request: Request
) -> dict[str, Any]:
    changes = []
    for setting in settings:
        knob = tunable(setting.key)
        before = machine.read(knob.key, setting.device)
        targets: list[dict[str, Any]] = [{"key": knob.key, "value": before}]
        side_effects = []
        if knob.pair:
            counterpart = machine.read(knob.pair, None)
            if before == 0 and counterpart not in (0, None):
                targets = [{"key": knob.pair, "value": counterpart}]  # the one in force
            if str(setting.value) != "0":
                side_effects.append({"key": knob.pair, "before": counterpart})
        for also in ALSO_CHANGES.get(knob.key, ()):
            targets.append({"key": also, "value": machine.read(also, setting.device)})
        unreadable = [t["key"] for t in targets if t["value"] is None]
        if unreadable:
            raise ProtocolError(
                "io_error",
                f"cannot read {_label(unreadable[0], setting.device)}: nothing was changed",
                request.id,
            )
        changes.append(
            {
                "key": knob.key,
                "device": setting.device,
                "unit": knob.unit,
                "before": before,
                "written": setting.value,
                "after": None,
                "restore": targets,
                "side_effects": side_effects,
            }
        )
    devices = sorted({s.device for s in settings if s.device})
    return {
        "id": f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}",
        "label": label,
        "created": _now(),
        "boot_id": boot_id(),
        "root": machine.root,
        "pid": os.getpid(),
        "state": "pending",
        "devices": {name: {"diskseq": machine.diskseq(name)} for name in devices},
        "changes": changes,
    }


def restore(machine: Machine, changes: list[dict[str, Any]]) -> list[str]:
    """Write the journaled values back where they differ, newest change first. A second pass,
    in apply order, rewrites any value that did not stick (a scheduler switch resets
    nr_requests; nr_requests above the hardware queue fails until the scheduler is back).
    Returns what still failed."""
    targets = [
        (change["device"], target) for change in reversed(changes) for target in change["restore"]
    ]
    failures: dict[int, str] = {}
    for _attempt in range(2):
        for device, target in targets:
            if machine.read(target["key"], device) == target["value"]:
                failures.pop(id(target), None)
                continue
            try:
                machine.write(target["key"], device, target["value"])
                failures.pop(id(target), None)
            except OSError as exc:
                failures[id(target)] = f"{_label(target['key'], device)}: {kernel_error(exc)}"
        targets.reverse()
    return list(failures.values())


def _label(key: str, device: str | None) -> str:
    return f"{device}: {key}" if device else key


def _failure_text(change: dict[str, Any], exc: OSError, done: int, failures: list[str]) -> str:
    where = _label(change["key"], change["device"])
    text = f"writing {change['written']} to {where} failed: {kernel_error(exc)}"
    if failures:
        return text + "; rolling back did not restore " + "; ".join(failures)
    if done:
        return text + f"; the {done} earlier change(s) were rolled back: nothing was changed"
    return text + "; nothing was changed"


def _shown(change: dict[str, Any]) -> dict[str, Any]:
    return {
        "key": change["key"],
        "device": change["device"],
        "unit": change["unit"],
        "before": change["before"],
        "written": change["written"],
        "after": change["after"],
        "matches": change["after"] == change["written"],
        "side_effects": change.get("side_effects", []),
    }


# --- picking a journal entry -----------------------------------------------------------------
def _pick(
    entries: list[dict[str, Any]], wanted: object, request: Request, nothing: str
) -> dict[str, Any]:
    if wanted is not None:
        if not isinstance(wanted, str) or not _JOURNAL_ID.match(wanted):
            raise _bad("journal: an id as returned by tuning.apply", request)
        for entry in entries:
            if entry.get("id") == wanted:
                return entry
        raise ProtocolError("not_found", f"no journal entry {wanted}", request.id)
    open_entries = [e for e in entries if e.get("state") in _OPEN_STATES]
    if open_entries:
        return open_entries[-1]
    last = entries[-1] if entries else None
    detail = f" (the last one, {last['id']}, is {last.get('state')})" if last else ""
    raise ProtocolError(nothing, f"no applied tuning in the journal{detail}", request.id)


# --- tuning.verify ----------------------------------------------------------------------------
def handle_verify(session: Session, request: Request) -> dict[str, Any]:
    args = _check_args(request, {"journal"})
    machine = Machine(session.root)
    journal = Journal(session.state_dir)
    try:
        entries = journal.load(set_aside=False)
    except OSError as exc:
        raise ProtocolError(
            "io_error", f"cannot read {journal.path}: {exc.strerror}", request.id
        ) from None
    entry = _pick(entries, args.get("journal"), request, "nothing_to_verify")
    same_boot = entry.get("boot_id") == boot_id()
    checked, mismatches = [], []
    for change in entry.get("changes", []):
        device = change["device"]
        now = machine.read(change["key"], device)
        reason = None
        if not same_boot:
            reason = "the machine restarted since the apply: the kernel's values are back"
        elif device and machine.diskseq(device) != entry["devices"][device]["diskseq"]:
            reason = f"{device} is gone or is another device now"
        elif change.get("after") is not None and change["after"] != change["written"]:
            reason = f"the kernel stored {change['after']} (rounded or clamped)"
        elif now != change["written"]:
            reason = "changed since the apply (by something else)"
        item = {
            "key": change["key"],
            "device": device,
            "unit": change["unit"],
            "written": change["written"],
            "now": now,
            "matches": reason is None and now == change["written"],
        }
        checked.append(item)
        if not item["matches"]:
            mismatches.append({**item, "reason": reason or "differs"})
    return {
        "journal": entry["id"],
        "state": entry.get("state"),
        "settings": checked,
        "mismatches": mismatches,
    }


# --- tuning.revert ----------------------------------------------------------------------------
def handle_revert(session: Session, request: Request) -> dict[str, Any]:
    args = _check_args(request, {"journal"})
    _require_root(session, request, "reverting tunables")
    machine = Machine(session.root)
    journal = Journal(session.state_dir)
    try:
        return _revert(machine, journal, args.get("journal"), request)
    except OSError as exc:
        raise ProtocolError(
            "io_error", f"journal {journal.path}: {exc.strerror or exc}", request.id
        ) from None


def _revert(machine: Machine, journal: Journal, wanted: object, request: Request) -> dict[str, Any]:
    with journal.locked():
        entries = journal.load()
        current_boot = boot_id()
        if wanted is None:
            expired = [  # a reboot reset everything they changed
                old
                for old in entries
                if old.get("state") in _OPEN_STATES and old.get("boot_id") != current_boot
            ]
            for old in expired:
                old["state"] = "expired"
            if expired:
                journal.save(entries)
        entry = _pick(entries, wanted, request, "nothing_to_revert")
        if entry.get("state") not in _OPEN_STATES:
            raise ProtocolError(
                "nothing_to_revert",
                f"journal entry {entry['id']} is {entry.get('state')}: nothing to revert",
                request.id,
            )
        _check_revertible(entry, entries, machine, current_boot, request)
        skipped, todo = [], []
        for change in entry["changes"]:
            device = change["device"]
            if device and machine.diskseq(device) != entry["devices"][device]["diskseq"]:
                skipped.append(
                    {
                        "key": change["key"],
                        "device": device,
                        "reason": f"{device} is gone or is another device now",
                    }
                )
            else:
                todo.append(change)
        was = {id(c): machine.read(c["key"], c["device"]) for c in todo}
        failures = restore(machine, todo)
        if failures:
            entry["revert_error"] = "; ".join(failures)
            journal.save(entries)
            raise ProtocolError(
                "write_failed",
                "reverting failed for " + "; ".join(failures) + ": run the revert again",
                request.id,
            )
        entry["state"] = "reverted"
        entry["reverted"] = _now()
        journal.save(entries)
    restored = [
        {
            "key": c["key"],
            "device": c["device"],
            "unit": c["unit"],
            "was": was[id(c)],
            "now": machine.read(c["key"], c["device"]),
            "restored": c["restore"][0],
        }
        for c in reversed(todo)
    ]
    return {"journal": entry["id"], "restored": restored, "skipped": skipped}


def _check_revertible(
    entry: dict[str, Any],
    entries: list[dict[str, Any]],
    machine: Machine,
    current_boot: str | None,
    request: Request,
) -> None:
    if entry.get("root") != machine.root:
        raise ProtocolError(
            "refused", f"journal entry {entry['id']} was made under {entry.get('root')}", request.id
        )
    if entry.get("boot_id") != current_boot:
        raise ProtocolError(
            "nothing_to_revert",
            f"journal entry {entry['id']} is from before the last restart: the values it "
            "changed were reset by the reboot",
            request.id,
        )
    touched = {(c["key"], c["device"]) for c in entry["changes"]}
    later = entries[entries.index(entry) + 1 :]
    for newer in later:
        if newer.get("state") in _OPEN_STATES and touched & {
            (c["key"], c["device"]) for c in newer.get("changes", [])
        }:
            raise ProtocolError(
                "refused",
                f"the later apply {newer['id']} changed the same knobs: revert it first",
                request.id,
            )


# --- tuning.persist ---------------------------------------------------------------------------
def handle_persist(session: Session, request: Request) -> dict[str, Any]:
    args = _check_args(request, {"action", "settings"})
    action = args.get("action")
    if action not in ("show", "preview", "write", "remove"):
        raise _bad("action: show, preview, write or remove", request)
    machine = Machine(session.root)
    paths = {"sysctl": machine.path(SYSCTL_FILE), "udev": machine.path(UDEV_FILE)}
    if action == "show":  # what is in place now; reading needs no root
        if "settings" in args:
            raise _bad("show takes no settings", request)
        files = [{"kind": k, "path": p, "text": _text_or_none(p)} for k, p in paths.items()]
        return {"files": files}
    if action == "remove":
        _require_root(session, request, "removing the boot-time settings")
        if "settings" in args:
            raise _bad("remove takes no settings", request)
        removed, absent = [], []
        with Journal(session.state_dir).locked():
            for path in paths.values():
                try:
                    os.unlink(path)
                    removed.append(path)
                except FileNotFoundError:
                    absent.append(path)
        return {"removed": removed, "absent": absent}
    if action == "write":
        _require_root(session, request, "writing the boot-time settings")
    settings = validated_settings(machine, args.get("settings"), request)
    sysctl_text = sysctl_conf(s for s in settings if s.device is None)
    rules_text, warnings = udev_rules(machine, [s for s in settings if s.device is not None])
    texts = {"sysctl": sysctl_text, "udev": rules_text}
    result: dict[str, Any] = {
        "files": [{"kind": k, "path": paths[k], "text": texts[k]} for k in paths],
        "warnings": warnings,
    }
    if action == "write":
        written, removed = [], []
        with Journal(session.state_dir).locked():
            for kind, path in paths.items():
                text = texts[kind]
                if text is not None:
                    atomic_write(path, text, 0o644)
                    written.append(path)
                elif os.path.exists(path):  # no such settings any more: none at boot
                    os.unlink(path)
                    removed.append(path)
        result.update(written=written, removed=removed)
    return result


def _text_or_none(path: str) -> str | None:
    """The file as written (64 KiB at most), None when absent; a symlink there is an error."""
    try:
        return read_text(path) + "\n"
    except FileNotFoundError:
        return None


_HEADER = "# Written by Stripewise (tuning.persist); rewritten or removed by it, edits are lost.\n"


def sysctl_conf(settings: Iterable[Setting]) -> str | None:
    lines = [f"{s.key} = {s.value}" for s in settings]
    if not lines:
        return None
    return _HEADER + "# Read at boot by systemd-sysctl.\n" + "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Identity:
    match: str  # the udev rule's match keys
    described: str  # for people: "WWN 0x5000...", "kernel name sdb"
    warning: str | None = None


def identity(machine: Machine, name: str) -> Identity:
    """The disk's stable identity as udev will see it at boot: MD_UUID for md arrays, else
    ID_WWN, else ID_SERIAL (or ID_SERIAL_SHORT), else the kernel name with a warning. Properties
    come from the udev database; without one (containers, this kind of VM) from sysfs, the way
    udev's own rules derive them."""
    properties = _udev_properties(machine, name)
    candidates: list[tuple[str, str | None]]
    if properties:  # what udev itself has: nothing else would match at boot
        key_names = ("MD_UUID",) if name.startswith("md") else ("ID_WWN", "ID_SERIAL")
        candidates = [(key, properties.get(key)) for key in key_names]
    elif name.startswith("md"):
        candidates = [("MD_UUID", _md_uuid(machine.attribute(name, "md", "uuid")))]
    else:
        candidates = [("ID_WWN", _sysfs_wwn(machine, name)), *_sysfs_serial(machine, name)]
    warnings = []
    for key, value in candidates:
        if not value:
            continue
        if not _UDEV_SAFE.match(value):
            warnings.append(f"{key} of {name} ({value!r}) has characters a rule cannot match")
            continue
        if not properties:
            warnings.append(
                f"{name}: {key} derived from sysfs (no udev database): check `udevadm info`"
            )
        return Identity(f'ENV{{{key}}}=="{value}"', f"{key} {value}", "; ".join(warnings) or None)
    warnings.append(
        f"{name} has no WWN, serial or md UUID: its rule matches the kernel name, "
        "which can name another disk after a reboot"
    )
    return Identity(f'KERNEL=="{name}"', f"kernel name {name}", "; ".join(warnings))


def _udev_properties(machine: Machine, name: str) -> dict[str, str]:
    """From the udev database of the running system; empty without one or under a test root."""
    if machine.root != "/" or not os.path.isdir("/run/udev/data"):
        return {}
    try:
        import pyudev  # type: ignore[import-untyped]

        device = pyudev.Devices.from_name(pyudev.Context(), "block", name)
        return {str(k): str(v) for k, v in device.properties.items()}
    except Exception:  # pyudev missing, device gone: sysfs then
        return {}


def _sysfs_wwn(machine: Machine, name: str) -> str | None:
    """udev's ID_WWN: the NVMe namespace's `wwid` as is; for SCSI/ATA disks `0x` and the first
    16 hex digits of the NAA identifier (scsi_id and ata_id both report it so)."""
    if name.startswith("nvme"):
        return machine.attribute(name, "wwid") or None
    text = machine.attribute(name, "device", "wwid") or ""
    if text.startswith("naa."):
        return "0x" + text[4:20].lower()
    return None


def _sysfs_serial(machine: Machine, name: str) -> list[tuple[str, str | None]]:
    """virtio disks: ID_SERIAL is the serial attribute; others: ID_SERIAL_SHORT is."""
    if name.startswith("vd"):
        return [("ID_SERIAL", machine.attribute(name, "serial"))]
    found = machine.attribute(name, "device", "serial") or machine.attribute(name, "serial")
    if not found:
        page = machine.attribute(name, "device", "vpd_pg80")  # SCSI unit serial number page
        found = "".join(c for c in page[4:] if c.isprintable()).strip() if page else None
    return [("ID_SERIAL_SHORT", found)]


def _md_uuid(text: str | None) -> str | None:
    """md's sysfs `uuid` (8-4-4-4-12) in mdadm's MD_UUID spelling (four groups of 8, colons),
    as metadata 1.x arrays show it."""
    if not text:
        return None
    digits = text.replace("-", "").lower()
    if not re.fullmatch(r"[0-9a-f]{32}", digits):
        return None
    return ":".join(digits[i : i + 8] for i in range(0, 32, 8))


def udev_rules(machine: Machine, settings: list[Setting]) -> tuple[str | None, list[str]]:
    if not settings:
        return None, []
    by_device: dict[str, list[Setting]] = {}
    for setting in write_order(settings):
        by_device.setdefault(str(setting.device), []).append(setting)
    lines = [
        _HEADER.rstrip("\n"),
        "# Applied by udev when each disk appears, keyed on its identity.",
    ]
    warnings = []
    for name, group in by_device.items():
        ident = identity(machine, name)
        if ident.warning:
            warnings.append(ident.warning)
        assignments = ", ".join(
            f"ATTR{{{os.path.relpath(relative_path(s.key, name), f'sys/block/{name}')}}}"
            f'="{s.value}"'
            for s in group
        )
        kind = 'KERNEL=="md*", ' if name.startswith("md") else 'ENV{DEVTYPE}=="disk", '
        lines.append(f"# {name}: {ident.described}")
        lines.append(
            f'ACTION=="add|change", SUBSYSTEM=="block", {kind}{ident.match}, {assignments}'
        )
    return "\n".join(lines) + "\n", warnings

"""The tuning journal's records as frozen values, and the one codec to and from its JSON file.

A `JournalEntry` is one apply: the settings it wrote (`JournalChange`, each holding its
validated `Setting`), what each replaced (`restore`: the values a revert writes back, a pair's
counterpart when that one was in force), the pair knob the kernel zeroed (`PairEffect`) and,
for an apply its helper was killed in, what a later helper put back (`PutBack`, the replies'
own). States change by `dataclasses.replace`.

The file's format is the one earlier versions wrote, key for key, so their journals load and
they can read ours: `{"version": 1, "entries": [...]}` with the keys `entry_to_json` writes.
Keys added over time (`pid_start`, `put_back`, ...) are optional when read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from stripewise.model.tunables import Setting
from stripewise.protocol.tuning_replies import PutBack
from stripewise.system.block_tunables import Value

OPEN_STATES = ("pending", "applied", "partial")  # something may still be changed
# pending: journaled, being written (or its helper was killed: "interrupted"); applied;
# partial, rolled_back: a write failed; reverted; restored: interrupted, and put back by a
# later helper; expired: from before the last reboot, which reset what it changed
PENDING, APPLIED, RESTORED, EXPIRED = "pending", "applied", "restored", "expired"
JsonObject = dict[str, object]  # an object of the journal file, as json reads and writes it


class JournalFormatError(ValueError):
    """An entry the codec cannot read: the journal is set aside as unreadable."""


@dataclass(frozen=True)
class KnobTarget:
    """A value to write back on revert: the knob's own, or its pair's when that was in force."""

    key: str
    value: Value


@dataclass(frozen=True)
class PairEffect:
    """The ratio/bytes counterpart the kernel zeroes when a knob is written: its value
    before, and after once the apply re-read it (`after_read`: the file has `after` then)."""

    key: str
    before: Value
    after: Value = None
    after_read: bool = False


@dataclass(frozen=True)
class JournalChange:
    """One setting of an apply: what it wrote, what it found, what the kernel kept."""

    setting: Setting  # validated: the key in full, the value as written
    unit: str
    before: Value
    restore: tuple[KnobTarget, ...]  # written back in this order, the first the knob's own
    side_effects: tuple[PairEffect, ...] = ()
    after: Value = None  # re-read once the apply is done (the kernel may round)

    @property
    def key(self) -> str:
        return self.setting.key

    @property
    def device(self) -> str | None:
        return self.setting.device

    @property
    def written(self) -> int | str:
        return self.setting.value


@dataclass(frozen=True)
class JournalEntry:
    """One apply, as journaled before its first write and updated as it goes."""

    id: str
    label: str | None
    created: str
    boot_id: str | None
    root: str | None  # "/" but in tests: another root's entries are another machine's
    pid: int | None  # the helper that wrote it, with its start time (pids are reused)
    pid_start: int | None
    state: str
    diskseq: Mapping[str, str | None]  # per device: another number is another device
    changes: tuple[JournalChange, ...]
    error: str | None = None  # why a write failed (partial, rolled_back)
    revert_error: str | None = None
    reverted: str | None = None  # when
    restore_error: str | None = None  # an interrupted apply that could not be put back
    restored: str | None = None  # when it was
    put_back: tuple[PutBack, ...] | None = None  # what was

    @property
    def is_open(self) -> bool:
        return self.state in OPEN_STATES

    def touches(self) -> set[tuple[str, str | None]]:
        return {(c.key, c.device) for c in self.changes}


# --- the codec: the journal file's JSON ---------------------------------------------------
def entry_to_json(entry: JournalEntry) -> JsonObject:
    data: JsonObject = {
        "id": entry.id,
        "label": entry.label,
        "created": entry.created,
        "boot_id": entry.boot_id,
        "root": entry.root,
        "pid": entry.pid,
        "pid_start": entry.pid_start,
        "state": entry.state,
        "devices": {name: {"diskseq": seq} for name, seq in entry.diskseq.items()},
        "changes": [_change_to_json(change) for change in entry.changes],
    }
    for key in ("error", "revert_error", "reverted", "restore_error", "restored"):
        if getattr(entry, key) is not None:
            data[key] = getattr(entry, key)
    if entry.put_back is not None:
        data["put_back"] = [_put_back_to_json(item) for item in entry.put_back]
    return data


def _change_to_json(change: JournalChange) -> JsonObject:
    return {
        "key": change.key,
        "device": change.device,
        "unit": change.unit,
        "before": change.before,
        "written": change.written,
        "after": change.after,
        "restore": [{"key": t.key, "value": t.value} for t in change.restore],
        "side_effects": [
            {"key": e.key, "before": e.before} | ({"after": e.after} if e.after_read else {})
            for e in change.side_effects
        ],
    }


def _put_back_to_json(item: PutBack) -> JsonObject:
    return {
        "journal": item.journal,
        "key": item.key,
        "device": item.device,
        "was": item.was,
        "value": item.value,
    }


def entry_from_json(data: object) -> JournalEntry:
    """One entry as any version wrote it; JournalFormatError naming what is wrong."""
    read = _Reader(data, "entry")
    entry_id = read.text("id")
    read.where = f"entry {entry_id}"
    devices = read.object("devices")
    diskseq = {
        name: _Reader(value, f"{read.where}: devices.{name}").optional_text("diskseq")
        for name, value in devices.items()
    }
    changes = tuple(
        _change_from_json(item, f"{read.where}: changes[{n}]", diskseq)
        for n, item in enumerate(read.list("changes"))
    )
    put_back = None
    if read.has("put_back"):
        put_back = tuple(
            _put_back_from_json(item, f"{read.where}: put_back[{n}]")
            for n, item in enumerate(read.list("put_back"))
        )
    return JournalEntry(
        entry_id,
        read.optional_text("label"),
        read.optional_text("created") or "",
        read.optional_text("boot_id"),
        read.optional_text("root"),
        read.optional_whole("pid"),
        read.optional_whole("pid_start"),
        read.text("state"),
        diskseq,
        changes,
        error=read.optional_text("error"),
        revert_error=read.optional_text("revert_error"),
        reverted=read.optional_text("reverted"),
        restore_error=read.optional_text("restore_error"),
        restored=read.optional_text("restored"),
        put_back=put_back,
    )


def _change_from_json(data: object, where: str, diskseq: Mapping[str, str | None]) -> JournalChange:
    read = _Reader(data, where)
    device = read.optional_text("device")
    if device is not None and device not in diskseq:
        raise JournalFormatError(f"{where}: {device} is not among the entry's devices")
    written = read.value("written")
    if written is None:
        raise JournalFormatError(f"{where}: written: a number or a name expected")
    restore = tuple(
        KnobTarget(target.text("key"), target.value("value"))
        for target in (_Reader(t, f"{where}: restore") for t in read.list("restore"))
    )
    if not restore:
        raise JournalFormatError(f"{where}: restore: nothing to write back")
    effects = tuple(
        PairEffect(
            effect.text("key"), effect.value("before"), effect.value("after"), effect.has("after")
        )
        for effect in (
            _Reader(e, f"{where}: side_effects") for e in read.list("side_effects", default=[])
        )
    )
    return JournalChange(
        Setting(read.text("key"), written, device),
        read.optional_text("unit") or "",
        read.value("before"),
        restore,
        effects,
        read.value("after"),
    )


def _put_back_from_json(data: object, where: str) -> PutBack:
    read = _Reader(data, where)
    return PutBack(
        read.text("journal"),
        read.text("key"),
        read.optional_text("device"),
        read.value("was"),
        read.value("value"),
    )


# --- reading JSON values, each failure naming its field -------------------------------------
class _Reader:
    """The fields of one JSON object of the journal."""

    def __init__(self, data: object, where: str) -> None:
        if not isinstance(data, dict):
            raise JournalFormatError(f"{where}: an object expected")
        self.data: JsonObject = data
        self.where = where

    def has(self, key: str) -> bool:
        return key in self.data

    def _fail(self, key: str, expected: str) -> JournalFormatError:
        return JournalFormatError(f"{self.where}: {key}: {expected} expected")

    def text(self, key: str) -> str:
        value = self.data.get(key)
        if not isinstance(value, str):
            raise self._fail(key, "text")
        return value

    def optional_text(self, key: str) -> str | None:
        return None if self.data.get(key) is None else self.text(key)

    def optional_whole(self, key: str) -> int | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._fail(key, "a whole number or null")
        return value

    def value(self, key: str) -> Value:
        """A knob's value: a whole number, a name (the scheduler), or None (unreadable)."""
        value = self.data.get(key)
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise self._fail(key, "a number, a name or null")

    def list(self, key: str, default: list[object] | None = None) -> list[object]:
        value = self.data.get(key, default)
        if not isinstance(value, list):
            raise self._fail(key, "a list")
        return value

    def object(self, key: str) -> JsonObject:
        """An object; absent or null: empty (old entries may have no devices)."""
        value = self.data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self._fail(key, "an object")
        return value

"""`tuning-journal.json` in the state directory: every apply with the values it replaced, so
a later helper (after a crash of this one or of the GUI) can write them back.

A `JournalEntry` is one apply: the settings it wrote (`JournalChange`, each holding its
validated `Setting`), what each replaced (`restore`: the values a revert writes back, a pair's
counterpart when that one was in force), the pair knob the kernel zeroed (`PairEffect`) and,
for an apply its helper was killed in, what a later helper put back (`PutBack`, the replies'
own). They are frozen: states change by `dataclasses.replace`.

The file's format is the one earlier versions wrote, key for key, so their journals load and
they can read ours: `{"version": 1, "entries": [...]}` with the keys `entry_to_json` writes;
keys added over time (`pid_start`, `put_back`, ...) are optional when read. One codec reads
and writes it (`entry_from_json`, `entry_to_json`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from stripewise.model.tunables import Setting
from stripewise.protocol.tuning_replies import PutBack
from stripewise.system.block_tunables import Value, read_text

JOURNAL_NAME = "tuning-journal.json"
JOURNAL_VERSION = 1
KEEP_ENTRIES = 32  # applies remembered; older ones are dropped from the journal


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
    # put back when its helper's session ends, and by the next helper if that one died first
    # (an experiment's values: `tuning.apply` with `temporary`)
    temporary: bool = False

    @property
    def is_open(self) -> bool:
        return self.state in OPEN_STATES

    def touches(self) -> set[tuple[str, str | None]]:
        return {(c.key, c.device) for c in self.changes}


class Journal:
    """A list of applies, newest last."""

    def __init__(self, state_dir: str) -> None:
        self.directory = state_dir
        self.path = os.path.join(state_dir, JOURNAL_NAME)
        self.warnings: list[str] = []

    def load(self, *, set_aside: bool = True) -> list[JournalEntry]:
        """The entries, oldest first; an unreadable journal (one of its entries included) is
        moved aside (when about to write a new one) with a warning, since nothing in it can be
        trusted to write back."""
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
        except FileNotFoundError:
            return []
        except (ValueError, UnicodeDecodeError):
            return self._set_aside("is not valid JSON", set_aside)
        entries = data.get("entries") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            return self._set_aside("has no list of entries", set_aside)
        try:
            return [entry_from_json(entry) for entry in entries]
        except JournalFormatError as exc:
            return self._set_aside(f"has an entry that cannot be read ({exc})", set_aside)

    def _set_aside(self, problem: str, move: bool) -> list[JournalEntry]:
        if not move:
            self.warnings.append(f"{self.path} {problem}")
            return []
        aside = f"{self.path}.unreadable-{time.strftime('%Y%m%dT%H%M%S')}"
        with contextlib.suppress(OSError):
            os.rename(self.path, aside)
            self.warnings.append(f"{self.path} {problem}: moved to {aside}")
        return []

    def save(self, entries: Sequence[JournalEntry]) -> None:
        """Temp file, fsync, rename over the old one, fsync the directory: a crash leaves the
        old journal or the new one, never half of one."""
        kept = [entry_to_json(entry) for entry in entries[-KEEP_ENTRIES:]]
        data = json.dumps({"version": JOURNAL_VERSION, "entries": kept}, indent=1)
        atomic_write(self.path, data + "\n", 0o644)  # tuning.verify works unprivileged

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One apply, revert or persist at a time, also across helper processes. The kernel
        drops a killed helper's lock, so a pending entry seen under it is an interrupted one."""
        with self.locked_within(None) as held:
            assert held
            yield

    @contextlib.contextmanager
    def locked_within(self, timeout_s: float | None) -> Iterator[bool]:
        """`locked`, giving up after `timeout_s` (None: never): yields whether it is held."""
        os.makedirs(self.directory, mode=0o755, exist_ok=True)
        fd = os.open(
            os.path.join(self.directory, "tuning.lock"),
            os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
        try:
            yield _flock(fd, timeout_s)
        finally:
            os.close(fd)


def _flock(fd: int, timeout_s: float | None) -> bool:
    if timeout_s is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return True
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)


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


def process_start(pid: int) -> int | None:
    """When a process started (clock ticks since boot): with its pid, who it is, since pids
    are reused. None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return int(fields[19])  # field 22, counted after the name's ")"
    except (OSError, IndexError, ValueError):
        return None


def helper_alive(entry: JournalEntry) -> bool:
    """Whether the helper that wrote a pending entry may still be applying it: same boot, its
    pid running, and started when it did (where the entry says: older ones do not)."""
    pid = entry.pid
    if entry.boot_id != boot_id() or pid is None or pid <= 0:
        return False
    started = process_start(pid)
    return started is not None and entry.pid_start in (None, started)


def timestamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


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
        data["put_back"] = [item.to_json() for item in entry.put_back]
    if entry.temporary:
        data["temporary"] = True
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
        temporary=read.flag("temporary"),
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

    def flag(self, key: str) -> bool:
        """true or false; absent (entries before the key existed): false."""
        value = self.data.get(key, False)
        if not isinstance(value, bool):
            raise self._fail(key, "true or false")
        return value

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

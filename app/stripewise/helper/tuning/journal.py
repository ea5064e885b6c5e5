"""`tuning-journal.json` in the state directory: every apply with the values it replaced, so
a later helper (after a crash of this one or of the GUI) can write them back. Its entries are
`entries.JournalEntry` values, read and written by the codec there."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterator, Sequence

from stripewise.helper.tuning.entries import (
    JournalEntry,
    JournalFormatError,
    entry_from_json,
    entry_to_json,
)
from stripewise.system.block_tunables import read_text

JOURNAL_NAME = "tuning-journal.json"
JOURNAL_VERSION = 1
KEEP_ENTRIES = 32  # applies remembered; older ones are dropped from the journal


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

"""The test files a helper creates, written down before they exist, so that a helper killed
mid-run (kill -9, power cut) has its files removed by the next helper that starts.

One small JSON record per file in `<state dir>/created/`: which helper (pid, start time,
boot), whose file (uid), which directory (its device and inode, so a directory swapped in
under the same name is not touched) and, once created, the file's inode. A sweep removes the
files of helpers that are gone, as their owner, by name relative to a freshly resolved
directory handle and only when the inode still matches. A directory under a FUSE
filesystem a user serves is never looked up (its daemon could hold the sweep forever): its
record waits for a helper that starts once the mount is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from stripewise.helper.credentials import Caller, run_as
from stripewise.helper.resolve import PathRefused, open_path, user_served_mount

_RECORD_BYTES = 64 * 1024  # a path of PATH_MAX characters, each escaped, fits
_MAX_RECORDS = 10_000
SWEEP_BUDGET_S = 20.0  # the rest waits for the next helper


@dataclass
class CreatedFile:
    helper_pid: int
    helper_start: str
    boot_id: str
    uid: int
    gid: int
    directory: str
    dir_dev: int
    dir_ino: int
    name: str
    ino: int | None = None


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat: unique for a pid within one boot."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[-1].split()[19]


def records_directory(state_dir: str) -> Path:
    """The helper's state directory; a helper that is not root keeps its own records."""
    if os.geteuid() == 0:
        return Path(state_dir) / "created"
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return Path(base) / "stripewise" / "created"


class CreatedFiles:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def intend(self, caller: Caller, dir_fd: int, directory: str, name: str) -> Path:
        """Write the record (durably) before the file is created."""
        info = os.fstat(dir_fd)
        me = os.getpid()
        record = CreatedFile(
            me, _start_time(me) or "", _boot_id(), caller.uid, caller.gid, directory,
            info.st_dev, info.st_ino, name,
        )  # fmt: skip
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self.directory / f"{me}-{secrets.token_hex(8)}.json"
        self._write(path, record)
        return path

    def created(self, path: Path, ino: int) -> None:
        record = self._read(path)
        if record is not None:
            record.ino = ino
            self._write(path, record)

    def forget(self, path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

    def sweep(self, budget_s: float = SWEEP_BUDGET_S) -> Iterator[tuple[int, str]]:
        """Remove the files of helpers that are no longer running, for at most `budget_s`;
        yields (owner, path) of each as it is removed (whose it was decides who is told)."""
        deadline = time.monotonic() + budget_s
        try:
            paths = sorted(self.directory.glob("*.json"))[:_MAX_RECORDS]
        except OSError:
            return
        boot = _boot_id()
        for path in paths:
            if time.monotonic() > deadline:
                break
            record = self._read(path)
            if record is None:  # kept for an admin to look at, never read again
                with contextlib.suppress(OSError):
                    path.rename(path.with_suffix(".unreadable"))
                continue
            if record.boot_id == boot and _start_time(record.helper_pid) == record.helper_start:
                continue  # that helper is still running its benchmark
            if user_served_mount(record.directory) is not None:
                continue  # kept: no look-up in a user's FUSE mount, by name or otherwise
            with contextlib.suppress(OSError, PathRefused):
                if _remove(record):
                    yield record.uid, os.path.join(record.directory, record.name)
            self.forget(path)

    @staticmethod
    def _write(path: Path, record: CreatedFile) -> None:
        temporary = path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, json.dumps(asdict(record)).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
        with contextlib.suppress(OSError):
            fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    @staticmethod
    def _read(path: Path) -> CreatedFile | None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return None
                data: Any = json.loads(os.read(fd, _RECORD_BYTES))
            finally:
                os.close(fd)
            return CreatedFile(**data)
        except (OSError, ValueError, TypeError):
            return None


def _remove(record: CreatedFile) -> bool:
    """As the file's owner: the directory must be the one recorded, the name a regular file
    with the recorded inode (or, never created as far as the record knows, the owner's)."""
    caller = Caller.of_uid(record.uid, record.gid)
    if "/" in record.name or not record.name.startswith(".stripewise-bench-"):
        return False  # only ever names this helper makes

    def work() -> bool:
        dir_fd = open_path(record.directory)
        try:
            here = os.fstat(dir_fd)
            if (here.st_dev, here.st_ino) != (record.dir_dev, record.dir_ino):
                return False
            info = os.stat(record.name, dir_fd=dir_fd, follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode):
                return False
            if record.ino is not None and info.st_ino != record.ino:
                return False
            if record.ino is None and info.st_uid != record.uid:
                return False
            os.unlink(record.name, dir_fd=dir_fd)
            return True
        finally:
            os.close(dir_fd)

    return run_as(caller, work)

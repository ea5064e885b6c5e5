"""A benchmark target held by descriptors from validation to removal.

A directory is held as an O_PATH descriptor and its test file is created relative to it with
O_CREAT|O_EXCL|O_NOFOLLOW, as the caller; a device is held open (O_EXCL when writing). The
engines never see a name the caller can change: they open `path`, the magic link
/proc/self/fd/N of the held descriptor (fio inherits the descriptor under the same number),
which always leads to the same file or device whatever happens to the names around it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from stripewise.helper.created_files import CreatedFiles
from stripewise.helper.credentials import Caller, run_as

TEST_FILE_PREFIX = ".stripewise-bench-"


@dataclass
class Target:
    kind: Literal["directory", "device"]
    shown: str  # for people and sysfs look-ups: the directory or device node, as resolved
    disks: tuple[str, ...]  # kernel names under it (the reply's; the run samples its layers)
    free_bytes: int  # free space in the directory, or the device's size
    notes: tuple[str, ...] = ()
    caller: Caller | None = None  # whose credentials file I/O runs with (None: the helper's)
    dir_fd: int = -1  # directories: O_PATH
    fd: int = -1  # the test file once created, or the device
    name: str = ""  # the test file's name in the directory
    _record: Path | None = field(default=None, repr=False)
    _records: CreatedFiles | None = field(default=None, repr=False)
    _closing: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def path(self) -> str:
        """The test file (in the directory) or the device, as the client is told."""
        return os.path.join(self.shown, self.name) if self.kind == "directory" else self.shown

    @property
    def engine_path(self) -> str:
        """What an engine opens: the held descriptor's magic link, which nobody can swap."""
        if self.fd < 0:
            raise ValueError("the test file has not been created")
        return f"/proc/self/fd/{self.fd}"

    def create_file(self, records: CreatedFiles | None) -> None:
        """The test file, written down first so that a successor removes it if we die."""
        if self.kind != "directory" or self.fd >= 0:
            return
        caller = self.caller or Caller.of_uid(os.getuid(), os.getgid())
        self.name = f"{TEST_FILE_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        if records is not None:
            self._records = records
            self._record = records.intend(caller, self.dir_fd, self.shown, self.name)
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            self.fd = run_as(
                self.caller, lambda: os.open(self.name, flags, 0o600, dir_fd=self.dir_fd)
            )
        except BaseException:
            self._forget()
            raise
        if records is not None and self._record is not None:
            records.created(self._record, os.fstat(self.fd).st_ino)

    def reopen(self, flags: int) -> int:
        """A new open file description of the held file or device (e.g. with O_DIRECT)."""
        fd = run_as(
            self.caller if self.kind == "directory" else None,
            lambda: os.open(self.engine_path, flags | os.O_CLOEXEC),
        )
        mine, theirs = os.fstat(self.fd), os.fstat(fd)
        if (mine.st_dev, mine.st_ino, mine.st_rdev) != (
            theirs.st_dev,
            theirs.st_ino,
            theirs.st_rdev,
        ):
            os.close(fd)
            raise OSError(f"{self.path} changed under the benchmark")
        return fd

    def truncate(self, size: int) -> None:
        """Files only: empty it, then give it `size` bytes of holes (allocating writes follow,
        and fio sees a file large enough not to lay it out again by name)."""
        if self.kind == "directory":
            os.ftruncate(self.fd, 0)
            os.ftruncate(self.fd, size)

    def close(self) -> None:
        """Remove the test file (by name in the held directory, only if it is still ours),
        then let go of every descriptor. Once, whichever thread asks first (the run's end, or
        a helper exiting under a run that did not stop in time)."""
        with self._closing:
            if self.kind == "directory" and self.fd >= 0:
                with contextlib.suppress(OSError):
                    run_as(self.caller, self._unlink_ours)
            for fd in (self.fd, self.dir_fd):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            self.fd = self.dir_fd = -1
            self._forget()

    def _unlink_ours(self) -> None:
        ours = os.fstat(self.fd)
        there = os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
        if stat.S_ISREG(there.st_mode) and (there.st_dev, there.st_ino) == (
            ours.st_dev,
            ours.st_ino,
        ):
            os.unlink(self.name, dir_fd=self.dir_fd)

    def _forget(self) -> None:
        if self._records is not None and self._record is not None:
            self._records.forget(self._record)
        self._record = None

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _identity(info: os.stat_result) -> tuple[int, int, int]:
    return info.st_dev, info.st_ino, info.st_rdev

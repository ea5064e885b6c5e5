"""Files written where the admin says (exports, scripts, snapshots, bay layouts): whole or
not at all.

The text is encoded before the file is touched, then written to a temporary file beside it and
renamed over it, so a failure (text that cannot be encoded, a full disk) leaves what was there
as it was. Only a regular file, or a name not taken, is replaced that way: a symbolic link is
written through to what it names (as the shell's `>` does, and it stays a link), a terminal,
FIFO or /dev/null is written to in place, and a block device or a directory is refused:
renaming over a device node would put a file in its place, and writing a disk would erase it.
Every refusal is an OutputFileError whose message is one line naming the file.

Standard library only, as input_files: the commands and the GUI's services write through it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path


class OutputFileError(OSError):
    """A file not written; the message is one line naming it."""

    def __str__(self) -> str:
        return str(self.args[0])


def write_output(path: Path, text: str, *, mode: int | None = None) -> None:
    """`text` as UTF-8 into `path`; `mode` the file's permissions (default: an existing file's,
    else 0666 less the umask)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: no text a file can hold
        said = f"{exc.reason} (character {exc.start})"
        raise OutputFileError(f"cannot write {path}: {said}") from None
    target = Path(os.path.realpath(path))  # through a link, to what it names
    try:
        info: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise OutputFileError(f"cannot write {path}: {exc.strerror}") from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise OutputFileError(f"cannot write {path}: a directory")
    if info is not None and stat.S_ISBLK(info.st_mode):
        refused = "a block device (writing it would erase the disk)"
        raise OutputFileError(f"cannot write {path}: {refused}")
    try:
        if info is not None and not stat.S_ISREG(info.st_mode):
            _write_in_place(target, data)
        else:
            _replace(target, data, _mode(mode, info))
    except OSError as exc:
        raise OutputFileError(f"cannot write {path}: {exc.strerror or exc}") from None


def _mode(mode: int | None, info: os.stat_result | None) -> int:
    if mode is not None:
        return mode
    if info is not None:
        return stat.S_IMODE(info.st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _write_in_place(target: Path, data: bytes) -> None:
    with open(target, "wb") as handle:  # a terminal, a FIFO, /dev/null...
        handle.write(data)


def _replace(target: Path, data: bytes, mode: int) -> None:
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise

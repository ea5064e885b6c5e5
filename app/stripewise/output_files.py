"""Files written where the admin says (exports, scripts, snapshots, plans, bay layouts): whole
or not at all, and never over a device.

The text is encoded before anything is touched. A name not taken, or a regular file, is written
to a temporary file in the same directory and renamed over the name, so a failure (text that
cannot be encoded, a full disk) leaves what was there as it was. The file replaced keeps its
permissions, and its owner where that owner owns the directory too. A symbolic link there is
replaced, never followed, so a link another user planted in /tmp cannot point the write at
/etc/passwd. Written in place, opened through the name as given so the kernel's own checks
apply (`fs.protected_symlinks`): a FIFO, a socket, a terminal, /dev/null, and what /dev/stdout or
/dev/fd/N name (a pipe, `>(...)`). Anything else is refused: a directory, a block device
(writing it would erase a disk), any other character device (a tape, flash, /dev/mem).
Every refusal is an OutputFileError whose message is one line naming the file.

Standard library only, as input_files: the commands and the GUI's services write through it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

# what /dev/stdout, /dev/stderr and /dev/fd/N are: links through /proc to a descriptor
_DESCRIPTORS = ("/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/self/fd/")
_NULL = os.makedev(1, 3)
# the export format a file's name asks for (runs, comparisons, experiments; CLI and GUI alike)
EXPORT_SUFFIXES = {".csv": "csv", ".json": "json", ".html": "html", ".htm": "html"}


class OutputFileError(OSError):
    """A file not written; the message is one line naming it."""

    def __str__(self) -> str:
        return str(self.args[0])


def write_output(path: Path, text: str, *, mode: int | None = None) -> None:
    """`text` as UTF-8 into `path`; `mode` the new file's permissions (default: an existing
    file's, else 0666 less the umask)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: no text a file can hold
        said = f"{exc.reason} (character {exc.start})"
        raise OutputFileError(f"cannot write {path}: {said}") from None
    write_output_bytes(path, data, mode=mode)


def write_output_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """`data` (an image) into `path`, as write_output writes text."""
    try:
        _write(Path(path), data, mode)
    except OutputFileError:
        raise
    except OSError as exc:
        raise OutputFileError(f"cannot write {path}: {exc.strerror or exc}") from None


def _write(path: Path, data: bytes, mode: int | None) -> None:
    try:
        info: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode) and str(path).startswith(_DESCRIPTORS):
        _write_in_place(path, data, descriptor=True)  # this process's: a pipe, a terminal, a file
    elif info is None or stat.S_ISLNK(info.st_mode):
        _replace(path, data, mode)
    elif stat.S_ISREG(info.st_mode):
        if not os.access(path, os.W_OK):
            raise OutputFileError(f"cannot write {path}: Permission denied")
        if not os.access(path.parent, os.W_OK | os.X_OK):  # no file can be made beside it
            _write_in_place(path, data, descriptor=False)
        else:
            kept = mode if mode is not None else stat.S_IMODE(info.st_mode)
            _replace(path, data, kept, owner=_owner_to_keep(path, info))
    elif stat.S_ISFIFO(info.st_mode) or (stat.S_ISCHR(info.st_mode) and _terminal_or_null(info)):
        _write_in_place(path, data, descriptor=False)  # never opened: other devices act on open
    else:
        raise OutputFileError(f"cannot write {path}: {_kind(info)}")


def _write_in_place(path: Path, data: bytes, *, descriptor: bool) -> None:
    """Through the name (the kernel follows /dev/stdout by its rules), checked on the open
    descriptor: a regular file only as a descriptor of this process or in a directory that
    takes no new file, never through a link there."""
    follow = 0 if descriptor else os.O_NOFOLLOW
    flags = os.O_WRONLY | os.O_TRUNC | os.O_NOCTTY | os.O_CLOEXEC | os.O_NONBLOCK | follow
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        writable = (
            stat.S_ISFIFO(info.st_mode)
            or stat.S_ISSOCK(info.st_mode)
            or stat.S_ISREG(info.st_mode)
            or (stat.S_ISCHR(info.st_mode) and (os.isatty(fd) or info.st_rdev == _NULL))
        )
        if not writable:
            raise OutputFileError(f"cannot write {path}: {_kind(info)}")
        os.set_blocking(fd, True)  # opened without waiting for a reader; written as any file
        with os.fdopen(fd, "wb", closefd=False) as handle:
            handle.write(data)
    finally:
        os.close(fd)


def _owner_to_keep(path: Path, info: os.stat_result) -> tuple[int, int] | None:
    """The replaced file's owner, for the new file, when that owner also owns the directory
    (root's `--save ~/runs.json` stays the admin's): they could replace the file anyway. Never
    in a directory of someone else's (/tmp), where keeping the planter's ownership would let
    them edit root's script before it runs."""
    if info.st_uid == os.geteuid():
        return None
    return (info.st_uid, info.st_gid) if os.stat(path.parent).st_uid == info.st_uid else None


def _replace(
    path: Path, data: bytes, mode: int | None, owner: tuple[int, int] | None = None
) -> None:
    """A new file beside `path`, renamed over it: what was there stays whole until then."""
    for _attempt in range(8):
        temporary = path.with_name(f".sw-{secrets.token_hex(6)}.tmp")  # short: any name fits
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            break
        except FileExistsError:
            continue
        except OSError as exc:
            if not path.parent.is_dir():
                raise  # the folder is not there: the errno says so of the name asked for
            # the name asked for may exist (/proc/version): the errno is the folder's
            said = f"no file can be made in {path.parent} ({exc.strerror or exc})"
            raise OutputFileError(f"cannot write {path}: {said}") from None
    else:
        raise OutputFileError(f"cannot write {path}: no free temporary name beside it")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if owner is not None:
                with contextlib.suppress(PermissionError):  # root may; others keep theirs
                    os.fchown(handle.fileno(), *owner)
            if mode is not None:
                os.fchmod(handle.fileno(), mode)  # after fchown, which clears set-id bits
        os.replace(temporary, path)  # a link at `path` is replaced, not followed
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _terminal_or_null(info: os.stat_result) -> bool:
    """/dev/null, or a terminal by its device numbers (tty, console, pts): checked before
    opening, as opening a tape rewinds it."""
    major = os.major(info.st_rdev)
    return info.st_rdev == _NULL or major in (4, 5) or 136 <= major <= 143


def _kind(info: os.stat_result) -> str:
    if stat.S_ISDIR(info.st_mode):
        return "a directory"
    if stat.S_ISBLK(info.st_mode):
        return "a block device (writing it would erase the disk)"
    if stat.S_ISCHR(info.st_mode):
        return "a device, not a file (only a terminal or /dev/null is written to)"
    return "not a regular file"

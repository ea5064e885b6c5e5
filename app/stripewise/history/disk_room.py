"""Room on the disk before it is needed: a full filesystem costs a write, never the process.

Two places need it. SQLite in WAL mode maps the database's `-shm` file into memory and extends
it by writing one byte at the end of each 4 KiB page; on a filesystem of 1 KiB blocks (ext4
makes them on small devices) the rest of each page stays a hole, and the first store into a
hole must allocate a block. On a full filesystem that allocation fails inside a page fault,
and the kernel sends SIGBUS: the process dies mid-commit ("Bus error", exit 135) with nothing
said and nothing kept. `wal_index_room` allocates every block of the file before SQLite stores
into it (fallocate), so a full disk is a write SQLite refuses (SQLITE_FULL), which the history
handles like any other refusal.

And the local spool, where runs go when the history refuses them, often lives on the same full
filesystem: it keeps a ballast file of `BALLAST_BYTES`, made while there is room and given up
when a run's essential records (its header and its end) find none.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

SHM_REGION = 32 * 1024  # SQLite maps its wal-index in regions of this size
BALLAST_BYTES = 256 * 1024  # a run's header and results with their journal, many times over
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_SQLITE_FULL = 13  # SQLITE_FULL, also the low byte of its extended codes


def is_full(exc: BaseException) -> bool:
    """The error says the disk (or the user's quota) is full."""
    if isinstance(exc, OSError):
        return exc.errno in _FULL_ERRNOS
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return (code is not None and code & 0xFF == _SQLITE_FULL) or "disk is full" in str(exc)
    return False


def _fallocate(fd: int, length: int) -> None:
    """Allocate blocks for [0, length) with the fallocate system call itself. Not
    os.posix_fallocate: where the filesystem lacks fallocate, glibc emulates it by writing a
    zero into each block that reads as zero, which races with other processes' stores into a
    shared mapping and could wipe them."""
    libc = ctypes.CDLL(None, use_errno=True)
    call = libc.fallocate
    call.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
    if call(fd, 0, 0, length) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))


@contextmanager
def wal_index_room(db_path: Path) -> Iterator[None]:
    """Around a connection's first use of WAL (it opens and maps the wal-index there): every
    block of `db_path`'s `-shm` file, up to whole regions, allocated before (so the block of
    its header survives SQLite truncating the file) and after (to fill the holes SQLite's
    extension left). Raises sqlite3.OperationalError when the disk has no room: the
    connection is refused, cleanly, instead of dying later."""
    with _ONE_AT_A_TIME:  # our connections attach to a wal-index inside this lock only
        reserve_shm(db_path)
        yield
        reserve_shm(db_path)


def reserve_shm(db_path: Path) -> None:
    """Every block of `db_path`'s `-shm` file, up to whole regions, allocated.

    A descriptor this process opens on the file is never closed while SQLite has it open:
    closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's
    own locks on its wal-index included, and other processes would then take the wal-index
    for abandoned and rebuild it under this one ("locking protocol"). So SQLite's descriptor
    is used when there is one; else one of ours, closed with nobody's lock on it."""
    shm = db_path.with_name(db_path.name + "-shm")
    held = _descriptor_of(shm)
    if held is not None:
        _allocate(held, shm)
        return
    try:
        mode = db_path.stat().st_mode & 0o666  # SQLite gives -shm the database's mode
        fd = os.open(shm, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, mode)
    except OSError:
        return  # no database yet, or a folder we may only read: SQLite copes as ever
    try:
        if os.geteuid() == 0:  # as SQLite does: root's -shm belongs to the database's owner
            found = db_path.stat()
            os.fchown(fd, found.st_uid, found.st_gid)
        _allocate(fd, shm)
    finally:
        os.close(fd)


_ONE_AT_A_TIME = threading.Lock()


def _descriptor_of(path: Path) -> int | None:
    """A descriptor this process holds on `path`'s file (SQLite's), found in /proc/self/fd."""
    try:
        wanted = os.stat(path)
        names = os.listdir("/proc/self/fd")
    except OSError:
        return None
    for name in names:
        with suppress(OSError, ValueError):
            found = os.stat(f"/proc/self/fd/{name}")
            if (found.st_dev, found.st_ino) == (wanted.st_dev, wanted.st_ino):
                return int(name)
    return None


def _allocate(fd: int, shm: Path) -> None:
    try:
        size = os.fstat(fd).st_size
        _fallocate(fd, max(SHM_REGION, -(-size // SHM_REGION) * SHM_REGION))
    except OSError as exc:
        if not is_full(exc):
            return  # EOPNOTSUPP, a read-only descriptor: this filesystem cannot say
        raise sqlite3.OperationalError(
            f"no room on its disk for {shm.name}, SQLite's shared memory (free some space)"
        ) from None


def ensure_ballast(path: Path, size: int = BALLAST_BYTES) -> bool:
    """`path` holds `size` allocated bytes (made now if missing); False when there is no room
    for it, or the folder cannot be written: there is then nothing to give up later."""
    try:
        if path.stat().st_size >= size:
            return True
    except OSError:
        pass
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError:
        return False
    try:
        os.posix_fallocate(fd, 0, size)  # a private file: glibc's emulation is harmless here
        os.fsync(fd)
        return True
    except OSError:
        with suppress(OSError):
            os.unlink(path)  # a part-made ballast would give up less than it promises
        return False
    finally:
        os.close(fd)


def release_ballast(path: Path) -> bool:
    """Give the ballast's room back to the disk: True when there was one. The folder is
    synced: ext4 reuses freed blocks only once the journal has committed their release."""
    try:
        os.unlink(path)
    except OSError:
        return False
    with suppress(OSError):
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
    return True

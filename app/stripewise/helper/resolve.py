"""Resolve a caller's path once, without following a link the caller could have planted.

`open_path` returns an O_PATH descriptor; everything after works through it, so a rename or a
symlink swapped in later changes nothing. The kernel does it in one call where it has
openat2 (RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS). A path with a symbolic link in it is
then walked one component at a time with O_PATH|O_NOFOLLOW, and a link is followed only
where nobody but root can have made it: in a directory owned by root that nobody else may
write (udev's /dev/disk/by-id, /dev/mapper). That holds for a root caller too: the kernel's
protected_symlinks does not guard a walk that reads links itself, so a link another user
planted in /tmp is never followed. Links in /proc (magic links to other processes' files) are
never followed.

System locations are recognised by the filesystem and the directory within it, read from
/proc/self/mountinfo, so a bind mount of /etc elsewhere is still /etc.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

_OPENAT2 = 437  # the same number on every architecture
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_MAX_LINKS = 40  # the kernel's own limit
_MAX_PATH = 4096

# Never benchmark here: the running system lives in these (and /dev holds only device nodes).
SYSTEM_PATHS = (
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/root",
    "/run", "/sbin", "/sys", "/usr", "/var/lib/apt", "/var/lib/dnf", "/var/lib/dpkg",
    "/var/lib/pacman", "/var/lib/rpm",
)  # fmt: skip


class PathRefused(ValueError):
    """The path cannot be used safely; the message says why."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _openat2(path: str) -> int:
    """-> fd; raises OSError (ENOSYS where the kernel lacks it, ELOOP at a symlink)."""
    how = _OpenHow(os.O_PATH | os.O_CLOEXEC, 0, _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
    fd = _libc.syscall(
        _OPENAT2, ctypes.c_int(-100), os.fsencode(path), ctypes.byref(how), ctypes.sizeof(how)
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)
    return int(fd)


def fd_path(fd: int) -> str:
    """The kernel's name for what the descriptor holds (for messages and sysfs look-ups)."""
    return os.readlink(f"/proc/self/fd/{fd}")


def _trusted_directory(dir_fd: int) -> bool:
    info = os.fstat(dir_fd)
    if info.st_dev == os.stat("/proc").st_dev:
        return False  # /proc/<pid>/fd/...: magic links into other processes
    return info.st_uid == 0 and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _walk(path: str) -> int:
    """O_PATH|O_NOFOLLOW one component at a time from /; links only in trusted directories.
    A trusted link's '..' (udev's `../../sdb`) climbs from the directory the walk holds,
    through the kernel, never by name."""
    parts = [(p, False) for p in path.split("/") if p]  # (name, came from a trusted link)
    current = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    links = 0
    try:
        while parts:
            part, linked = parts.pop(0)
            if part == "." and linked:
                continue
            if part in (".", "..") and not linked:
                raise PathRefused(f"{path}: give the path without '.' or '..'")
            try:
                following = os.open(part, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=current)
            except FileNotFoundError:
                if linked:
                    raise PathRefused(f"{path}: a symbolic link on the way leads nowhere") from None
                raise
            if stat.S_ISLNK(os.fstat(following).st_mode):
                os.close(following)
                if not _trusted_directory(current):
                    raise PathRefused(
                        f"{path}: {part} is a symbolic link in a directory others than root "
                        "can change: give the real path"
                    )
                links += 1
                if links > _MAX_LINKS:
                    raise OSError(errno.ELOOP, "too many levels of symbolic links", path)
                target = os.readlink(part, dir_fd=current)
                if target.startswith("/"):
                    os.close(current)
                    current = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
                parts = [(p, True) for p in target.split("/") if p] + parts
                continue
            os.close(current)
            current = following
        return current
    except BaseException:
        os.close(current)
        raise


def open_path(path: str) -> int:
    """An O_PATH descriptor of `path` (absolute, no '.' or '..'), resolved once."""
    if not path or not os.path.isabs(path) or len(path) > _MAX_PATH or "\0" in path:
        raise PathRefused(f"{path!r}: give an absolute path (a directory or /dev/...)")
    try:
        os.fsencode(path)
    except UnicodeEncodeError:  # a lone surrogate: no file has this name
        raise PathRefused(f"{path!r}: not a valid path") from None
    if any(p in (".", "..") for p in path.split("/")):
        raise PathRefused(f"{path}: give the path without '.' or '..'")
    try:
        return _openat2(path)
    except OSError as error:
        if error.errno not in (errno.ELOOP, errno.ENOSYS, errno.EPERM, errno.EXDEV):
            raise
    return _walk(path)


@dataclass(frozen=True)
class _Mount:
    mount_point: str
    root: str  # the directory of the filesystem mounted there (not / for bind mounts)
    device: int


def _unescape(field: str) -> str:
    return (
        field.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
    )


def _mounts() -> list[_Mount]:
    found = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            fields = line.split()
            if len(fields) < 5 or ":" not in fields[2]:
                continue
            major, minor = fields[2].split(":", 1)
            device = os.makedev(int(major), int(minor))
            found.append(_Mount(_unescape(fields[4]), _unescape(fields[3]), device))
    return found


def _within(path: str, top: str) -> bool:
    return top == "/" or path == top or path.startswith(top.rstrip("/") + "/")


def _on_filesystem(path: str, device: int, mounts: list[_Mount]) -> str | None:
    """Where `path` (a name in this mount namespace) lies within its filesystem."""
    best = None
    for mount in mounts:
        if _within(path, mount.mount_point) and (
            best is None or len(mount.mount_point) >= len(best.mount_point)
        ):
            best = mount
    if best is None or best.device != device:
        return None
    inner = path[len(best.mount_point.rstrip("/")) :] if best.mount_point != "/" else path
    return os.path.normpath(best.root.rstrip("/") + "/" + inner.lstrip("/"))


def system_location(fd: int) -> str | None:
    """The system directory `fd` is (or lies in), however it was reached; None if none.
    By the kernel's own name for it first (a mount inside /dev or /run is still theirs),
    then by filesystem and place within it (a bind mount of /etc elsewhere is still /etc)."""
    here = fd_path(fd)
    for system in SYSTEM_PATHS:
        if _within(here, system):
            return system
    if here == "/":
        return "/"
    device = os.fstat(fd).st_dev
    mounts = _mounts()
    inside = _on_filesystem(here, device, mounts)
    if inside is None:
        return None
    for system in ("/", *SYSTEM_PATHS):
        try:
            info = os.stat(system)
        except OSError:
            continue
        if info.st_dev != device:
            continue
        theirs = _on_filesystem(os.path.realpath(system), device, mounts)
        if theirs is None:
            continue
        if inside == theirs if system == "/" else _within(inside, theirs):
            return system
    return None


def _user_served(fields: list[str]) -> bool:
    """A FUSE filesystem mounted for a user: its daemon (theirs) answers every look-up, or
    never does; root-mounted ones (ntfs-3g, glusterfs) are the admin's."""
    if "-" not in fields:
        return False
    at = fields.index("-")
    fstype, options = fields[at + 1], fields[at + 3] if len(fields) > at + 3 else ""
    if not fstype.startswith("fuse"):
        return False
    owners = [o.split("=", 1)[1] for o in options.split(",") if o.startswith("user_id=")]
    return any(owner != "0" for owner in owners)


def _mountinfo() -> list[list[str]]:
    try:
        return [line.split() for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    except OSError:
        return []


def mount_of(fd: int) -> list[str] | None:
    """The mountinfo fields of the mount the descriptor is on (by its mount id in fdinfo): no
    path is looked up, so nothing a caller renames meanwhile changes the answer."""
    try:
        info = Path(f"/proc/self/fdinfo/{fd}").read_text().splitlines()
        mount_id = next(line.split()[1] for line in info if line.startswith("mnt_id:"))
    except (OSError, StopIteration, IndexError):
        return None
    return next((fields for fields in _mountinfo() if fields[:1] == [mount_id]), None)


def mount_source(fields: list[str]) -> str:
    """The source field (after the ' - ' separator and the filesystem type), unescaped."""
    at = fields.index("-") if "-" in fields else len(fields)
    return _unescape(fields[at + 2]) if len(fields) > at + 2 else ""


def user_served_mount(path: str, fd: int | None = None) -> str | None:
    """The mount point of a user's FUSE filesystem `path` lies in (by name, before any look-up
    that its daemon could hold forever), or that the descriptor is on (by mount id)."""
    if fd is not None:
        fields = mount_of(fd)
        return _unescape(fields[4]) if fields and _user_served(fields) else None
    for fields in _mountinfo():
        if len(fields) >= 5 and _user_served(fields) and _within(path, _unescape(fields[4])):
            return _unescape(fields[4])
    return None


def open_loop_backing(name: str, sys: str = "/sys") -> int | None:
    """An O_PATH descriptor of loop device `name`'s backing file, or None. The name is the
    kernel's, but the directories on the way belong to whoever attached the file: resolved as
    a target is (no untrusted links), and refused inside a user's FUSE mount before any
    look-up its daemon could hold forever. The sampler, the ceiling and the compression guard
    all come here."""
    try:
        with open(f"{sys}/class/block/{name}/loop/backing_file", "rb") as source:
            raw = source.read(_MAX_PATH + 1)
    except OSError:
        return None
    backing = os.fsdecode(raw).strip().removesuffix(" (deleted)")
    if len(raw) > _MAX_PATH or not backing or user_served_mount(backing) is not None:
        return None
    try:
        return open_path(backing)
    except (OSError, PathRefused):
        return None

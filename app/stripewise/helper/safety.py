"""Where a benchmark may run: refuse anything that could hurt the system or someone's data.

Checks only read; a refusal leaves no file and no byte written. The target is resolved once
and held by a descriptor (see `target`); directories are checked with the caller's own
credentials, and system directories are recognised by filesystem, not by name. Writing to a
block device needs the device's serial typed back (what the admin reads off the label or the
hardware map) and, when anything recognisable is on it, an explicit overwrite. Mounted, held
or swapped-on devices are refused even then: a device is held open with O_EXCL from the
moment it is checked to the end of the run.

Signatures are found by reading the first 128 KiB and the last 1 MiB and comparing known magic
numbers (table below, offsets from util-linux's libblkid), then asking `blkid -p` for anything
the table misses (ZFS, NTFS, ...) when it is installed.
"""

from __future__ import annotations

import errno
import mmap
import os
import stat

import psutil

from stripewise.helper.credentials import Caller, run_as
from stripewise.helper.disk_layers import disks_under
from stripewise.helper.resolve import (
    PathRefused,
    fd_path,
    open_path,
    system_location,
    user_served_mount,
)
from stripewise.helper.target import Target
from stripewise.model.bench import BenchSpec
from stripewise.model.units import binary_size

FREE_MARGIN = 0.01  # keep 1 % of the free space free
_HEAD_BYTES = 128 * 1024
_TAIL_BYTES = 2**20
_MD_MAGIC = b"\xfc\x4e\x2b\xa9"  # 0xa92b4efc little-endian
_PAGE = mmap.PAGESIZE

# (offset, magic, what it is)
HEAD_MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"XFSB", "an XFS filesystem"),
    (0, b"LUKS\xba\xbe", "a LUKS encrypted volume"),
    (0, _MD_MAGIC, "an md RAID member (metadata 1.1)"),
    (4096, _MD_MAGIC, "an md RAID member (metadata 1.2)"),
    (512, b"EFI PART", "a GPT partition table"),
    (4096, b"EFI PART", "a GPT partition table"),
    (512, b"LABELONE", "an LVM physical volume"),
    (0, b"LABELONE", "an LVM physical volume"),
    (1024, b"LABELONE", "an LVM physical volume"),
    (1536, b"LABELONE", "an LVM physical volume"),
    (65600, b"_BHRfS_M", "a btrfs filesystem"),
    (1024, b"\x10\x20\xf5\xf2", "an F2FS filesystem"),
    (4120, b"\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81", "a bcache device"),
    (32769, b"CD001", "an ISO 9660 image"),
    (_PAGE - 10, b"SWAPSPACE2", "a swap area"),
    (_PAGE - 10, b"SWAP-SPACE", "a swap area"),
    (510, b"\x55\xaa", "an MBR partition table or boot sector (FAT, NTFS)"),
)


class TargetRefused(ValueError):
    """The target may not be used; the message says why and what to do instead."""


def _size(count: int) -> str:
    """In binary units, as --size reads them (1G is 1 GiB): "128.0 MiB", "1.0 GiB"."""
    return binary_size(count)


def check_target(
    spec: BenchSpec,
    *,
    privileged: bool,
    confirm_serial: str | None,
    overwrite: bool,
    caller: Caller | None = None,
) -> Target:
    """Resolve spec.target once (as the caller, following no link they could have planted),
    validate what the descriptor holds, and return it held; raise TargetRefused, writing
    nothing. A device is opened (O_EXCL when writing) before it is checked, so what was
    checked is what the engines get."""
    target = spec.target
    _refuse_user_served(target, None)
    try:
        fd = run_as(caller, lambda: open_path(target))
    except PathRefused as error:
        raise TargetRefused(str(error)) from None
    except FileNotFoundError:  # the name is never looked at again, as root or otherwise
        raise TargetRefused(f"{target} does not exist") from None
    except OSError as error:
        raise TargetRefused(f"{target}: {error.strerror or error}") from None
    try:
        _refuse_user_served(target, fd)
        info = os.fstat(fd)
        if stat.S_ISBLK(info.st_mode):
            device = _check_device(spec, fd, privileged, confirm_serial, overwrite)
            os.close(fd)  # the device itself is held now
            return device
        if not stat.S_ISDIR(info.st_mode):  # named first: /dev/null is no system directory
            raise TargetRefused(
                f"{target} is {_kind(info.st_mode)}, neither a directory nor a block device"
            )
        shown = fd_path(fd)
        system = system_location(fd)
        if system is not None:
            where = target if shown == target else f"{target} (which resolves to {shown})"
            raise TargetRefused(
                f"{where} is a system directory ({system}): choose a directory on the "
                "filesystem to measure, e.g. its mount point or a folder in it"
            )
        return _check_directory(spec, fd, shown, caller)
    except BaseException:
        os.close(fd)
        raise


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a file"


def _refuse_user_served(target: str, fd: int | None) -> None:
    """A user's FUSE daemon can hold any look-up in it forever, root's threads included."""
    point = user_served_mount(target, fd)
    if point is not None:
        raise TargetRefused(
            f"{target} is on a FUSE filesystem a user serves ({point}): its daemon could hold "
            "the helper; benchmark the disk under it instead"
        )


def _fs_type(path: str) -> str | None:
    best = None
    for part in psutil.disk_partitions(all=True):
        point = part.mountpoint
        if (path == point or path.startswith(point.rstrip("/") + "/")) and (
            best is None or len(point) > len(best[0])
        ):
            best = (point, part.fstype)
    return best[1] if best else None


def _check_directory(spec: BenchSpec, fd: int, shown: str, caller: Caller | None) -> Target:
    """Even read-only phases write here: the test file must be laid out before it is read.
    Permission is the caller's: the file is created with their credentials."""
    fs = os.statvfs(fd)
    if fs.f_flag & os.ST_RDONLY:
        raise TargetRefused(f"{shown} is on a read-only filesystem")
    writable = run_as(
        caller, lambda: os.access(".", os.W_OK | os.X_OK, dir_fd=fd, effective_ids=True)
    )
    if not writable:
        raise TargetRefused(f"no permission to write in {shown}")
    free = fs.f_bavail * fs.f_frsize
    if spec.size_bytes > free * (1 - FREE_MARGIN):
        raise TargetRefused(
            f"{_size(spec.size_bytes)} test file does not fit in {shown}: "
            f"{_size(free)} free, and 1 % of it stays free"
        )
    notes = []
    fs_type = _fs_type(shown)
    if fs_type in ("tmpfs", "ramfs"):
        notes.append(f"{shown} is on {fs_type}: this measures memory, not a disk")
    return Target("directory", shown, disks_under(fd), free, tuple(notes), caller=caller, dir_fd=fd)


def _sys(name: str, attribute: str) -> str | None:
    try:
        with open(f"/sys/class/block/{name}/{attribute}") as handle:
            return handle.read().strip()
    except OSError:
        return None


def device_serial(name: str) -> tuple[str | None, str | None]:
    """-> (what to type to confirm writing to /dev/name, a note when it is a stand-in)."""
    from stripewise.system.device_sources import UdevSource
    from stripewise.system.disks import serial

    devpath = os.path.realpath(f"/sys/class/block/{name}").removeprefix("/sys")
    source = UdevSource()
    record = source.device(devpath)
    if record is not None:
        controller = os.path.dirname(devpath) if name.startswith("nvme") else None
        found = serial(source, record, controller)
        if found:
            return found, None
        if record.prop("MD_UUID"):
            return record.properties["MD_UUID"], "md arrays have no serial: their UUID stands in"
    backing = _sys(name, "loop/backing_file")
    if backing:
        return backing, "loop devices have no serial: the backing file's path stands in"
    dm_id = _sys(name, "dm/uuid") or _sys(name, "dm/name")
    if dm_id:
        return dm_id, "device-mapper devices have no serial: their dm UUID (or name) stands in"
    return None, None


def _in_use(name: str) -> str | None:
    """Mounted, swapped on or held (by dm, md, bcache...), the disk or any partition of it."""
    from stripewise.system.mounts import read_mount_table

    mounts = read_mount_table()
    parts = [name, *sorted(p for p in os.listdir(f"/sys/class/block/{name}") if p.startswith(name))]
    for part in parts:
        base = name if part == name else f"{name}/{part}"
        points = mounts.mountpoints(part, _sys(base, "dev"))
        if points:
            return f"/dev/{part} is mounted on {', '.join(points)}"
        if mounts.is_swap(part):
            return f"/dev/{part} is in use as swap"
        holders = sorted(os.listdir(f"/sys/class/block/{base}/holders"))
        if holders:
            return f"/dev/{part} is held by {', '.join(holders)}"
    return None


def signature(fd: int, size: int) -> str | None:
    """What the device behind `fd` carries, by magic numbers at head and tail, then blkid -p
    (given the descriptor's magic link, so it reads the same device)."""
    head = os.pread(fd, _HEAD_BYTES, 0)
    tail_start = max(0, size - _TAIL_BYTES)
    tail = os.pread(fd, size - tail_start, tail_start)
    for offset, magic, what in HEAD_MAGIC:
        if head[offset : offset + len(magic)] == magic:
            text = all(32 <= byte < 127 for byte in magic)
            shown = f'"{magic.decode()}"' if text else f"0x{magic.hex()}"
            return f"{what} ({shown} at byte {offset})"
    # ext2/3/4: 0xEF53 at 1080, and a sane block size beside it (fewer false positives)
    if head[1080:1082] == b"\x53\xef" and int.from_bytes(head[1048:1052], "little") <= 6:
        return "an ext2/3/4 filesystem (0xEF53 at byte 1080)"
    sectors = size // 512
    tails = (
        ((sectors - 1) * 512, b"EFI PART", "a backup GPT partition table"),
        (((sectors & ~127) - 128) * 512, _MD_MAGIC, "an md RAID member (metadata 0.90)"),
        (((sectors - 16) & ~7) * 512, _MD_MAGIC, "an md RAID member (metadata 1.0)"),
    )
    for offset, magic, what in tails:
        at = offset - tail_start
        if at >= 0 and tail[at : at + len(magic)] == magic:
            return f"{what} (at byte {offset})"
    from stripewise.system.device_sources import blkid_type

    found = blkid_type(f"/proc/self/fd/{fd}", pass_fds=(fd,))
    return f"a {found} signature (blkid)" if found else None


def _open_device(path_fd: int, shown: str, name: str, writes: bool) -> int:
    """Open the resolved node; O_EXCL when writing, so that nothing mounts or assembles it
    while the run holds it, and a device already mounted or held is refused here."""
    flags = (os.O_RDWR | os.O_EXCL) if writes else os.O_RDONLY
    try:
        return os.open(f"/proc/self/fd/{path_fd}", flags | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.EBUSY:
            busy = _in_use(name) or f"{shown} is in use (mounted or held)"
            raise TargetRefused(f"{busy}: refused") from None
        if error.errno == errno.EROFS:
            raise TargetRefused(f"{shown} is read-only") from None
        raise TargetRefused(f"cannot open {shown}: {error.strerror}") from None


def _check_device(
    spec: BenchSpec, path_fd: int, privileged: bool, confirm_serial: str | None, overwrite: bool
) -> Target:
    real = fd_path(path_fd)
    number = os.fstat(path_fd).st_rdev
    sysdir = os.path.realpath(f"/sys/dev/block/{os.major(number)}:{os.minor(number)}")
    name = os.path.basename(sysdir)
    if os.path.exists(f"{sysdir}/partition"):
        parent = os.path.basename(os.path.dirname(sysdir))
        raise TargetRefused(f"{real} is a partition: benchmark the whole disk /dev/{parent}")
    if not privileged:
        raise TargetRefused(f"{real}: block devices are benchmarked by the privileged helper only")
    writes = any(phase.writes for phase in spec.phases)
    if writes and _sys(name, "ro") == "1":
        raise TargetRefused(f"{real} is read-only")
    fd = _open_device(path_fd, real, name, writes)
    try:
        if os.fstat(fd).st_rdev != number:
            raise TargetRefused(f"{real} changed while it was being opened: refused")
        size = os.lseek(fd, 0, os.SEEK_END)
        if spec.size_bytes > size:
            raise TargetRefused(
                f"{real} holds {_size(size)}, less than the {_size(spec.size_bytes)} asked"
            )
        notes = _confirm_writing(fd, real, name, size, confirm_serial, overwrite) if writes else []
    except BaseException:
        os.close(fd)
        raise
    return Target("device", real, disks_under(fd), size, tuple(notes), fd=fd)


def _confirm_writing(
    fd: int, real: str, name: str, size: int, confirm_serial: str | None, overwrite: bool
) -> list[str]:
    """Checked with the device held exclusively: the serial typed back, nothing mounted or
    holding it, and what it carries (read through the held descriptor)."""
    notes: list[str] = []
    expected, how = device_serial(name)
    if expected is None:
        raise TargetRefused(f"{real} has no serial number to confirm: refused for writing")
    if how:
        notes.append(how)
    if confirm_serial is None or confirm_serial.strip() != expected:
        raise TargetRefused(
            f"writing destroys everything on {real}: type its serial number to confirm"
            + (f" ({how})" if how else "")
            + ("" if confirm_serial is None else "; the one typed does not match")
        )
    busy = _in_use(name)
    if busy:
        raise TargetRefused(f"{busy}: refused")
    sysdir = f"/sys/class/block/{name}"
    parts = sorted(p for p in os.listdir(sysdir) if p.startswith(name))
    found = f"partitions ({', '.join(parts)})" if parts else signature(fd, size)
    if found and not overwrite:
        raise TargetRefused(f"{real} carries {found}: give overwrite as well to destroy it")
    if found:
        notes.append(f"overwriting {found} on {real}")
    return notes


def drop_caches(privileged: bool) -> None:
    """sync, then drop the page cache, dentries and inodes, so buffered reads hit the disk."""
    if not privileged or os.geteuid() != 0:
        raise PermissionError(
            "dropping the page cache needs root: run the benchmark through the helper, "
            "or use direct I/O"
        )
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as handle:
            handle.write("3\n")
    except OSError as error:
        raise PermissionError(f"cannot drop the page cache: {error.strerror}") from error

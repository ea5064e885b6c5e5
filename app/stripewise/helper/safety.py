"""Where a benchmark may run: refuse anything that could hurt the system or someone's data.

Checks only read; a refusal leaves no file and no byte written. Directories get a fresh,
unguessable test file name. Writing to a block device needs the device's serial typed back
(what the admin reads off the label or the hardware map) and, when anything recognisable is on
it, an explicit overwrite. Mounted, held or swapped-on devices are refused even then.

Signatures are found by reading the first 128 KiB and the last 1 MiB and comparing known magic
numbers (table below, offsets from util-linux's libblkid), then asking `blkid -p` for anything
the table misses (ZFS, NTFS, ...) when it is installed.
"""

from __future__ import annotations

import mmap
import os
import re
import secrets
import stat
from dataclasses import dataclass
from typing import Literal

import psutil

from stripewise.helper.sampling import resolve_disks
from stripewise.model.bench import BenchSpec

# Never benchmark here: the running system lives in these (and /dev holds only device nodes).
# /root is root's home: an unprivileged user's request should not fill it through the helper.
SYSTEM_PATHS = (
    "/bin", "/boot", "/dev", "/etc", "/proc", "/root", "/run", "/sbin", "/sys", "/usr",
    "/var/lib/apt", "/var/lib/dnf", "/var/lib/dpkg", "/var/lib/pacman", "/var/lib/rpm",
)  # fmt: skip
_LIB = re.compile(r"^/lib(32|64|x32)?(/|$)")
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


@dataclass(frozen=True)
class TargetPlan:
    kind: Literal["directory", "device"]
    path: str  # the test file to create inside the directory, or the device node
    disks: tuple[str, ...]  # kernel names under it, for the sampler
    free_bytes: int  # free space in the directory, or the device's size
    notes: tuple[str, ...] = ()


def _system_path(path: str) -> bool:
    return (
        path == "/"
        or bool(_LIB.match(path))
        or any(path == p or path.startswith(p + "/") for p in SYSTEM_PATHS)
    )


def _gb(count: int) -> str:
    return f"{count / 1e9:.2f} GB"


def check_target(
    spec: BenchSpec, *, privileged: bool, confirm_serial: str | None, overwrite: bool
) -> TargetPlan:
    """Validate spec.target for spec's phases; raise TargetRefused, writing nothing."""
    target = spec.target
    if not target or not os.path.isabs(target):
        raise TargetRefused(f"{target!r}: give an absolute path (a directory or /dev/...)")
    if not os.path.lexists(target):
        raise TargetRefused(f"{target} does not exist")
    real = os.path.realpath(target)
    if not os.path.exists(real):
        raise TargetRefused(f"{target} is a symbolic link to {real}, which does not exist")
    info = os.stat(real)
    if stat.S_ISBLK(info.st_mode):
        return _check_device(spec, real, privileged, confirm_serial, overwrite)
    for path in (target, real):
        if _system_path(path):
            shown = target if path == target else f"{target} (which resolves to {real})"
            raise TargetRefused(
                f"{shown} is a system directory: choose a directory on the filesystem to "
                "measure, e.g. its mount point or a folder in it"
            )
    if not stat.S_ISDIR(info.st_mode):
        raise TargetRefused(f"{target} is neither a directory nor a block device")
    return _check_directory(spec, real)


def _fs_type(path: str) -> str | None:
    best = None
    for part in psutil.disk_partitions(all=True):
        point = part.mountpoint
        if (path == point or path.startswith(point.rstrip("/") + "/")) and (
            best is None or len(point) > len(best[0])
        ):
            best = (point, part.fstype)
    return best[1] if best else None


def _check_directory(spec: BenchSpec, real: str) -> TargetPlan:
    """Even read-only phases write here: the test file must be laid out before it is read."""
    fs = os.statvfs(real)
    if fs.f_flag & os.ST_RDONLY:
        raise TargetRefused(f"{real} is on a read-only filesystem")
    if not os.access(real, os.W_OK | os.X_OK):
        raise TargetRefused(f"no permission to write in {real}")
    free = fs.f_bavail * fs.f_frsize
    if spec.size_bytes > free * (1 - FREE_MARGIN):
        raise TargetRefused(
            f"{_gb(spec.size_bytes)} test file does not fit in {real}: "
            f"{_gb(free)} free, and 1 % of it stays free"
        )
    while True:
        path = os.path.join(real, f".stripewise-bench-{os.getpid()}-{secrets.token_hex(6)}")
        if not os.path.lexists(path):
            break
    notes = []
    fs_type = _fs_type(real)
    if fs_type in ("tmpfs", "ramfs"):
        notes.append(f"{real} is on {fs_type}: this measures memory, not a disk")
    return TargetPlan("directory", path, resolve_disks(real), free, tuple(notes))


def _sys(name: str, attribute: str) -> str | None:
    try:
        with open(f"/sys/class/block/{name}/{attribute}") as handle:
            return handle.read().strip()
    except OSError:
        return None


def device_serial(name: str) -> tuple[str | None, str | None]:
    """-> (what to type to confirm writing to /dev/name, a note when it is a stand-in)."""
    from stripewise.inventory.disks import serial
    from stripewise.inventory.sources import UdevSource

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
    from stripewise.inventory.mounts import read_mount_table

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


def signature(device: str, size: int) -> str | None:
    """What the device carries, by magic numbers at head and tail, then blkid -p."""
    fd = os.open(device, os.O_RDONLY | os.O_CLOEXEC)
    try:
        head = os.pread(fd, _HEAD_BYTES, 0)
        tail_start = max(0, size - _TAIL_BYTES)
        tail = os.pread(fd, size - tail_start, tail_start)
    finally:
        os.close(fd)
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
    from stripewise.inventory.sources import blkid_type

    found = blkid_type(device)
    return f"a {found} signature (blkid)" if found else None


def _check_device(
    spec: BenchSpec, real: str, privileged: bool, confirm_serial: str | None, overwrite: bool
) -> TargetPlan:
    number = os.stat(real).st_rdev
    sysdir = os.path.realpath(f"/sys/dev/block/{os.major(number)}:{os.minor(number)}")
    name = os.path.basename(sysdir)
    if os.path.exists(f"{sysdir}/partition"):
        parent = os.path.basename(os.path.dirname(sysdir))
        raise TargetRefused(f"{real} is a partition: benchmark the whole disk /dev/{parent}")
    if not privileged:
        raise TargetRefused(f"{real}: block devices are benchmarked by the privileged helper only")
    size = int(_sys(name, "size") or 0) * 512
    if spec.size_bytes > size:
        raise TargetRefused(f"{real} holds {_gb(size)}, less than the {_gb(spec.size_bytes)} asked")
    notes: list[str] = []
    if any(phase.writes for phase in spec.phases):
        if _sys(name, "ro") == "1":
            raise TargetRefused(f"{real} is read-only")
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
        parts = sorted(p for p in os.listdir(sysdir) if p.startswith(name))
        found = f"partitions ({', '.join(parts)})" if parts else signature(real, size)
        if found and not overwrite:
            raise TargetRefused(f"{real} carries {found}: give overwrite as well to destroy it")
        if found:
            notes.append(f"overwriting {found} on {real}")
    return TargetPlan("device", real, resolve_disks(real), size, tuple(notes))


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

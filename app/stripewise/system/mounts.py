"""Which block devices are mounted or swapped on, from /proc (or files describing another host)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

# Mounts that make a disk the system disk: losing it loses the running system.
SYSTEM_MOUNTS = ("/", "/boot", "/usr")


def is_system_mountpoint(mountpoint: str) -> bool:
    return mountpoint in SYSTEM_MOUNTS or mountpoint.startswith("/boot/")


def _unescape(field_text: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal (\\040)."""
    out, i = [], 0
    while i < len(field_text):
        if field_text[i] == "\\" and field_text[i + 1 : i + 4].isdigit():
            out.append(chr(int(field_text[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field_text[i])
            i += 1
    return "".join(out)


@dataclass
class MountTable:
    """Mount points keyed by MAJ:MIN and by device name; swap devices by name."""

    by_devno: dict[str, list[str]] = field(default_factory=dict)
    by_name: dict[str, list[str]] = field(default_factory=dict)
    swaps: set[str] = field(default_factory=set)
    fs_types: dict[str, str] = field(default_factory=dict)  # by MAJ:MIN and by name

    def fs_type(self, name: str, devno: str | None) -> str | None:
        """What the kernel mounted it as: the filesystem signature without probing the disk."""
        return self.fs_types.get(devno or "") or self.fs_types.get(name)

    def mountpoints(self, name: str, devno: str | None) -> tuple[str, ...]:
        found = list(self.by_devno.get(devno, ())) if devno else []
        found += [m for m in self.by_name.get(name, ()) if m not in found]
        return tuple(found)

    def is_swap(self, name: str) -> bool:
        return name in self.swaps


def device_name(source: str) -> str | None:
    """`/dev/sda1`, `/dev/mapper/vg-root` or a by-uuid link, as a kernel name where possible."""
    if not source.startswith("/dev/"):
        return None
    try:
        resolved = os.path.realpath(source)
    except OSError:
        resolved = source
    return Path(resolved).name


@dataclass(frozen=True)
class MountEntry:
    """One line of /proc/self/mountinfo, unescaped."""

    devno: str  # MAJ:MIN; 0:N for anonymous devices (tmpfs, btrfs subvolumes)
    mountpoint: str
    fstype: str
    source: str
    options: str  # the mount point's own (rw, noatime, relatime...)
    # the filesystem's, after " - " (data=writeback, xfs logbsize/sunit/swidth, ext4 stripe=):
    # shared by every mount of it, and what /proc/mounts appends to `options`
    super_options: str = ""


def mount_entries(lines: Iterable[str]) -> list[MountEntry]:
    """The one mountinfo parser: everything else asks for these entries."""
    entries = []
    for line in lines:
        parts = line.split()
        if len(parts) < 10 or "-" not in parts[6:]:
            continue
        dash = parts.index("-", 6)
        entries.append(
            MountEntry(
                devno=parts[2],
                mountpoint=_unescape(parts[4]),
                fstype=parts[dash + 1] if len(parts) > dash + 1 else "",
                source=_unescape(parts[dash + 2]) if len(parts) > dash + 2 else "",
                options=parts[5],
                super_options=parts[dash + 3] if len(parts) > dash + 3 else "",
            )
        )
    return entries


def read_mount_entries(proc: Path = Path("/proc")) -> list[MountEntry]:
    try:
        return mount_entries((proc / "self" / "mountinfo").read_text().splitlines())
    except OSError:
        return []


def parse_mountinfo(lines: Iterable[str]) -> MountTable:
    table = MountTable()
    for entry in mount_entries(lines):
        if not entry.devno.startswith("0:"):  # 0:N are anonymous (tmpfs, btrfs subvolumes)
            table.by_devno.setdefault(entry.devno, []).append(entry.mountpoint)
            table.fs_types.setdefault(entry.devno, entry.fstype)
        name = device_name(entry.source)
        if name:
            table.by_name.setdefault(name, []).append(entry.mountpoint)
            table.fs_types.setdefault(name, entry.fstype)
    return table


def parse_swaps(lines: Iterable[str], table: MountTable) -> None:
    for line in lines:
        parts = line.split()
        if not parts or parts[0] == "Filename" or parts[1:2] != ["partition"]:
            continue
        name = device_name(_unescape(parts[0]))
        if name:
            table.swaps.add(name)


def read_mount_table(proc: Path = Path("/proc")) -> MountTable:
    """This host's mounts and swaps; unreadable files leave the table empty, never fail."""
    try:
        table = parse_mountinfo((proc / "self" / "mountinfo").read_text().splitlines())
    except OSError:
        table = MountTable()
    with contextlib.suppress(OSError):
        parse_swaps((proc / "swaps").read_text().splitlines(), table)
    return table

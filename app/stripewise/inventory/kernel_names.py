"""Kernel device names: the order people expect, and the disk a partition's name points to."""

from __future__ import annotations

import re

_NUMBERED_DISK = re.compile(r"^(.*\d)p\d+$")  # nvme0n1p2, mmcblk0p1, md127p1, loop0p1
_LETTERED_DISK = re.compile(r"^([a-z]+[a-z])\d+$")  # sda3, vdb1, xvda2, sdaa1


def natural_key(text: str) -> tuple[object, ...]:
    """sdb < sdaa, md2 < md10: kernel names in the order people expect."""
    return tuple(
        (len(part), part) if not part.isdigit() else (0, int(part))
        for part in re.findall(r"\d+|\D+", text)
    )


def disk_of_partition(name: str) -> str | None:
    """The whole disk a partition's name belongs to (sda3 -> sda, nvme0n1p2 -> nvme0n1), for
    partitions a dump names without listing them; None when the name is not a partition's."""
    match = _NUMBERED_DISK.match(name) or _LETTERED_DISK.match(name)
    return match.group(1) if match else None

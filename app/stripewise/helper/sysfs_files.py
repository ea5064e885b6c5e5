"""Reading sysfs in the helper: short attributes, and the device under an open file."""

from __future__ import annotations

import os
import stat

MAX_ATTRIBUTE = 4096  # bytes: far beyond any attribute read here; a bound on a hostile tree


def read_attribute(path: str) -> str | None:
    """An attribute's text, stripped; None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_ATTRIBUTE).decode(errors="replace").strip()
    except OSError:
        return None


def block_device_path(fd: int, sysfs: str = "/sys") -> str | None:
    """`/sys/dev/block/MAJ:MIN` of the device under `fd`: a block device's own, or that of
    the filesystem a file or directory is on; None when `fd` cannot be examined."""
    try:
        info = os.fstat(fd)
    except OSError:
        return None
    number = info.st_rdev if stat.S_ISBLK(info.st_mode) else info.st_dev
    return f"{sysfs}/dev/block/{os.major(number)}:{os.minor(number)}"

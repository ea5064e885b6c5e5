"""Which block device's queue serves a benchmark target: the device whose tunables an experiment
varies. A device target is itself; a directory is the device of its filesystem. A partition has
no queue of its own (its disk's serves it), so a partition gives its disk.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from stripewise.system.block_tunables import Tree
from stripewise.system.mounts import device_name, read_mount_entries


def target_device(target: str, tree: Tree | None = None) -> str | None:
    """The kernel name of the device whose queue the target's I/O goes through; None when it
    has none (tmpfs, a network filesystem) or the target cannot be read."""
    tree = tree or Tree()
    try:
        info = os.stat(target)
    except OSError:
        return None
    devno = info.st_rdev if stat.S_ISBLK(info.st_mode) else info.st_dev
    name = _name_of_devno(tree, devno) if os.major(devno) else _mount_source(tree, devno)
    if name is None:
        return None
    return tree.parent_disk(name) or name


def _name_of_devno(tree: Tree, devno: int) -> str | None:
    link = tree.sysfs / "dev" / "block" / f"{os.major(devno)}:{os.minor(devno)}"
    return Path(os.path.realpath(link)).name if link.exists() else None


def _mount_source(tree: Tree, devno: int) -> str | None:
    """btrfs and other anonymous devices: the device the filesystem was mounted from."""
    wanted = f"{os.major(devno)}:{os.minor(devno)}"
    for entry in read_mount_entries(tree.procfs):
        if entry.devno == wanted and (name := device_name(entry.source)):
            return name if tree.block(name).is_dir() or tree.parent_disk(name) else None
    return None

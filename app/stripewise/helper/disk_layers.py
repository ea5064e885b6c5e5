"""The block devices under a benchmark's target, as layers: a loop device and the disk its
backing file is on, an md or dm device's members (the device itself is not sampled), each with
its place (`DiskLayer`), so that nobody adds up a layer and the one under it. The sampler reads
the kernel's counters of these disks; the target's checks name them.

Everything is found from a held descriptor (or, for tests and md arrays, a name the program
itself chose), never by looking a caller's path up again.
"""

from __future__ import annotations

import contextlib
import os
import stat

from stripewise.helper.resolve import mount_of, mount_source, open_loop_backing
from stripewise.helper.sysfs_files import read_attribute
from stripewise.protocol.events import DiskLayer
from stripewise.system.mounts import device_name

_MAX_DEPTH = 8  # loop on a file on dm on loop ...: stop before a cycle can hurt


def _whole_disk(devno: int) -> str | None:
    """MAJ:MIN -> kernel name, a partition replaced by the disk it lives on."""
    link = f"/sys/dev/block/{os.major(devno)}:{os.minor(devno)}"
    if not os.path.exists(link):
        return None
    real = os.path.realpath(link)
    if os.path.exists(f"{real}/partition"):
        real = os.path.dirname(real)
    return os.path.basename(real)


def _known(found: list[DiskLayer], name: str) -> bool:
    return any(layer.name == name for layer in found)


def _collect(name: str, found: list[DiskLayer], role: str, under: str | None, depth: int) -> None:
    """The device, or what it is built on. An md or dm device stands for its slaves (each a
    `member` under it: their counters are what the hardware did, the array's would only
    repeat the engine's); a loop device is kept, with its backing file's disks (`backing`,
    under it) after it, since the file may be cached on its way to them."""
    if depth > _MAX_DEPTH or _known(found, name):
        return
    base = f"/sys/class/block/{name}"
    try:
        slaves = sorted(os.listdir(f"{base}/slaves"))
    except OSError:
        slaves = []
    for slave in slaves:
        number = read_attribute(f"{base}/slaves/{slave}/dev")
        if number and ":" in number:
            major, minor = number.split(":")
            disk = _whole_disk(os.makedev(int(major), int(minor)))
            if disk:
                _collect(disk, found, "member", name, depth + 1)
    if slaves:
        return
    found.append(DiskLayer(name, role, under, depth))
    fd = open_loop_backing(name)
    if fd is not None:
        try:
            _collect_devno(os.fstat(fd).st_dev, fd, found, "backing", name, depth + 1)
        finally:
            os.close(fd)


def _anonymous_source(fd: int) -> list[str]:
    """Filesystems on anonymous device numbers (btrfs, tmpfs): the device their mount names."""
    fields = mount_of(fd)
    name = device_name(mount_source(fields)) if fields else None
    if name is None or not os.path.isdir(f"/sys/class/block/{name}"):
        return []
    found = [name]
    with contextlib.suppress(OSError):  # a multi-device btrfs lists all its members
        for fs in os.listdir("/sys/fs/btrfs"):
            members = f"/sys/fs/btrfs/{fs}/devices"
            if os.path.isdir(members) and name in os.listdir(members):
                found += [m for m in sorted(os.listdir(members)) if m not in found]
    return found


def _collect_devno(
    devno: int, fd: int, found: list[DiskLayer], role: str, under: str | None, depth: int
) -> None:
    """The devices a filesystem or device number stands on; a multi-device filesystem's
    devices are peers, each in the same place."""
    if os.major(devno) == 0:
        for name in _anonymous_source(fd):
            _collect(
                _whole_disk(os.stat(f"/dev/{name}").st_rdev) or name, found, role, under, depth
            )
        return
    disk = _whole_disk(devno)
    if disk:
        _collect(disk, found, role, under, depth)


def layers_under(fd: int) -> tuple[DiskLayer, ...]:
    """The block devices under an open file, directory or block device, top first, each with
    its place (`DiskLayer`); empty for filesystems without one (tmpfs). A partition counts as
    its whole disk: the kernel's per-disk counters are the sampler's."""
    info = os.fstat(fd)
    found: list[DiskLayer] = []
    devno = info.st_rdev if stat.S_ISBLK(info.st_mode) else info.st_dev
    _collect_devno(devno, fd, found, "target", None, 0)
    return tuple(found)


def layers_of(name: str) -> tuple[DiskLayer, ...]:
    """`layers_under` for a block device known by its kernel name (an md array's members)."""
    found: list[DiskLayer] = []
    _collect(name, found, "target", None, 0)
    return tuple(found)


def disks_under(fd: int) -> tuple[str, ...]:
    """The kernel names of `layers_under(fd)`."""
    return tuple(layer.name for layer in layers_under(fd))


def resolve_layers(target: str) -> tuple[DiskLayer, ...]:
    """`layers_under` for a path the program itself chose (tests)."""
    fd = os.open(target, os.O_PATH | os.O_CLOEXEC)
    try:
        return layers_under(fd)
    finally:
        os.close(fd)


def resolve_disks(target: str) -> tuple[str, ...]:
    return tuple(layer.name for layer in resolve_layers(target))

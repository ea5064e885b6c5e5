"""Where device facts come from: the live system (pyudev + sysfs) or a saved udev dump.

The builder asks a `DeviceSource` for block devices, parent devices by path, sysfs attributes,
directory entries and links; a dump answers what it recorded and None for the rest.
"""

from __future__ import annotations

import contextlib
import os
import platform
import socket
import subprocess
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stripewise.model.topology import HostIdentity
from stripewise.system.hostinfo import MACHINE_ID_FILES, read_machine_id
from stripewise.system.mounts import MountTable, read_mount_table

_MAX_ATTR_BYTES = 64 * 1024
_PAGE_BYTES = 4096  # sysfs's most for a text attribute


@dataclass(frozen=True)
class DeviceRecord:
    """One device as udev describes it. `path` is the devpath: /devices/..."""

    path: str
    subsystem: str | None = None
    devtype: str | None = None
    driver: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    links: tuple[str, ...] = ()  # relative to /dev, e.g. disk/by-id/wwn-0x5000...
    # the kernel name, the path's last part: asked some 40 times a device in one inventory
    name: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.path.rsplit("/", 1)[-1])

    def prop(self, key: str) -> str | None:
        value = self.properties.get(key)
        return value if value not in (None, "") else None


class DeviceSource(ABC):
    kind: str
    host: HostIdentity
    mounts: MountTable
    mounts_known: bool = True  # False for dumps: nothing says what is mounted
    warnings: tuple[str, ...] = ()  # what reading passed over (a dump's unreadable lines)
    incomplete: tuple[str, ...] = ()  # of those, why devices are missing (a dump cut short)

    @abstractmethod
    def block_devices(self) -> list[DeviceRecord]: ...

    @abstractmethod
    def device(self, path: str) -> DeviceRecord | None: ...

    @abstractmethod
    def devices_of(self, subsystem: str) -> list[DeviceRecord]: ...

    @abstractmethod
    def attribute(self, path: str, name: str) -> str | None:
        """The attribute's text without the trailing newline; None when unknown."""

    @abstractmethod
    def entries(self, path: str) -> list[str]:
        """Names inside a device's directory (child devices, attribute groups)."""

    @abstractmethod
    def link_target(self, path: str, name: str) -> str | None:
        """The devpath a link inside a device directory points to (holders/x, device)."""

    def probe_fs_type(self, record: DeviceRecord, devno: str | None) -> str | None:
        """A signature udev did not record: what it is mounted as, if it is."""
        return self.mounts.fs_type(record.name, devno)


class UdevSource(DeviceSource):
    """The running system, or a umockdev testbed, through libudev and /sys."""

    def __init__(self, context: Any = None, mounts: MountTable | None = None) -> None:
        import pyudev  # type: ignore[import-untyped]  # pyudev ships no type stubs
        from pyudev._util import udev_list_iterate  # type: ignore[import-untyped]

        self._pyudev = pyudev
        self._pyudev_list = udev_list_iterate
        # made when first asked for: pyudev finds libudev anew for each (ldconfig -p, 20 ms)
        self._context = context
        self._sys = str(context.sys_path) if context is not None else "/sys"  # pyudev's too
        self._cache: dict[str, DeviceRecord | None] = {}
        # Without udev's database (a container, a umockdev testbed) libudev's record of a device
        # is its uevent file and its links, read here in a few calls: libudev tries the missing
        # database file again for each property it hands out (31 times for a testbed's disk).
        self._uevent_only = not Path(UDEV_DATABASE).is_dir()
        self.mounts = mounts if mounts is not None else read_mount_table()
        self.kind = "udev" if self._has_udev_database() else "sysfs"
        self.host = HostIdentity(
            hostname=socket.gethostname(),
            machine_id=read_machine_id(MACHINE_ID_FILES),
            kernel=platform.release(),
        )

    def probe_fs_type(self, record: DeviceRecord, devno: str | None) -> str | None:
        """Without a udev database, ask blkid (needs read access to the device: root)."""
        mounted = super().probe_fs_type(record, devno)
        if mounted or self.kind == "udev":
            return mounted
        return blkid_type(record.prop("DEVNAME") or f"/dev/{record.name}")

    def _has_udev_database(self) -> bool:
        """umockdev testbeds carry udev properties; a container often has no database at all."""
        return bool(os.environ.get("UMOCKDEV_DIR")) or Path("/run/udev/data").is_dir()

    def _record(self, device: Any) -> DeviceRecord:
        # Name and value pairs in one walk of libudev's list: pyudev's mapping asks for each
        # value again by name (a server's 750 block devices carry some 26,000 properties).
        libudev = device._libudev
        first = libudev.udev_device_get_properties_list_entry(device)
        properties = {
            name.decode("utf-8", "replace"): (value or b"").decode("utf-8", "replace")
            for name, value in self._pyudev_list(libudev, first)
        }
        links = properties.get("DEVLINKS", "").split() or list(device.device_links)
        return DeviceRecord(
            path=device.device_path,
            subsystem=device.subsystem,
            devtype=device.device_type,
            driver=device.driver,
            properties=properties,
            links=tuple(link.removeprefix("/dev/") for link in links),
        )

    def block_devices(self) -> list[DeviceRecord]:
        return self._listed("block")

    def _listed(self, subsystem: str) -> list[DeviceRecord]:
        """The subsystem's devices in libudev's enumeration order (by devpath, md and dm
        last), each read by libudev from its path. Listed from /sys/class/<subsystem> or
        /sys/bus/<subsystem>/devices, as libudev's enumerator scans them, without its scan:
        that resolves every entry's link component by component and costs a millisecond a
        device in a testbed, ten times what reading the device then does."""
        found: set[str] = set()
        for where in (f"/class/{subsystem}", f"/bus/{subsystem}/devices"):
            for name in self.entries(where):
                target = self.link_target(where, name)
                if target is not None:
                    found.add(target)
        ordered = sorted(
            found, key=lambda path: ("/block/md" in path or "/block/dm-" in path, path)
        )
        records = (self.device(path) for path in ordered)
        return [record for record in records if record is not None]

    def device(self, path: str) -> DeviceRecord | None:
        if path not in self._cache:
            read = uevent_record(self._sys, path) if self._uevent_only else None
            self._cache[path] = read or self._libudev_record(path)  # None: libudev decides
        return self._cache[path]

    def _libudev_record(self, path: str) -> DeviceRecord | None:
        if self._context is None:
            self._context = self._pyudev.Context()
        try:
            return self._record(self._pyudev.Devices.from_sys_path(self._context, self._sys + path))
        except Exception:  # not a device (plain directory) or vanished: both are normal
            return None

    def devices_of(self, subsystem: str) -> list[DeviceRecord]:
        return self._listed(subsystem)

    def attribute(self, path: str, name: str) -> str | None:
        data = read_small_file(f"{self._sys}{path}/{name}")
        return data.decode("utf-8", "replace").rstrip("\n") if data is not None else None

    def entries(self, path: str) -> list[str]:
        try:
            return sorted(os.listdir(f"{self._sys}{path}"))
        except OSError:
            return []

    def link_target(self, path: str, name: str) -> str | None:
        link = f"{self._sys}{path}/{name}"
        try:
            target = os.readlink(link)
        except OSError:
            return None
        resolved = os.path.normpath(os.path.join(os.path.dirname(link), target))
        return resolved.removeprefix(self._sys) if resolved.startswith(self._sys) else None


def read_small_file(path: str) -> bytes | None:
    """Up to 64 KiB of a sysfs file; None when it cannot be read. Plain descriptor calls: a
    buffered file object costs a third more (a 480-disk inventory reads some 7,000 files).
    A text attribute (at most a page) comes whole from one read: shorter than a page, the
    read that would find its end is not made (a file on disk reads short only at its end)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        chunk = os.read(descriptor, _MAX_ATTR_BYTES)
        if len(chunk) < _PAGE_BYTES:
            return chunk
        chunks = [chunk]
        left = _MAX_ATTR_BYTES - len(chunk)
        while left > 0 and (chunk := os.read(descriptor, left)):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(descriptor)


def uevent_record(sys_root: str, path: str) -> DeviceRecord | None:
    """The device at `path` (a devpath) as libudev reads it without a database: DEVPATH, the
    uevent file's keys (DEVNAME under /dev), SUBSYSTEM, sorted by name as libudev lists them;
    the subsystem and driver from their links. None for anything else to ask libudev: not under
    /devices, no uevent or subsystem, a path through a link (libudev resolves it), a file
    sd-device would read differently."""
    where = f"{sys_root}{path}"
    if not path.startswith("/devices/") or "/." in path or "//" in path or path.endswith("/"):
        return None
    data = read_small_file(f"{where}/uevent")
    if data is None:
        return None
    try:
        subsystem_link = os.readlink(f"{where}/subsystem")
    except OSError:
        return None
    # sysfs links climb to its root: as many steps up as the real path is deep
    if subsystem_link.count("../") != path.count("/") or (data and not data.endswith(b"\n")):
        return None
    if b"\r" in data or len(data) >= _MAX_ATTR_BYTES:
        return None
    # KEY=value lines; one without `=` (blank, invalid) is passed over, as sd-device does
    lines = [line for line in data.decode("utf-8", "replace").split("\n") if "=" in line]
    found = dict(line.split("=", 1) for line in lines)
    if not _PARSED_KEYS.isdisjoint(found):  # checked and stored by sd-device its own way
        if any(key != "DISKSEQ" for key in _PARSED_KEYS.intersection(found)):
            return None
        if not all(_is_number(line[8:]) for line in lines if line.startswith("DISKSEQ=")):
            return None  # each of them, as the kernel never writes it twice
    number = {key: found.pop(key) for key in ("MAJOR", "MINOR") if key in found}
    if number and not (len(number) == 2 and all(map(_is_number, number.values()))):
        return None
    if "DEVNAME" in found and not found["DEVNAME"].startswith("/"):
        found["DEVNAME"] = f"/dev/{found['DEVNAME']}"
    properties = {"DEVPATH": path, **found}
    subsystem = subsystem_link.rsplit("/", 1)[-1]
    properties |= number | {"SUBSYSTEM": subsystem}
    driver: str | None = None
    if subsystem != "block":  # a class device is bound to no driver: no link to look for
        with contextlib.suppress(OSError):
            driver = os.readlink(f"{where}/driver").rsplit("/", 1)[-1]
    return DeviceRecord(
        path=path,
        subsystem=subsystem,
        devtype=properties.get("DEVTYPE"),
        driver=driver,
        properties=dict(sorted(properties.items())),  # libudev's list is sorted by name
        links=tuple(link.removeprefix("/dev/") for link in properties.get("DEVLINKS", "").split()),
    )


def _is_number(text: str) -> bool:
    """What sd-device parses back to the same text (a disk sequence number, major, minor)."""
    return text.isascii() and text.isdigit() and len(text) < 10


UDEV_DATABASE = "/run/udev/data"
# uevent keys sd-device parses (a number, a mode) before it keeps them
_PARSED_KEYS = frozenset({"IFINDEX", "DEVMODE", "DEVUID", "DEVGID", "DISKSEQ", "DEVPATH"})


def blkid_type(devnode: str, pass_fds: tuple[int, ...] = ()) -> str | None:
    """`blkid -p` low-level probe; None when not permitted, absent, or nothing found.
    `pass_fds` lets `devnode` be /proc/self/fd/N of a descriptor the caller holds."""
    try:
        done = subprocess.run(
            ["blkid", "-p", "-o", "export", "--", devnode],
            pass_fds=pass_fds,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        if key == "TYPE" and value:
            return value
    return None

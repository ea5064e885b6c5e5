"""The inventory as versioned JSON: what `stripewise inventory --json` prints and `--save` keeps.

Loading validates every field and names the first bad one by its path
(`controllers[2].slots[5].disk.size_bytes`), so a hand-edited or truncated file is refused
with a message instead of drawing a wrong map.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from stripewise.input_files import InputFileError, parse_json
from stripewise.model.topology import (
    Array,
    Controller,
    Disk,
    DiskKind,
    DiskPath,
    EnclosureSlot,
    HostIdentity,
    Inventory,
    Link,
    Partition,
    PciFunction,
    Slot,
    Transport,
)

FORMAT = "stripewise-inventory"
VERSION = 1
MAX_SIZE_BYTES = 2**60
MAX_PORTS = 2**16  # a controller's ports, expanders' included
# the kernel's names: letters, digits and `!` (sysfs's `/`), `.`, `_`, `-`, `:`, `+`, `@`
_DEVICE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9!._:+@-]{0,63}")
# udev's link names: printable, no `/` (it escapes what else a serial holds as \x2f, \x20)
_LINK_NAME = re.compile(r"[!-.0-~]{1,255}")


class SnapshotError(ValueError):
    """A snapshot that cannot be loaded; the message names the field."""


# --- writing -------------------------------------------------------------------------------


def _link(link: Link | None) -> dict[str, Any] | None:
    if link is None:
        return None
    return {"speed_gt_s": link.speed_gt_s, "width": link.width, "mb_s": link.mb_s}


def disk_json(disk: Disk) -> dict[str, Any]:
    return {
        "name": disk.name,
        "serial": disk.serial,
        "wwn": disk.wwn,
        "model": disk.model,
        "size_bytes": disk.size_bytes,
        "rotational": disk.rotational,
        "transport": disk.transport.value,
        "system_disk": disk.system_disk,
        "in_use": disk.in_use,
        "state": disk.state.value,
        "identity": disk.identity,
        "kind": disk.kind.value,
        "devnode": disk.devnode,
        "major_minor": disk.major_minor,
        "vendor": disk.vendor,
        "by_id": list(disk.by_id),
        "by_path": list(disk.by_path),
        "logical_block_size": disk.logical_block_size,
        "physical_block_size": disk.physical_block_size,
        "hctl": disk.hctl,
        "partition_table": disk.partition_table,
        "fs_type": disk.fs_type,
        "partitions": [
            {
                "name": p.name,
                "size_bytes": p.size_bytes,
                "fs_type": p.fs_type,
                "fs_label": p.fs_label,
                "mountpoints": list(p.mountpoints),
                "holders": list(p.holders),
            }
            for p in disk.partitions
        ],
        "mountpoints": list(disk.mountpoints),
        "holders": list(disk.holders),
        "swap": disk.swap,
        "system_reasons": list(disk.system_reasons),
        "read_ahead_kb": disk.read_ahead_kb,
        "scheduler": disk.scheduler,
        "schedulers": list(disk.schedulers),
        "sys_path": disk.sys_path,
        "usage_known": disk.usage_known,
        "diskseq": disk.diskseq,
        "paths": [
            {
                "name": p.name,
                "controller": p.controller,
                "port": p.port,
                "hctl": p.hctl,
                "by_path": list(p.by_path),
            }
            for p in disk.paths
        ],
    }


def _slot_json(slot: Slot) -> dict[str, Any]:
    bay = slot.enclosure
    return {
        "slot": slot.index,
        "label": slot.label,
        "port": slot.port,
        "key": slot.key,
        "title": slot.title,
        "note": slot.note,
        "enclosure": None
        if bay is None
        else {
            "enclosure": bay.enclosure,
            "name": bay.name,
            "locate_path": bay.locate_path,
            "locate_on": bay.locate_on,
        },
        "disk": disk_json(slot.disk) if slot.disk else None,
        "path_of": slot.path_of,
    }


def _controller_json(controller: Controller) -> dict[str, Any]:
    pci = controller.pci
    return {
        "id": controller.id,
        "pci_address": controller.pci_address,
        "driver": controller.driver,
        "model": controller.model,
        "link_mb_s": controller.link_mb_s,
        "bus": controller.bus,
        "kind": controller.kind,
        "vendor": controller.vendor,
        "vendor_id": pci.vendor_id if pci else None,
        "device_id": pci.device_id if pci else None,
        "link": _link(pci.link) if pci else None,
        "max_link": _link(pci.max_link) if pci else None,
        "root": controller.root,
        "bridges": list(controller.bridges),
        "port_count": controller.port_count,
        "slots": [_slot_json(slot) for slot in controller.slots],
    }


def _array_json(array: Array) -> dict[str, Any]:
    return {
        "name": array.name,
        "kind": array.kind.value,
        "level": array.level,
        "members": list(array.members),
        "member_disks": list(array.member_disks),
        "raid_devices": array.raid_devices,
        "size_bytes": array.size_bytes,
        "chunk_kib": array.chunk_kib,
        "uuid": array.uuid,
        "label": array.label,
        "mountpoints": list(array.mountpoints),
        "state": array.state,
    }


def to_json(inventory: Inventory) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "host": {
            "hostname": inventory.host.hostname,
            "machine_id": inventory.host.machine_id,
            "kernel": inventory.host.kernel,
            "source_file": inventory.host.source_file,
        },
        "source": inventory.source,
        "taken_at": inventory.taken_at,
        "warnings": list(inventory.warnings),
        "incomplete": list(inventory.incomplete),
        "controllers": [_controller_json(c) for c in inventory.controllers],
        "virtual": [disk_json(d) for d in inventory.virtual],
        "arrays": [_array_json(a) for a in inventory.arrays],
    }


def dumps(inventory: Inventory) -> str:
    return json.dumps(to_json(inventory), indent=2) + "\n"


# --- reading -------------------------------------------------------------------------------

T = TypeVar("T")


class _Reader:
    """Typed access to a JSON object that names the path of whatever is wrong."""

    def __init__(self, data: object, where: str) -> None:
        if not isinstance(data, dict):
            raise SnapshotError(f"{where or 'snapshot'}: expected an object")
        self.data = data
        self.where = where

    def _path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def get(self, key: str, kind: type[T] | tuple[type, ...], *, optional: bool = True) -> Any:
        if key not in self.data:
            if optional:
                return None
            raise SnapshotError(f"{self._path(key)}: missing")
        value = self.data[key]
        if value is None and optional:
            return None
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            raise SnapshotError(f"{self._path(key)}: expected a number, got {value!r}")
        if not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise SnapshotError(f"{self._path(key)}: expected {names}, got {value!r:.40}")
        return value

    def device_name(self, key: str) -> str:
        """A kernel device name (`sda`, `nvme0n1p2`, `cciss!c0d0`, `md127`): it becomes a
        path under /dev in the commands a plan writes, so never `..` or a `/`."""
        name: str = self.get(key, str, optional=False)
        if not _DEVICE_NAME.fullmatch(name):
            raise SnapshotError(f"{self._path(key)}: {name[:40]!r} is not a device name")
        return name

    def links(self, key: str, kind: str) -> tuple[str, ...]:
        """udev's links to a disk (`disk/by-id/wwn-0x...`): a plan's commands name the disk by
        one, so each must be a link of `kind` (by-id, by-path), nothing else under /dev."""
        found = self.text_list(key)
        for index, link in enumerate(found):
            head, _slash, name = link.removeprefix("/dev/").rpartition("/")
            if head != f"disk/{kind}" or name in ("", ".", "..") or not _LINK_NAME.fullmatch(name):
                raise SnapshotError(
                    f"{self._path(key)}[{index}]: {link[:60]!r} is not a {kind} link"
                )
        return found

    def devnode(self, key: str) -> str | None:
        node: str | None = self.get(key, str)
        if node is None:
            return None
        parts = node.removeprefix("/dev/").split("/")
        if not node.startswith("/dev/") or not all(_DEVICE_NAME.fullmatch(p) for p in parts):
            raise SnapshotError(f"{self._path(key)}: {node[:60]!r} is not a node under /dev")
        return node

    def size(self, key: str) -> int | None:
        """Bytes, at most an exbibyte: no disk or array comes near it."""
        size: int | None = self.get(key, int)
        if size is not None and not 0 <= size <= MAX_SIZE_BYTES:
            raise SnapshotError(f"{self._path(key)}: {_number(size)} bytes is out of range")
        return size

    def text_list(self, key: str) -> tuple[str, ...]:
        values = self.get(key, list) or []
        for index, value in enumerate(values):
            if not isinstance(value, str):
                raise SnapshotError(f"{self._path(key)}[{index}]: expected a string")
        return tuple(values)

    def objects(self, key: str, read: Callable[[_Reader], T]) -> tuple[T, ...]:
        values = self.get(key, list) or []
        return tuple(read(_Reader(v, f"{self._path(key)}[{i}]")) for i, v in enumerate(values))

    def child(self, key: str) -> _Reader | None:
        value = self.get(key, dict)
        return None if value is None else _Reader(value, self._path(key))

    def enum(self, key: str, enum: type[T], default: T) -> T:
        value = self.get(key, str)
        if value is None:
            return default
        try:
            return enum(value)  # type: ignore[call-arg]
        except ValueError:
            return default  # a transport this version does not know: shown as unknown


def _number(value: int) -> str:
    """A whole number of any length, shown short (a float of it may overflow)."""
    digits = str(abs(value))
    shown = digits if len(digits) <= 15 else f"{digits[0]}.{digits[1:4]}e+{len(digits) - 1}"
    return f"-{shown}" if value < 0 else shown


def _read_link(reader: _Reader | None) -> Link | None:
    if reader is None:
        return None
    speed = reader.get("speed_gt_s", (int, float), optional=False)
    width = reader.get("width", int, optional=False)
    if speed <= 0 or width <= 0:
        raise SnapshotError(f"{reader.where}: speed and width must be positive")
    return Link(float(speed), width)


def _read_disk(r: _Reader) -> Disk:
    size = r.size("size_bytes")
    return Disk(
        name=r.device_name("name"),
        kind=r.enum("kind", DiskKind, DiskKind.DISK),
        devnode=r.devnode("devnode"),
        major_minor=r.get("major_minor", str),
        wwn=r.get("wwn", str),
        serial=r.get("serial", str),
        by_id=r.links("by_id", "by-id"),
        by_path=r.links("by_path", "by-path"),
        vendor=r.get("vendor", str),
        model=r.get("model", str),
        size_bytes=size,
        logical_block_size=r.get("logical_block_size", int),
        physical_block_size=r.get("physical_block_size", int),
        rotational=r.get("rotational", bool),
        transport=r.enum("transport", Transport, Transport.UNKNOWN),
        hctl=r.get("hctl", str),
        partition_table=r.get("partition_table", str),
        fs_type=r.get("fs_type", str),
        partitions=r.objects("partitions", _read_partition),
        mountpoints=r.text_list("mountpoints"),
        holders=r.text_list("holders"),
        swap=bool(r.get("swap", bool)),
        system_reasons=r.text_list("system_reasons")
        or (("system disk (recorded)",) if r.get("system_disk", bool) else ()),
        read_ahead_kb=r.get("read_ahead_kb", int),
        scheduler=r.get("scheduler", str),
        schedulers=r.text_list("schedulers"),
        sys_path=r.get("sys_path", str),
        usage_known=r.get("usage_known", bool) is not False,
        paths=r.objects("paths", _read_path),
        diskseq=r.get("diskseq", int),
    )


def _read_path(r: _Reader) -> DiskPath:
    return DiskPath(
        name=r.device_name("name"),
        controller=r.get("controller", str, optional=False),
        port=r.get("port", str, optional=False),
        hctl=r.get("hctl", str),
        by_path=r.links("by_path", "by-path"),
    )


def _read_partition(r: _Reader) -> Partition:
    return Partition(
        name=r.device_name("name"),
        size_bytes=r.size("size_bytes"),
        fs_type=r.get("fs_type", str),
        fs_label=r.get("fs_label", str),
        mountpoints=r.text_list("mountpoints"),
        holders=r.text_list("holders"),
    )


def _read_slot(r: _Reader) -> Slot:
    bay = r.child("enclosure")
    disk = r.child("disk")
    return Slot(
        index=r.get("slot", int, optional=False),
        port=r.get("port", str) or f"slot {r.data.get('slot')}",
        key=r.get("key", str) or f"{r.where}",
        disk=_read_disk(disk) if disk else None,
        enclosure=None
        if bay is None
        else EnclosureSlot(
            enclosure=bay.get("enclosure", str, optional=False),
            name=bay.get("name", str, optional=False),
            locate_path=bay.get("locate_path", str),
            locate_on=bay.get("locate_on", bool),
        ),
        label=r.get("label", str),
        note=r.get("note", str),
        path_of=r.get("path_of", str),
    )


def _read_controller(r: _Reader) -> Controller:
    address = r.get("pci_address", str)
    pci = None
    if address is not None:
        pci = PciFunction(
            address=address,
            vendor_id=r.get("vendor_id", str),
            device_id=r.get("device_id", str),
            driver=r.get("driver", str),
            link=_read_link(r.child("link")),
            max_link=_read_link(r.child("max_link")),
        )
    port_count = r.get("port_count", int)
    if port_count is not None and not 0 <= port_count <= MAX_PORTS:
        raise SnapshotError(f"{r.where}.port_count: {_number(port_count)} is out of range")
    return Controller(
        id=r.get("id", str, optional=False),
        kind=r.get("kind", str) or "unknown",
        model=r.get("model", str),
        vendor=r.get("vendor", str),
        driver=r.get("driver", str),
        pci=pci,
        root=r.get("root", str),
        bridges=r.text_list("bridges"),
        port_count=port_count,
        slots=tuple(sorted(r.objects("slots", _read_slot), key=lambda s: s.index)),
    )


def _read_array(r: _Reader) -> Array:
    return Array(
        name=r.device_name("name"),
        kind=r.enum("kind", DiskKind, DiskKind.ARRAY),
        level=r.get("level", str),
        members=r.text_list("members"),
        member_disks=r.text_list("member_disks"),
        raid_devices=r.get("raid_devices", int),
        size_bytes=r.size("size_bytes"),
        chunk_kib=r.get("chunk_kib", int),
        uuid=r.get("uuid", str),
        label=r.get("label", str),
        mountpoints=r.text_list("mountpoints"),
        state=r.get("state", str),
    )


def from_json(data: object) -> Inventory:
    top = _Reader(data, "")
    if top.get("format", str) != FORMAT:
        raise SnapshotError(f"format: expected {FORMAT!r} (is this a Stripewise inventory?)")
    version = top.get("version", int, optional=False)
    if version > VERSION:
        raise SnapshotError(
            f"version: snapshot version {version} is newer than this Stripewise reads ({VERSION})"
        )
    host = top.child("host")
    controllers = top.objects("controllers", _read_controller)
    ids = [controller.id for controller in controllers]
    if (twice := next((i for n, i in enumerate(ids) if i in ids[:n]), None)) is not None:
        raise SnapshotError(f"controllers: {twice!r} listed twice")
    return Inventory(
        host=HostIdentity(
            hostname=host.get("hostname", str) if host else None,
            machine_id=host.get("machine_id", str) if host else None,
            kernel=host.get("kernel", str) if host else None,
            source_file=host.get("source_file", str) if host else None,
        ),
        source="snapshot",
        controllers=controllers,
        virtual=top.objects("virtual", _read_disk),
        arrays=top.objects("arrays", _read_array),
        warnings=top.text_list("warnings"),
        taken_at=top.get("taken_at", str),
        incomplete=top.text_list("incomplete"),
    )


def loads(text: str, origin: str = "snapshot") -> Inventory:
    try:
        data = parse_json(text, origin)
    except InputFileError as exc:
        raise SnapshotError(str(exc)) from None
    try:
        return from_json(data)
    except SnapshotError as exc:
        raise SnapshotError(f"{origin}: {exc}") from None

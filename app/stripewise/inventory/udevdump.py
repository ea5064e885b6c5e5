"""Read `udevadm info --export-db` output (or a umockdev recording) as a device source.

An admin can plan for a server from its dump without running anything on it. Export-db text
has properties only; a umockdev file adds sysfs attributes (`A:`) and links (`L:`), so sizes,
port numbers and queue settings are known too.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from stripewise.inventory.mounts import MountTable
from stripewise.inventory.sources import DeviceRecord, DeviceSource
from stripewise.model.topology import HostIdentity

# Line types we read; others (M:, R:, U:, T:, D:, L: priority, Q:, V:, I:, W:, H:, O:) vary
# with the systemd version and carry nothing the map needs, so they are accepted and skipped.
_KNOWN = frozenset("PMRUTDNLSQVIEAHWGO")


class DumpFormatError(ValueError):
    """A dump that cannot be read, naming the line: `FILE:LINE: problem`."""


@dataclass
class _Block:
    line: int
    path: str
    properties: dict[str, str] = field(default_factory=dict)
    links: list[str] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    sys_links: dict[str, str] = field(default_factory=dict)
    subsystem: str | None = None
    devtype: str | None = None


def _unescape(value: str) -> str:
    """umockdev writes attribute values C-escaped (`\\n`, `\\x20`)."""
    if "\\" not in value:
        return value
    try:
        return codecs.decode(value, "unicode_escape")
    except UnicodeDecodeError:
        return value


def _parse(lines: Iterable[str], origin: str) -> list[_Block]:
    blocks: list[_Block] = []
    current: _Block | None = None
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            current = None
            continue
        if len(line) < 2 or line[1] != ":" or line[0] not in _KNOWN:
            raise DumpFormatError(
                f"{origin}:{number}: not a udev dump line (expected 'X: value'): {line[:60]!r}"
            )
        kind, value = line[0], line[2:].lstrip(" ")
        if kind == "P":
            if not value.startswith("/devices/"):
                raise DumpFormatError(f"{origin}:{number}: device path must start with /devices/")
            current = _Block(number, value.rstrip("/"))
            blocks.append(current)
            continue
        if current is None:
            raise DumpFormatError(f"{origin}:{number}: '{kind}:' line before any 'P:' line")
        _add(current, kind, value, origin, number)
    if not blocks:
        raise DumpFormatError(f"{origin}: no devices found (is this `udevadm info --export-db`?)")
    return blocks


def _add(block: _Block, kind: str, value: str, origin: str, number: int) -> None:
    if kind in ("E", "A") and "=" not in value:
        raise DumpFormatError(f"{origin}:{number}: expected KEY=value after '{kind}:'")
    if kind == "E":
        key, _, text = value.partition("=")
        block.properties[key] = text
    elif kind == "S":
        block.links.append(value)
    elif kind == "U":
        block.subsystem = value or None
    elif kind == "T":
        block.devtype = value or None
    elif kind == "A":
        key, _, text = value.partition("=")
        block.attributes[key] = _unescape(text).rstrip("\n")
    elif kind == "L" and "=" in value:  # umockdev link; export-db's `L: 0` is a priority
        key, _, target = value.partition("=")
        block.sys_links[key] = target


class DumpSource(DeviceSource):
    def __init__(self, text: str, origin: str = "<dump>") -> None:
        blocks = _parse(text.splitlines(), origin)
        self._records: dict[str, DeviceRecord] = {}
        self._attributes: dict[str, dict[str, str]] = {}
        self._links: dict[str, dict[str, str]] = {}
        for block in blocks:
            props = block.properties
            self._records[block.path] = DeviceRecord(
                path=block.path,
                subsystem=block.subsystem or props.get("SUBSYSTEM"),
                devtype=block.devtype or props.get("DEVTYPE"),
                driver=props.get("DRIVER") or _basename(block.sys_links.get("driver")),
                properties=props,
                links=tuple(block.links)
                or tuple(link.removeprefix("/dev/") for link in props.get("DEVLINKS", "").split()),
            )
            self._attributes[block.path] = block.attributes
            self._links[block.path] = block.sys_links
        self.kind = "umockdev-file" if any(self._attributes.values()) else "udev-dump"
        self.host = HostIdentity(hostname=None)
        self.mounts = MountTable()  # a dump does not say what is mounted
        self.mounts_known = False
        self._children = self._child_index()

    def _child_index(self) -> dict[str, set[str]]:
        children: dict[str, set[str]] = {}
        for path in self._records:
            parts = path.split("/")
            for depth in range(2, len(parts)):
                children.setdefault("/".join(parts[:depth]), set()).add(parts[depth])
        for path, attrs in self._attributes.items():
            for name in [*attrs, *self._links[path]]:
                if "/" in name:
                    children.setdefault(path, set()).add(name.split("/", 1)[0])
        return children

    def block_devices(self) -> list[DeviceRecord]:
        return [r for r in self._records.values() if r.subsystem == "block"]

    def device(self, path: str) -> DeviceRecord | None:
        return self._records.get(path)

    def devices_of(self, subsystem: str) -> list[DeviceRecord]:
        return [r for r in self._records.values() if r.subsystem == subsystem]

    def _owner(self, path: str, name: str) -> tuple[str, str]:
        """Attributes of plain directories (enclosure bays, queue/) are recorded on the
        nearest device above them, under a name with a slash: find that device."""
        owner, rest = path, name
        while owner not in self._records and "/" in owner[1:]:
            owner, _, below = owner.rpartition("/")
            rest = f"{below}/{rest}"
        return owner, rest

    def attribute(self, path: str, name: str) -> str | None:
        owner, rest = self._owner(path, name)
        return self._attributes.get(owner, {}).get(rest)

    def entries(self, path: str) -> list[str]:
        if path in self._children or path in self._records:
            return sorted(self._children.get(path, ()))
        owner, rest = self._owner(path, "")
        prefix = rest.rstrip("/") + "/"
        names = [*self._attributes.get(owner, {}), *self._links.get(owner, {})]
        return sorted({n[len(prefix) :].split("/", 1)[0] for n in names if n.startswith(prefix)})

    def link_target(self, path: str, name: str) -> str | None:
        owner, rest = self._owner(path, name)
        target = self._links.get(owner, {}).get(rest)
        if target is None:
            return None
        if target.startswith("/sys/"):
            return target.removeprefix("/sys")
        return os.path.normpath(os.path.join(owner, os.path.dirname(rest), target))


def _basename(link: str | None) -> str | None:
    return link.rstrip("/").rsplit("/", 1)[-1] if link else None

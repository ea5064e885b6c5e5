"""Read `udevadm info --export-db` output (text or `--json`) or a umockdev recording as a
device source.

An admin can plan for a server from its dump without running anything on it. Export-db text
has properties only; a umockdev file adds sysfs attributes (`A:`) and links (`L:`), so sizes,
port numbers and queue settings are known too.

Dumps come pasted, copied between systems and cut by hand: a property value with a line break
leaves a bare `KEY=value` line, a shell prompt sits between records, line ends are CRLF. A line
that is not a record line is skipped and counted, never a reason to refuse the machine; the
caller shows one warning naming the first such line.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from stripewise.input_files import InputFileError, check_depth
from stripewise.inventory.mounts import MountTable
from stripewise.inventory.sources import DeviceRecord, DeviceSource
from stripewise.model.topology import HostIdentity

# `X: value`: P path, M name, R number, J id, U subsystem, B driver subsystem, T type, D number,
# I ifindex, N node, L link priority (umockdev: a link), S symlink, Q diskseq, V driver,
# E property, A attribute (umockdev), H binary attribute, W watch... Letters this reader does
# not use vary with the systemd version; they are accepted and ignored.
_RECORD_LINE = re.compile(r"^([A-Z]): ?(.*)$")
_QUOTE_CHARS = 60


class DumpFormatError(ValueError):
    """A dump that cannot be read at all: `FILE: problem`."""


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


@dataclass
class _Skipped:
    """Lines passed over: counted, with the first one kept for the warning."""

    count: int = 0
    first_line: int = 0
    first_text: str = ""

    def add(self, number: int, text: str) -> None:
        if not self.count:
            self.first_line, self.first_text = number, text
        self.count += 1

    def warning(self, origin: str, unit: str) -> str | None:
        if not self.count:
            return None
        text = self.first_text
        quoted = text if len(text) <= _QUOTE_CHARS else text[:_QUOTE_CHARS] + "…"
        units = unit if self.count == 1 else f"{unit}s"
        where = f"{origin}:{self.first_line}"
        return f"{where}: skipped {self.count} unreadable {units} (first: {quoted!r})"


def decode_dump(data: bytes, origin: str) -> tuple[str, str | None]:
    """The text, and a warning when some bytes are not UTF-8 (a model string from a cheap USB
    bridge, a dump passed through a Latin-1 editor): those read as U+FFFD, the rest as is."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        text = data.decode("utf-8", "replace")
        affected = sum(1 for row in text.split("\n") if "\ufffd" in row)
        lines = "line holds" if affected == 1 else "lines hold"
        return (
            text,
            f"{origin}:{line}: {affected} {lines} bytes that are not UTF-8, shown as '\ufffd'",
        )


def is_udev_json(text: str) -> bool:
    """`udevadm info --export-db --json=short|pretty`: objects with DEVPATH, not a snapshot."""
    start = len(text) - len(text.lstrip("\ufeff\x1e \t\r\n"))
    if '"DEVPATH"' not in text[start : start + 65536]:  # a snapshot: not decoded twice
        return False
    try:
        first, _end = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):
        return False
    return isinstance(first, dict) and isinstance(first.get("DEVPATH"), str)


def _unescape(value: str) -> str:
    """umockdev writes attribute values C-escaped (`\\n`, `\\x20`)."""
    if "\\" not in value:
        return value
    try:
        return codecs.decode(value, "unicode_escape")
    except UnicodeDecodeError:
        return value


def _devpath(value: str) -> str | None:
    """`/devices/...`; a pasted `/sys/devices/...` is the same device."""
    path = value.strip().rstrip("/")
    path = path.removeprefix("/sys") if path.startswith("/sys/devices/") else path
    return path if path.startswith("/devices/") and len(path) > len("/devices/") else None


def _parse_text(text: str, origin: str) -> tuple[list[_Block], str | None]:
    blocks: list[_Block] = []
    current: _Block | None = None
    dropping = False  # inside a record whose device path could not be read
    skipped = _Skipped()
    for number, raw in enumerate(text.removeprefix("\ufeff").split("\n"), start=1):
        line = raw.strip()  # CR of CRLF, trailing blanks, the indentation of a pasted dump
        if not line:
            current, dropping = None, False
            continue
        match = _RECORD_LINE.match(line)
        if match is None:
            skipped.add(number, line)
            continue
        kind, value = match.group(1), match.group(2).strip()
        if kind == "P":
            path = _devpath(value)
            if path is None:
                skipped.add(number, line)
                current, dropping = None, True
                continue
            current, dropping = _Block(number, path), False
            blocks.append(current)
        elif dropping or current is None or not _add(current, kind, value):
            skipped.add(number, line)  # of a record already dropped, or outside any record
    return blocks, skipped.warning(origin, "line")


def _add(block: _Block, kind: str, value: str) -> bool:
    """False for a line of a known kind that says nothing readable (`E:` without `=`)."""
    if kind in ("E", "A"):
        key, equals, text = value.partition("=")
        if not equals or not key.strip():
            return False
        if kind == "E":
            block.properties[key.strip()] = text
        else:
            block.attributes[key.strip()] = _unescape(text).rstrip("\n")
    elif kind == "S":
        block.links.append(value)
    elif kind == "U":
        block.subsystem = value or None
    elif kind == "T":
        block.devtype = value or None
    elif kind == "L" and "=" in value:  # umockdev link; export-db's `L: 0` is a priority
        key, _, target = value.partition("=")
        block.sys_links[key] = target
    return True


def _json_objects(text: str) -> Iterator[tuple[int, object | None]]:
    """(line, object) for each JSON value of a `--json=short` or `--json=pretty` stream; None
    for text that does not decode, after which reading resumes at the next line with `{`."""
    decoder = json.JSONDecoder()
    index = 0
    while True:
        while index < len(text) and text[index] in "\ufeff\x1e \t\r\n":
            index += 1
        if index >= len(text):
            return
        line = text.count("\n", 0, index) + 1
        try:
            value, index = decoder.raw_decode(text, index)
        except (ValueError, RecursionError):
            value = None
            following = text.find("\n{", index)
            index = len(text) if following < 0 else following + 1
        yield line, value


def _parse_json(text: str, origin: str) -> tuple[list[_Block], str | None]:
    try:
        check_depth(text, origin)
    except InputFileError as exc:
        raise DumpFormatError(str(exc)) from None
    blocks: list[_Block] = []
    skipped = _Skipped()
    lines = text.split("\n")
    for line, value in _json_objects(text):
        devpath = value.get("DEVPATH") if isinstance(value, dict) else None
        path = _devpath(devpath) if isinstance(devpath, str) else None
        if path is None or not isinstance(value, dict):
            shown = lines[line - 1].strip("\x1e \t\r") if value is None else json.dumps(value)
            skipped.add(line, shown[: _QUOTE_CHARS + 1])
            continue
        props = {str(k): v for k, v in value.items() if isinstance(v, str)}
        links = [link.removeprefix("/dev/") for link in props.get("DEVLINKS", "").split()]
        subsystem, devtype = props.get("SUBSYSTEM"), props.get("DEVTYPE")
        blocks.append(_Block(line, path, props, links, subsystem=subsystem, devtype=devtype))
    return blocks, skipped.warning(origin, "object")


class DumpSource(DeviceSource):
    def __init__(self, text: str, origin: str = "<dump>", notes: tuple[str, ...] = ()) -> None:
        parse = _parse_json if is_udev_json(text) else _parse_text
        blocks, skipped = parse(text, origin)
        if not blocks:
            what = "is this `udevadm info --export-db`?"
            raise DumpFormatError(f"{origin}: no devices found ({what})")
        self.warnings = tuple(w for w in (*notes, skipped) if w)
        self._records: dict[str, DeviceRecord] = {}
        self._attributes: dict[str, dict[str, str]] = {}
        self._links: dict[str, dict[str, str]] = {}
        for block in blocks:  # a device listed twice (dumps pasted together): the last wins
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

"""Read `udevadm info --export-db` output (text or `--json`) or a umockdev recording as a
device source.

An admin can plan for a server from its dump without running anything on it. Export-db text
has properties only; a umockdev file adds sysfs attributes (`A:`) and links (`L:`), so sizes,
port numbers and queue settings are known too.

Dumps come pasted, copied between systems and cut by hand: a property value with a line break
leaves a bare `KEY=value` line, a shell prompt sits between records, line ends are CRLF. A line
that is not a record line is skipped and counted, never a reason to refuse the machine; the
caller shows one warning naming the first such line. A dump cut short (or cut off at its
start) is read up to the cut and says where it is (dump_cuts.py).

Both forms are read in one pass, so time and memory grow with the dump's size, no faster.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

from stripewise.input_files import InputFileError, check_depth, lone_surrogate_in
from stripewise.inventory.dump_cuts import Ends, cut_warnings
from stripewise.json_stream import JsonStream, JsonValueError
from stripewise.model.topology import HostIdentity
from stripewise.system.device_sources import DeviceRecord, DeviceSource
from stripewise.system.mounts import MountTable

# `X: value`: P path, M name, R number, J id, U subsystem, B driver subsystem, T type, D number,
# I ifindex, N node, L link priority (umockdev: a link), S symlink, Q diskseq, V driver,
# E property, A attribute (umockdev), H binary attribute, W watch... Letters this reader does
# not use vary with the systemd version; they are accepted and ignored.
_RECORD_LINE = re.compile(r"^([A-Z]): ?(.*)$")
_RECORD_START = re.compile(r"^[A-Z]:?$")  # a record line cut after its letter
_WHOLE_PROPERTY = re.compile(r"^[EAL]: ?[^=\s][^=]*=")  # a property, attribute or link
_QUOTE_CHARS = 60
_PATH_MAX, _PATH_DEPTH = 4096, 64  # the kernel's PATH_MAX; real device paths nest under 40
_JSON_GAP = re.compile(r"[\ufeff\x1e \t\r\n]*")  # between objects: udevadm's, json-seq's RS


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
    last_line: int = 0
    records: int = 0  # of them, lines of a record (`E: ...`)

    def add(self, number: int, text: str, record: bool = False) -> None:
        if not self.count:
            self.first_line, self.first_text = number, text
        self.count += 1
        self.last_line = number
        self.records += record

    def merge(self, earlier: _Skipped) -> None:
        if earlier.count:
            self.count += earlier.count
            self.first_line, self.first_text = earlier.first_line, earlier.first_text

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
        affected, bad = 0, text.find("\ufffd")
        while bad >= 0:  # lines holding one, counted without a list of every line
            affected += 1
            end = text.find("\n", bad)
            bad = -1 if end < 0 else text.find("\ufffd", end)
        lines = "line holds" if affected == 1 else "lines hold"
        return (
            text,
            f"{origin}:{line}: {affected} {lines} bytes that are not UTF-8, shown as '\ufffd'",
        )


def is_udev_json(text: str) -> bool:
    """`udevadm info --export-db --json=short|pretty`: objects with DEVPATH, not a snapshot.
    A stream cut off at its start is one too: its first whole object says so."""
    start = _after_gap(text, 0)
    if '"DEVPATH"' not in text[start : start + 65536]:  # a snapshot: not decoded twice
        return False
    if not text.startswith("{", start):
        start = text.find("\n{", start, start + 65536) + 1
        if not start:
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
    """`/devices/...`; a pasted `/sys/devices/...` is the same device. Never longer or deeper
    than sysfs makes them: every level of a path is indexed, at a cost of its length."""
    path = value.strip().rstrip("/")
    path = path.removeprefix("/sys") if path.startswith("/sys/devices/") else path
    if len(path) > _PATH_MAX or path.count("/") > _PATH_DEPTH:
        return None
    return path if path.startswith("/devices/") and len(path) > len("/devices/") else None


@dataclass
class _Parsed:
    blocks: list[_Block]
    skipped: str | None
    ends: Ends


def _parse_text(text: str, origin: str) -> _Parsed:
    """One pass over the lines (never a list of them: a dump runs to tens of MiB)."""
    blocks: list[_Block] = []
    current: _Block | None = None
    dropping = False  # inside a record whose device path could not be read
    skipped, before = _Skipped(), _Skipped()  # before the first record: a prompt, or a cut
    ends, record_ends, last = Ends(), False, 0  # record_ends: blank lines end its records
    started = False  # a `P:` line was seen
    for number, raw in enumerate(_lines(text), start=1):
        line = raw.strip()  # CR of CRLF, trailing blanks, the indentation of a pasted dump
        if number == 1:
            line = line.removeprefix("\ufeff").strip()
        if not line:
            record_ends |= current is not None
            current, dropping = None, False
            continue
        last = number
        match = _RECORD_LINE.match(line)
        if not raw.endswith("\n") and record_ends and _cut_inside(current, dropping, line):
            ends.cut(number, "a line without its end")  # half a serial is worse than none
            break
        if match is None:
            (skipped if started else before).add(number, line)
            continue
        kind, value = match.group(1), match.group(2).strip()
        if kind == "P":
            path = _devpath(value)
            if not started:
                _start(before, skipped, ends)
                started = True
            if path is None:
                skipped.add(number, line)
                current, dropping = None, True
                continue
            current, dropping = _Block(number, path), False
            blocks.append(current)
        elif not started:
            before.add(number, line, record=True)
        elif dropping or current is None or not _add(current, kind, value):
            skipped.add(number, line)  # of a record already dropped, or outside any record
    if current is not None and not (current.properties or current.attributes or current.sys_links):
        ends.cut(last, "a record without its properties")
    ends.last_line = last
    if not started:
        _start(before, skipped, ends)
    return _Parsed(blocks, skipped.warning(origin, "line"), ends)


def _cut_inside(current: _Block | None, dropping: bool, line: str) -> bool:
    """Whether a last line without its end is half a line. A whole dump ends with a virtual
    device's `E: KEY=value`, and one saved without its last line end (a paste, some editors)
    is whole: anything else is cut."""
    if current is not None:
        path = current.path
    elif line.startswith("P:"):
        path = line[2:].strip()
    else:
        return dropping or bool(_RECORD_LINE.match(line) or _RECORD_START.match(line))
    return not path.startswith("/devices/virtual/") or not _WHOLE_PROPERTY.match(line)


def _lines(text: str) -> Iterator[str]:
    """Each line with its `\n` (the last one may have none). Not io.StringIO, which holds a
    copy of the text at four bytes a character, nor a list of them."""
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", start) + 1 or size
        yield text[start:end]
        start = end


def _start(before: _Skipped, skipped: _Skipped, ends: Ends) -> None:
    """Record lines before the first record are the end of one cut off; other lines (a shell
    prompt) are skipped like any stray line."""
    if before.records:
        ends.start_lines = before.last_line
    else:
        skipped.merge(before)


def _add(block: _Block, kind: str, value: str) -> bool:
    """False for a line of a known kind that says nothing readable (`E:` without `=`)."""
    if kind in ("E", "A"):
        key, equals, text = value.partition("=")
        if not equals or not key.strip():
            return False
        if kind == "E":
            block.properties[sys.intern(key.strip())] = text  # keys repeat in every record
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


def _json_objects(text: str, ends: Ends) -> Iterator[tuple[int, int, object | None]]:
    """(line, offset, object) for each JSON value of a `--json=short` or `--json=pretty`
    stream, in one pass (JsonStream: lines counted from the last object on, each decoded from
    a copy of its own lines). None for text that does not decode, after which reading resumes
    at the next line with `{`; an object the file ends inside yields what it holds up to its
    last whole property."""
    stream = JsonStream(text)
    index = _after_gap(text, 0)
    following = text.find("\n{", index)
    if not text.startswith("{", index) and following >= 0:  # the end of an object cut off
        ends.start_lines = stream.line_at(following)
        index = following + 1
    while True:
        ended, index = index, _after_gap(text, index)
        if index >= len(text):
            ends.last_line = stream.line_at(max(0, ended - 1))  # where the last one ends
            return
        start, line = index, stream.line_at(index)
        try:
            if text[start] != "{":  # not an object: a pasted prompt, a stray word
                raise JsonValueError(line, "not an object")
            value, index = stream.decode(start)
        except JsonValueError:
            value = None
            following = text.find("\n{", start)
            index = len(text) if following < 0 else following + 1
            cut = following < 0 and text[start] == "{"
            if cut and not text[-64:].rstrip().endswith("}"):
                ends.cut(line, "an object without its end")
                value = _salvage(text[start:])
        yield line, start, value


def _after_gap(text: str, index: int) -> int:
    gap = _JSON_GAP.match(text, index)
    return gap.end() if gap else index


def _salvage(fragment: str) -> object | None:
    """What an object cut short holds up to its last whole property (a few tries: a comma may
    sit inside the cut value)."""
    end = len(fragment)
    for _ in range(4):
        try:
            value = json.loads(fragment[:end].rstrip() + "}")
        except (ValueError, RecursionError):
            end = fragment.rfind(",", 0, end)
            if end < 0:
                return None
            continue
        if lone_surrogate_in(fragment, value):  # not text: as a whole object holding one is
            return None
        return value if isinstance(value, dict) else None
    return None


def _parse_json(text: str, origin: str) -> _Parsed:
    try:
        check_depth(text, origin)
    except InputFileError as exc:
        raise DumpFormatError(str(exc)) from None
    blocks: list[_Block] = []
    skipped, ends = _Skipped(), Ends(unit="an object")
    for line, offset, value in _json_objects(text, ends):
        devpath = value.get("DEVPATH") if isinstance(value, dict) else None
        path = _devpath(devpath) if isinstance(devpath, str) else None
        if path is None or not isinstance(value, dict):
            if line == ends.cut_line:
                continue  # the cut says so
            if skipped.count:  # only the first is quoted
                skipped.add(line, "")
                continue
            shown = _line_at(text, offset) if value is None else json.dumps(value)
            skipped.add(line, shown[: _QUOTE_CHARS + 1])
            continue
        props = {sys.intern(str(k)): v for k, v in value.items() if isinstance(v, str)}
        links = [link.removeprefix("/dev/") for link in props.get("DEVLINKS", "").split()]
        subsystem, devtype = props.get("SUBSYSTEM"), props.get("DEVTYPE")
        blocks.append(_Block(line, path, props, links, subsystem=subsystem, devtype=devtype))
    return _Parsed(blocks, skipped.warning(origin, "object"), ends)


def _line_at(text: str, offset: int) -> str:
    """The start of the line holding `offset` (enough to quote)."""
    start = text.rfind("\n", 0, offset) + 1
    return text[start : offset + 256].split("\n", 1)[0].strip("\x1e \t\r")


class DumpSource(DeviceSource):
    def __init__(self, text: str, origin: str = "<dump>", notes: tuple[str, ...] = ()) -> None:
        parsed = (_parse_json if is_udev_json(text) else _parse_text)(text, origin)
        blocks = parsed.blocks
        if not blocks:
            what = "is this `udevadm info --export-db`?"
            raise DumpFormatError(f"{origin}: no devices found ({what})")
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
            # only a recording's: export-db has none, and 80,000 empty dicts cost memory
            if block.attributes or block.path in self._attributes:
                self._attributes[block.path] = block.attributes
            if block.sys_links or block.path in self._links:
                self._links[block.path] = block.sys_links
        self.kind = "umockdev-file" if any(self._attributes.values()) else "udev-dump"
        records = list(self._records.values())
        self.incomplete = tuple(cut_warnings(origin, parsed.ends, records, self))
        self.warnings = tuple(w for w in (*notes, *self.incomplete, parsed.skipped) if w)
        self.host = HostIdentity(hostname=None)
        self.mounts = MountTable()  # a dump does not say what is mounted
        self.mounts_known = False
        self._children = self._child_index()

    def _child_index(self) -> dict[str, dict[str, None]]:
        """Each directory above a device (/devices, /devices/pci0000:00...) -> the names in
        it, as the keys of a dict: a dict of strings is no work for the garbage collector,
        a set is (and tens of thousands of them made its passes take seconds)."""
        children: dict[str, dict[str, None]] = {}
        for path in self._records:
            end = path.find("/", 1)
            while end > 0:  # each directory by slicing at each slash, not joining the parts
                following = path.find("/", end + 1)
                found = children.get(path[:end])
                if found is None:
                    children[path[:end]] = found = {}
                found[path[end + 1 : following] if following > 0 else path[end + 1 :]] = None
                end = following
        for path in self._attributes.keys() | self._links.keys():
            for name in [*self._attributes.get(path, {}), *self._links.get(path, {})]:
                if "/" in name:
                    children.setdefault(path, {})[name.split("/", 1)[0]] = None
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

"""A chassis as the admin faces it: panels of bays in rows and columns, numbered as printed.

    format = "stripewise-chassis"
    version = 1
    product = "Sun Fire X4500"        # the DMI product name (/sys/class/dmi/id/product_name)
    title = "Sun Fire X4500 (Thumper), 48 top-loading bays"
    source = "..."                    # where the numbering comes from (manual, label, ...)
    labels = "number"                 # or "row-column": "2-03"
    [[panel]]
    face = "top"                      # front, back, top, internal
    rows = 4
    columns = 12
    first = 0                         # the number of the first bay
    origin = "bottom-left"            # where bay `first` sits, as the panel is drawn
    direction = "across"              # numbers run along a row first ("down": a column)
    prefix = ""                       # put before each label of this panel ("rear ")
    [ports]                           # optional: bay label = disk by-path, from `bays export`
    "0" = "pci-0000:01:01.0-ata-1"

A panel is drawn as the admin sees it standing at that face (the top seen from above with the
front at the bottom). Pure: files are read in `stripewise.inventory.chassis_files`; docs/bays.md
documents the keys.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, time
from enum import StrEnum
from typing import Any, TypeVar

from stripewise.input_files import InputFileError, parse_toml
from stripewise.model.file_errors import FileFieldError, header_problem

FORMAT = ("stripewise-chassis", 1)
E = TypeVar("E", bound=StrEnum)
MAX_BAYS = 1024  # the largest JBODs hold about a hundred; this bounds a hostile file
MAX_TEXT = 200
MAX_FIRST = 10_000  # the highest number a panel's first bay may have
MAX_SHOWN = 60  # of a wrong value quoted in a message
# a line break or a terminal escape in a label would split or garble `bays show`'s grid
_LINE_BREAKING = {"Cc", "Zl", "Zp"}


class Face(StrEnum):
    FRONT = "front"
    BACK = "back"
    TOP = "top"
    INTERNAL = "internal"


class Origin(StrEnum):
    TOP_LEFT = "top-left"
    TOP_RIGHT = "top-right"
    BOTTOM_LEFT = "bottom-left"
    BOTTOM_RIGHT = "bottom-right"


class Direction(StrEnum):
    ACROSS = "across"  # along a row, then the next row
    DOWN = "down"  # along a column, then the next column


class LabelStyle(StrEnum):
    NUMBER = "number"
    ROW_COLUMN = "row-column"


class ChassisError(FileFieldError):
    """A layout file that cannot be used: names the file and the key."""


@dataclass(frozen=True)
class Panel:
    """One block of bays on one face, drawn as the admin sees it."""

    face: Face = Face.FRONT
    rows: int = 1
    columns: int = 12
    first: int = 0
    origin: Origin = Origin.TOP_LEFT
    direction: Direction = Direction.ACROSS
    prefix: str = ""

    @property
    def size(self) -> int:
        return self.rows * self.columns

    def counted(self, row: int, column: int) -> tuple[int, int]:
        """(row, column), 0-based, of a drawn position counted from the numbering's origin."""
        counted_row = row if self.origin.value.startswith("top") else self.rows - 1 - row
        counted_column = column if self.origin.value.endswith("left") else self.columns - 1 - column
        return counted_row, counted_column

    def number(self, row: int, column: int) -> int:
        """The bay number printed at a drawn position (0-based from the top left)."""
        r, c = self.counted(row, column)
        step = r * self.columns + c if self.direction is Direction.ACROSS else c * self.rows + r
        return self.first + step


@dataclass(frozen=True)
class Bay:
    """One bay: where it is drawn (0-based from the panel's top left) and what it is called."""

    panel: int
    row: int
    column: int
    number: int
    label: str


@dataclass(frozen=True)
class ChassisLayout:
    product: str
    title: str = ""
    source: str = ""
    labels: LabelStyle = LabelStyle.NUMBER
    panels: tuple[Panel, ...] = (Panel(),)
    ports: Mapping[str, str] = field(default_factory=dict)  # label -> by-path, when shared

    @property
    def bays(self) -> tuple[Bay, ...]:
        found = []
        for index, panel in enumerate(self.panels):
            for row in range(panel.rows):
                for column in range(panel.columns):
                    found.append(self._bay(index, panel, row, column))
        return tuple(found)

    def _bay(self, index: int, panel: Panel, row: int, column: int) -> Bay:
        number = panel.number(row, column)
        if self.labels is LabelStyle.ROW_COLUMN:
            r, c = panel.counted(row, column)
            text = f"{r + 1}-{c + 1:02d}"
        else:
            text = str(number)
        return Bay(index, row, column, number, panel.prefix + text)

    def bay(self, label: str) -> Bay | None:
        return next((b for b in self.bays if b.label == label), None)

    @property
    def name(self) -> str:
        return self.title or self.product


def parse_layout(text: str, origin: str) -> ChassisLayout:
    try:
        data = parse_toml(text, origin)
    except InputFileError as exc:
        raise ChassisError(str(exc), origin) from None
    return layout_from_dict(data, origin)


def layout_from_dict(data: Mapping[str, Any], origin: str) -> ChassisLayout:
    problem = header_problem(
        data.get("format"), data.get("version"), FORMAT, "a chassis layout", _show
    )
    if problem:
        raise ChassisError.at(origin, "key", None, *problem)
    known = {"format", "version", "product", "title", "source", "labels", "panel", "ports"}
    _no_strangers(data, known, origin, None)
    product = _text(data, "product", origin, None, required=True)
    raw_panels = data.get("panel")
    if not isinstance(raw_panels, list) or not raw_panels:
        raise ChassisError.at(origin, "key", None, "panel", "needs at least one [[panel]]")
    panels = tuple(_panel(p, origin, i) for i, p in enumerate(raw_panels))
    layout = ChassisLayout(
        product=product,
        title=_text(data, "title", origin, None),
        source=_text(data, "source", origin, None),
        labels=_choice(data, "labels", LabelStyle, LabelStyle.NUMBER, origin, None),
        panels=panels,
        ports=_ports(data.get("ports", {}), origin),
    )
    if sum(p.size for p in panels) > MAX_BAYS:
        raise ChassisError.at(origin, "key", None, "panel", f"more than {MAX_BAYS} bays")
    labels = [b.label for b in layout.bays]
    twice = natural_sorted({x for x in labels if labels.count(x) > 1})
    if twice:
        message = f"bays {', '.join(twice[:5])} are named twice: give panels a prefix"
        raise ChassisError.at(origin, "key", None, "panel", message)
    unknown = sorted(set(layout.ports) - set(labels))
    if unknown:
        raise ChassisError.at(origin, "ports", "ports", unknown[0], "is not a bay of this layout")
    return layout


def _panel(raw: object, origin: str, index: int) -> Panel:
    table = f"panel {index + 1}"
    if not isinstance(raw, dict):
        raise ChassisError.at(origin, table, table, None, "must be a table")
    keys = {"face", "rows", "columns", "first", "origin", "direction", "prefix"}
    _no_strangers(raw, keys, origin, table)
    return Panel(
        face=_choice(raw, "face", Face, Face.FRONT, origin, table),
        rows=_whole(raw, "rows", origin, table, 1, 1, MAX_BAYS),
        columns=_whole(raw, "columns", origin, table, 12, 1, MAX_BAYS),
        first=_whole(raw, "first", origin, table, 0, 0, MAX_FIRST),
        origin=_choice(raw, "origin", Origin, Origin.TOP_LEFT, origin, table),
        direction=_choice(raw, "direction", Direction, Direction.ACROSS, origin, table),
        prefix=_text(raw, "prefix", origin, table),
    )


def _ports(raw: object, origin: str) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise ChassisError.at(origin, "key", None, "ports", "must be a table of bay = by-path")
    found = {}
    for label, path in raw.items():
        if (
            not isinstance(path, str)
            or not path
            or len(path) > MAX_TEXT
            or "/" in path
            or control_character(path)
        ):
            message = "must be a by-path name (as in /dev/disk/by-path)"
            raise ChassisError.at(origin, "ports", "ports", label, message)
        found[str(label)] = path
    if len(set(found.values())) != len(found):
        raise ChassisError.at(origin, "key", None, "ports", "names one by-path for two bays")
    return found


def _no_strangers(raw: Mapping[str, Any], known: set[str], origin: str, table: str | None) -> None:
    stranger = sorted(set(raw) - known)
    if stranger:
        label = table or "key"
        raise ChassisError.at(origin, label, table, stranger[0], "is not a key of a chassis layout")


def _text(
    raw: Mapping[str, Any], key: str, origin: str, table: str | None, required: bool = False
) -> str:
    value = raw.get(key, None if required else "")
    label = table or "key"
    if value is None:
        raise ChassisError.at(origin, label, table, key, "missing")
    if not isinstance(value, str) or (required and not value.strip()):
        raise ChassisError.at(origin, label, table, key, f"must be text, got {_show(value)}")
    if len(value) > MAX_TEXT:
        raise ChassisError.at(origin, label, table, key, f"longer than {MAX_TEXT} characters")
    control = control_character(value)
    if control:
        message = f"holds the control character U+{ord(control):04X}: one line of text only"
        raise ChassisError.at(origin, label, table, key, message)
    return value.strip() if key != "prefix" else value


def control_character(text: str) -> str | None:
    """The first character of `text` that breaks a line or drives a terminal, if any."""
    return next((c for c in text if unicodedata.category(c) in _LINE_BREAKING), None)


def _whole(
    raw: Mapping[str, Any],
    key: str,
    origin: str,
    table: str | None,
    default: int,
    low: int,
    high: int,
) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        message = f"must be a whole number from {low} to {high}, got {_show(value)}"
        raise ChassisError.at(origin, table or "key", table, key, message)
    return value


def _choice(
    raw: Mapping[str, Any], key: str, kind: type[E], default: E, origin: str, table: str | None
) -> E:
    value = raw.get(key, default.value)
    try:
        return kind(value)
    except ValueError:
        words = ", ".join(e.value for e in kind)
        message = f"must be one of {words}, got {_show(value)}"
        raise ChassisError.at(origin, table or "key", table, key, message) from None


def _show(value: object) -> str:
    """A value as TOML writes it (`true`, `["front"]`), shortened: messages quote the file."""
    shown = _toml(value)
    return shown if len(shown) <= MAX_SHOWN else shown[: MAX_SHOWN - 1] + "…"


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _quote(value[: MAX_SHOWN + 1])
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value[:MAX_SHOWN]) + "]"
    if isinstance(value, (date, time)):
        return value.isoformat()
    return repr(value)  # int, float: as TOML writes them (inf and nan too)


def natural_sorted(labels: Iterable[str]) -> list[str]:
    """Labels in the order bays are counted: 2 before 10, "rear 2" before "rear 10"."""

    def key(label: str) -> list[tuple[int, str]]:
        # the split alternates text and digits: each digit run compared by its value
        parts = re.split(r"(\d+)", label)
        return [(int(p), "") if i % 2 else (0, p) for i, p in enumerate(parts)]

    return sorted(labels, key=key)


def dump_layout(layout: ChassisLayout, ports: Mapping[str, str] | None = None) -> str:
    """The layout as a file `parse_layout` reads back; `ports` shares a mapping with it."""
    lines = [
        f'format = "{FORMAT[0]}"',
        f"version = {FORMAT[1]}",
        f"product = {_quote(layout.product)}",
        f"title = {_quote(layout.title)}",
        f"source = {_quote(layout.source)}",
        f'labels = "{layout.labels.value}"',
    ]
    for panel in layout.panels:
        lines += [
            "",
            "[[panel]]",
            f'face = "{panel.face.value}"',
            f"rows = {panel.rows}",
            f"columns = {panel.columns}",
            f"first = {panel.first}",
            f'origin = "{panel.origin.value}"',
            f'direction = "{panel.direction.value}"',
            f"prefix = {_quote(panel.prefix)}",
        ]
    shared = layout.ports if ports is None else ports
    if shared:
        lines += ["", "[ports]"]
        lines += [f"{_quote(label)} = {_quote(path)}" for label, path in shared.items()]
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    """A TOML basic string: JSON's escapes (\\", \\\\, \\uXXXX) are TOML's too."""
    return json.dumps(text, ensure_ascii=True)

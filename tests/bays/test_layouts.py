"""Chassis layouts: numbering and orientation, the shipped files, one written by hand from
docs/bays.md, and the errors a wrong file gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripewise.inventory.chassis_files import layouts, save_layout
from stripewise.model.chassis import (
    ChassisError,
    ChassisLayout,
    Direction,
    Face,
    LabelStyle,
    Origin,
    Panel,
    dump_layout,
    parse_layout,
)

HAND_WRITTEN = """\
format = "stripewise-chassis"
version = 1
product = "Example 4U 36-bay"
title = "36 bays: 24 at the front, 12 at the back"
source = "the numbers printed on the bays"
labels = "row-column"

[[panel]]
face = "front"
rows = 4
columns = 6
origin = "top-left"
direction = "down"

[[panel]]
face = "back"
rows = 2
columns = 6
first = 24
origin = "bottom-right"
prefix = "rear "

[ports]
"1-01" = "pci-0000:03:00.0-sas-exp0x500304801f3b2a7f-phy0-lun-0"
"rear 2-06" = "pci-0000:03:00.0-sas-phy4-lun-0"
"""


def test_a_layout_written_by_hand_from_the_documented_keys() -> None:
    layout = parse_layout(HAND_WRITTEN, "hand.toml")
    assert layout.product == "Example 4U 36-bay" and layout.labels is LabelStyle.ROW_COLUMN
    front, back = layout.panels
    assert (front.face, front.rows, front.columns, front.direction) == (
        Face.FRONT,
        4,
        6,
        Direction.DOWN,
    )
    assert back.first == 24 and back.origin is Origin.BOTTOM_RIGHT and back.prefix == "rear "
    assert len(layout.bays) == 36
    # down: numbers run along the first column first
    assert [b.number for b in layout.bays if b.panel == 0 and b.column == 0] == [0, 1, 2, 3]
    assert layout.bay("1-01") == layout.bays[0]
    # the back counts from its bottom right: its bay 24 is drawn at the bottom right
    first_back = next(b for b in layout.bays if b.number == 24)
    assert (first_back.panel, first_back.row, first_back.column) == (1, 1, 5)
    assert first_back.label == "rear 1-01"
    assert layout.ports["rear 2-06"] == "pci-0000:03:00.0-sas-phy4-lun-0"
    assert parse_layout(dump_layout(layout), "again") == layout


def test_the_example_in_docs_bays_md_is_the_hand_written_layout() -> None:
    """docs/bays.md's example is a file written from its documented keys: it reads as above."""
    docs = (Path(__file__).parents[2] / "docs" / "bays.md").read_text(encoding="utf-8")
    example = docs.split("```toml\n", 1)[1].split("```", 1)[0]
    assert parse_layout(example, "docs/bays.md") == parse_layout(HAND_WRITTEN, "hand.toml")


@pytest.mark.parametrize(
    ("origin", "direction", "first_row"),
    [
        (Origin.TOP_LEFT, Direction.ACROSS, [0, 1, 2, 3]),
        (Origin.TOP_RIGHT, Direction.ACROSS, [3, 2, 1, 0]),
        (Origin.BOTTOM_LEFT, Direction.ACROSS, [8, 9, 10, 11]),
        (Origin.BOTTOM_RIGHT, Direction.DOWN, [11, 8, 5, 2]),
        (Origin.TOP_LEFT, Direction.DOWN, [0, 3, 6, 9]),
    ],
)
def test_numbering_origin_and_direction(
    origin: Origin, direction: Direction, first_row: list[int]
) -> None:
    panel = Panel(Face.FRONT, rows=3, columns=4, origin=origin, direction=direction)
    layout = ChassisLayout("box", panels=(panel,))
    assert [b.number for b in layout.bays if b.row == 0] == first_row


def test_shipped_layouts_read_and_the_x4500_is_numbered_as_its_diagram() -> None:
    shipped = layouts(Path("/nonexistent"))
    assert {"Sun Fire X4500", "Generic 2U 12-bay", "Generic 2U 24-bay"} <= set(shipped)
    x4500 = shipped["Sun Fire X4500"][0]
    assert x4500.panels[0].face is Face.TOP and len(x4500.bays) == 48
    top_row = [b.label for b in x4500.bays if b.row == 0]
    front_row = [b.label for b in x4500.bays if b.row == 3]
    assert top_row[:2] == ["36", "37"] and front_row[:2] == ["0", "1"]
    assert all(layout.source for layout, _where in shipped.values())


def test_a_user_layout_replaces_the_shipped_one_of_its_product(tmp_path: Path) -> None:
    own = ChassisLayout("Sun Fire X4500", title="mine", panels=(Panel(Face.TOP, 6, 8),))
    save_layout(own, tmp_path)
    found, where = layouts(tmp_path)["Sun Fire X4500"]
    assert found.title == "mine" and where.startswith(str(tmp_path))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('format = "x"\nversion = 1', "format"),
        (HAND_WRITTEN.replace('face = "back"', 'face = "side"'), "panel 2 face: must be one of"),
        (HAND_WRITTEN.replace("rows = 4", "rows = 0"), "panel 1 rows: must be a whole number"),
        (HAND_WRITTEN.replace('prefix = "rear "', 'prefix = ""'), "named twice"),
        (HAND_WRITTEN.replace('"1-01" =', '"9-99" ='), "ports 9-99: is not a bay"),
        (HAND_WRITTEN.replace("labels =", "label ="), "label: is not a key"),
        (HAND_WRITTEN.replace("product = ", "# product = "), "key product: missing"),
        (HAND_WRITTEN.replace("product = ", "product = 5 #"), "product: must be text, got 5"),
    ],
)
def test_wrong_files_are_refused_by_key(text: str, says: str) -> None:
    with pytest.raises(ChassisError) as refused:
        parse_layout(text, "bad.toml")
    assert says in str(refused.value) and str(refused.value).startswith("bad.toml:")


ONE_PANEL = 'format = "stripewise-chassis"\nversion = 1\nproduct = "X"\n[[panel]]\n'


FACES = "front, back, top, internal"
ORIGINS = "top-left, top-right, bottom-left, bottom-right"
CONTROL = "holds the control character"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            ONE_PANEL + "rows = true",
            "panel 1 rows: must be a whole number from 1 to 1024, got true",
        ),
        (ONE_PANEL + 'face = ["front"]', f'panel 1 face: must be one of {FACES}, got ["front"]'),
        (ONE_PANEL + "origin = 1979-05-27", f"panel 1 origin: must be one of {ORIGINS}, got 1979"),
        (
            ONE_PANEL.replace("[[panel]]", "labels = {a = 1}\n[[panel]]"),
            "key labels: must be one of number, row-column, got a table",
        ),
        (ONE_PANEL.replace("= 1", "= false"), "key version: must be a whole number, got false"),
        (ONE_PANEL.replace('"X"', "[1, 2]"), "key product: must be text, got [1, 2]"),
        (ONE_PANEL.replace("format", "# format"), "key format: missing;"),
        (ONE_PANEL.replace("version", "# version"), "key version: missing; a chassis layout has"),
        (ONE_PANEL + "[[panel]]", "key panel: bays 0, 1, 2, 3, 4 are named twice: give panels"),
        (
            ONE_PANEL + 'prefix = "a\\nb"',
            f"panel 1 prefix: {CONTROL} U+000A: one line of text only",
        ),
        (ONE_PANEL.replace('"X"', '"X\\u001b[2J"'), f"key product: {CONTROL} U+001B"),
        (ONE_PANEL.replace("[[panel]]", 'title = "a\\u2028b"\n[[panel]]'), f"key title: {CONTROL}"),
        (ONE_PANEL + '[ports]\n"0" = "pci-0\\r"', "ports 0: must be a by-path name"),
    ],
)
def test_refusals_quote_the_file_as_toml_writes_it(text: str, says: str) -> None:
    """A wrong value is shown as the file has it (`true`, `["front"]`, a table), a label with a
    control character (a line break, a terminal's escape) is refused by key, and bays named
    twice are listed in the order they are counted."""
    with pytest.raises(ChassisError) as refused:
        parse_layout(text, "bad.toml")
    assert str(refused.value).startswith(f"bad.toml: {says}")
    assert "\n" not in str(refused.value)

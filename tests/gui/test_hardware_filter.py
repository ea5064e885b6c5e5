"""Issue 29.7: the Hardware page at 1024x768 on the Sun X4500 (48 disks on six controllers).
The filter brings its first match into view and Enter selects it (its details shown), the next
Enter the next match; disk cards show the whole model and use the pane's width, ending in "…"
only when the pane is truly too narrow (the tooltip whole)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QRect, QSize, Qt
from PySide6.QtWidgets import QApplication

from stripewise.gui.hardware_map import SlotTile
from stripewise.gui.hardware_page import HardwarePage
from stripewise.inventory import load_inventory
from stripewise.inventory.snapshot import dumps
from tests.fixtures.machines import sun_x4500
from tests.gui.conftest import WindowFactory

CONSOLE = QSize(1024, 768)


@pytest.fixture
def x4500_file(tmp_path: Path) -> Path:
    recording = tmp_path / "x4500.umockdev"
    recording.write_text(sun_x4500().umockdev())
    path = tmp_path / "x4500.json"
    path.write_text(dumps(load_inventory(recording)))
    return path


def console_page(make_window: WindowFactory, inventory: Path, qtbot: Any) -> HardwarePage:
    window = make_window(view="hardware", inventory=inventory)
    window.resize(CONSOLE)
    qtbot.waitUntil(lambda: window.size() == CONSOLE)
    page = window.page_widgets["hardware"]
    assert isinstance(page, HardwarePage)
    settle()
    return page


def settle() -> None:
    for _ in range(3):
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        QApplication.processEvents()


def tile(page: HardwarePage, disk: str) -> SlotTile:
    return next(t for t in page.map.tiles if t.slot.disk and t.slot.disk.name == disk)


def in_view(page: HardwarePage, widget: SlotTile) -> bool:
    """Wholly inside the map's scroll viewport."""
    viewport = page.map_scroll.viewport()
    rect = widget.rect()
    return viewport.rect().contains(QRect(widget.mapTo(viewport, rect.topLeft()), rect.size()))


def test_the_filter_scrolls_to_its_match_and_enter_selects_it(
    make_window: WindowFactory, x4500_file: Path, qtbot: Any
) -> None:
    page = console_page(make_window, x4500_file, qtbot)
    sdk = tile(page, "sdk")  # controller 3 of 6: far below the fold at 768 px
    assert not in_view(page, sdk)
    page.search.setFocus()
    qtbot.keyClicks(page.search, "sdk")
    settle()
    assert page.matches.text() == "1 of 48 disks"
    assert in_view(page, sdk), "the match is scrolled into view"
    assert page.details.slot is None  # typing alone selects nothing

    qtbot.keyClick(page.search, Qt.Key.Key_Return)
    assert sdk.selected and page.details.slot == sdk.slot
    assert "sdk in port 4" in page.details.browser.toPlainText()
    # a file's map: no Read Health button to point at, so the details say where health comes from
    assert not page.read_health.isVisibleTo(page)
    assert "this map is a file's" in page.details.browser.toPlainText()
    assert in_view(page, sdk) and page.search.hasFocus()  # go on typing, or Enter again

    # several matches: Enter walks them in map order, and comes round again
    page.search.clear()
    qtbot.keyClicks(page.search, "HUA721075")  # the four 750 GB Ultrastars
    settle()
    found = [t for t in page.map.tiles if t.matches]
    assert len(found) == 4 and in_view(page, found[0])
    for expected in [*found, found[0]]:
        qtbot.keyClick(page.search, Qt.Key.Key_Return)
        settle()
        assert expected.selected and page.details.slot == expected.slot
        assert in_view(page, expected)


def test_disk_cards_show_the_whole_model_and_use_the_pane(
    make_window: WindowFactory, x4500_file: Path, qtbot: Any
) -> None:
    page = console_page(make_window, x4500_file, qtbot)
    for card in page.map.tiles:
        disk = card.slot.disk
        assert disk is not None and disk.model
        shown = card.shown_texts()
        assert disk.model in shown, (shown, card.width())  # "HITACHI HDS7250SASUN500G", whole
        assert not any(text.endswith("\u2026") for text in shown), shown
        assert disk.model in card.toolTip()
    for box in page.map.boxes:  # the cards share the row out: no half-empty pane
        row = box.tiles[0].parentWidget()
        assert row is not None
        right = max(card.geometry().right() for card in box.tiles)
        assert right >= row.width() - 2, (right, row.width())


def test_a_narrow_pane_elides_the_model_and_the_tooltip_keeps_it(
    make_window: WindowFactory, x4500_file: Path, qtbot: Any
) -> None:
    page = console_page(make_window, x4500_file, qtbot)
    total = sum(page.splitter.sizes())
    page.splitter.setSizes([200, total - 200])  # the details pane dragged wide
    settle()
    card = tile(page, "sdk")
    model = card.slot.disk.model  # type: ignore[union-attr]
    assert card.width() < card.sizeHint().width()  # truly out of room
    assert card.shown_texts()[-1].endswith("\u2026") and model in card.toolTip()

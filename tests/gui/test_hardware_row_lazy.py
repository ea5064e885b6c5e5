"""The 480-disk map builds the cards in view (and a screen's height around them), the rest as
they are scrolled to, tabbed or arrowed into, or asked for; a box takes its cards' place before
they exist, and a card built late carries what the map knows of its slot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPoint, QRect, Qt
from PySide6.QtWidgets import QApplication, QWidget

from stripewise.gui.controller_box import ControllerBox
from stripewise.gui.hardware_page import HardwarePage
from stripewise.model.health import HealthVerdict
from tests.fixtures.machines import x4500_row
from tests.gui.conftest import WindowFactory
from tests.gui.test_hardware_page import snapshot


@pytest.fixture
def page(qtbot: Any, make_window: WindowFactory, tmp_path: Path) -> HardwarePage:
    path = snapshot(tmp_path, "x4500-row", x4500_row(10).umockdev())
    window = make_window(view="hardware", inventory=path)
    found = window.page_widgets["hardware"]
    assert isinstance(found, HardwarePage)
    bar = found.map_scroll.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 3 * found.map_scroll.viewport().height())
    settle()
    return found


def in_viewport(page: HardwarePage, box: ControllerBox) -> bool:
    viewport = page.map_scroll.viewport()
    where = QRect(box.mapTo(viewport, QPoint(0, 0)), box.size())
    return where.intersects(viewport.rect())


def built(page: HardwarePage) -> list[int]:
    return [index for index, box in enumerate(page.map.boxes) if box.built]


def test_only_the_cards_in_view_are_built_and_scrolling_builds_them_before_they_paint(
    page: HardwarePage,
) -> None:
    boxes = page.map.boxes
    first = built(page)
    assert first, "the cards on screen are built"
    assert len(first) < len(boxes) / 3, f"{len(first)} of {len(boxes)} boxes built at start"
    assert first == list(range(len(first))), "the map starts at its top"
    assert all(box.built for box in boxes if in_viewport(page, box))
    # a box out of view already takes the place its cards will take
    waiting = boxes[-1]
    height = waiting.height()
    assert not waiting.built and height > 64

    bar = page.map_scroll.verticalScrollBar()
    top = waiting.mapTo(page.map_scroll.widget(), QPoint(0, 0)).y()
    bar.setValue(top)  # no turn of the event loop: built as the map moves, before a paint
    assert waiting.built
    tiles = waiting.tiles
    assert all(tile.isVisible() for tile in tiles)
    assert all(tile.geometry().width() >= 60 for tile in tiles), "placed, not at 0 x 0"
    assert waiting.height() == height
    assert all(box.built for box in boxes if in_viewport(page, box))
    assert len(built(page)) < len(boxes), "the middle of the map is still unbuilt"


def test_tab_and_arrows_walk_into_boxes_not_built_yet(qtbot: Any, page: HardwarePage) -> None:
    boxes = page.map.boxes
    last_built = built(page)[-1]
    assert not boxes[last_built + 1].built
    boxes[last_built].tiles[-1].setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is boxes[last_built + 1].tiles[0]
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Backtab)
    assert QApplication.focusWidget() is boxes[last_built].tiles[-1]

    # a box built far down the map (asked for, out of order) keeps its place in the tab order
    far = boxes[40]
    assert not far.built and not boxes[41].built
    far.tiles[-1].setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is boxes[41].tiles[0]
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Left)  # arrows: back across boxes
    assert QApplication.focusWidget() is far.tiles[-1]
    assert not boxes[20].built and not boxes[21].built
    boxes[20].tiles[-1].setFocus(Qt.FocusReason.OtherFocusReason)
    assert not boxes[21].built
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Right)
    assert QApplication.focusWidget() is boxes[21].tiles[0]
    qtbot.waitUntil(lambda: in_viewport(page, boxes[21]))  # brought into view


def test_a_card_built_late_is_filtered_selected_planned_and_badged_as_the_map_says(
    page: HardwarePage,
) -> None:
    box = page.map.boxes[-2]
    assert not box.built
    disks = [slot.disk for slot in box.controller.slots if slot.disk is not None]
    target, other = disks[0], disks[1]
    count = page.map.apply_filter(target.name)
    assert count == 1, "the count is over every disk, built or not"
    page.map.set_planned({other.name})
    page.map.set_health({target.name: HealthVerdict("failing", ("reallocated sectors",))})
    assert page.map.select_key(box.controller.slots[0].key)
    assert not box.built, "what the map knows of a slot needs no card"
    tiles = {tile.slot.disk.name: tile for tile in box.tiles if tile.slot.disk}
    assert tiles[target.name].matches and tiles[target.name].badge == "FAILING"
    assert tiles[target.name].selected
    assert not tiles[other.name].matches and tiles[other.name].planned
    assert not tiles[other.name].selected and tiles[other.name].badge is None

    page.map.apply_filter("")
    assert all(tile.matches for tile in box.tiles)


def settle() -> None:
    for _ in range(3):
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        QApplication.processEvents()


def scroll_to(page: HardwarePage, box: ControllerBox) -> None:
    bar = page.map_scroll.verticalScrollBar()
    bar.setValue(box.mapTo(page.map_scroll.widget(), QPoint(0, 0)).y())
    settle()


def near_view(page: HardwarePage, box: ControllerBox) -> bool:
    """Within a screen's height of the viewport, as the map builds ahead."""
    viewport = page.map_scroll.viewport()
    band = viewport.rect().adjusted(0, -viewport.height(), 0, viewport.height())
    return QRect(box.mapTo(viewport, QPoint(0, 0)), box.size()).intersects(band)


def test_a_map_read_again_has_the_cards_in_view_built_before_it_paints(
    page: HardwarePage,
) -> None:
    scroll_to(page, page.map.boxes[30])
    page.show_inventory(page.inventory)  # Refresh: a new map of the same height
    boxes = page.map.boxes
    shown = [box for box in boxes if in_viewport(page, box)]
    assert shown and all(box.built for box in shown), "no turn of the event loop needed"
    assert all(near_view(page, box) for box in boxes if box.built)


def test_back_from_the_bays_builds_only_the_cards_near_view(qtbot: Any, page: HardwarePage) -> None:
    bar = page.map_scroll.verticalScrollBar()
    bar.setValue(bar.maximum() // 3)
    settle()
    before = set(built(page))
    qtbot.mouseClick(page.show_bays, Qt.MouseButton.LeftButton)
    settle()
    qtbot.mouseClick(page.show_bays, Qt.MouseButton.LeftButton)
    settle()
    assert not page.show_bays.isChecked()
    boxes = page.map.boxes
    assert all(box.built for box in boxes if in_viewport(page, box))
    added = [index for index in built(page) if index not in before]
    assert all(near_view(page, boxes[index]) for index in added), added


def focusable_beside(widget: QWidget, forward: bool) -> QWidget:
    """The widget Tab (or Shift+Tab) reaches `widget` from, outside the map."""
    step = QWidget.previousInFocusChain if forward else QWidget.nextInFocusChain
    found = step(widget)
    while not (
        found.focusPolicy() & Qt.FocusPolicy.TabFocus and found.isVisible() and found.isEnabled()
    ):
        found = step(found)
    return found


def test_tab_into_the_map_lands_on_its_first_card_even_unbuilt(
    qtbot: Any, page: HardwarePage
) -> None:
    scroll_to(page, page.map.boxes[30])
    page.show_inventory(page.inventory)  # the map's top no longer built
    boxes = page.map.boxes
    assert not boxes[0].built and not boxes[-1].built
    before = focusable_beside(boxes[0].tiles_area, forward=True)
    assert not page.map.isAncestorOf(before)
    before.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.keyClick(before, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is boxes[0].tiles[0]
    after = focusable_beside(boxes[-1].tiles_area, forward=False)
    assert not page.map.isAncestorOf(after)
    after.setFocus(Qt.FocusReason.OtherFocusReason)
    qtbot.keyClick(after, Qt.Key.Key_Backtab)
    assert QApplication.focusWidget() is boxes[-1].tiles[-1]

"""The hardware map: PCI roots, controller boxes, and a tile per slot in physical port order
(the boxes are `controller_box`'s, the tiles `hardware_tile`'s).

A box builds its tiles when it comes into view (a screen's height ahead of the scroll), or when
something asks for them: what the map knows of a slot (selected, planned, matching the filter,
its disk's health) is kept by slot here and handed to its tile when it is built."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt, Signal
from PySide6.QtGui import QKeyEvent, QMoveEvent, QResizeEvent, QShowEvent
from PySide6.QtWidgets import QApplication, QLabel, QScrollArea, QVBoxLayout, QWidget

from stripewise.gui.controller_box import (
    NO_DISKS_TEXT,
    ControllerBox,
    ControllerMenuHook,
    controller_header,
)
from stripewise.gui.hardware_tile import SlotTile, card_width
from stripewise.model.health import HealthVerdict
from stripewise.model.topology import Controller, Inventory, Slot

__all__ = [
    "NO_DISKS_TEXT",
    "ControllerBox",
    "HardwareMap",
    "SlotTile",
    "controller_header",
    "slot_matches",
]


def slot_matches(slot: Slot, needle: str) -> bool:
    """Search across what an admin may type: names, serials, WWNs, models, labels, ports."""
    if not needle:
        return True
    disk = slot.disk
    haystack = [slot.title, slot.port, slot.label or ""]
    if disk is not None:
        haystack += [
            disk.name,
            disk.serial or "",
            disk.wwn or "",
            disk.model or "",
            disk.vendor or "",
            *disk.by_id,
            *disk.by_path,
            *(path.name for path in disk.paths),
        ]
    elif slot.path_of:
        haystack += [slot.path_of, slot.note or ""]
    return any(needle in text.lower() for text in haystack)


class HardwareMap(QWidget):
    """Controllers grouped by PCI root; selection and search are reported, not handled here."""

    slotSelected = Signal(object, object)  # Controller, Slot

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._outer = QVBoxLayout(self)
        self._outer.setContentsMargins(0, 0, 0, 0)
        self._content: QWidget | None = None  # the map drawn: replaced whole by the next
        self.boxes: list[ControllerBox] = []
        self._selected_key: str | None = None
        self._planned: set[str] = set()
        self._health: dict[str, HealthVerdict] = {}  # disk name -> its verdict
        self._needle = ""  # the filter typed, lower case
        self._unmatched: set[str] = set()  # keys of the slots the filter dims
        self._watched: QScrollArea | None = None  # whose scrolling brings boxes into view
        self.controller_menu: ControllerMenuHook | None = None  # the page's, for each card

    def set_inventory(self, inventory: Inventory) -> None:
        """Builds the map out of sight and puts it in place at once: shown, polished and laid
        out in one pass, not once a card as each came into a map on screen."""
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(10)
        self.boxes = []
        # one width for every box's tiles: their columns line up down the map
        font = self.font()  # the tiles' own: they inherit it
        width = max(
            (card_width(font, slot) for c in inventory.controllers for slot in c.slots),
            default=0,
        )
        for root, controllers in inventory.roots().items():
            title = QLabel(
                f"<b>{root}</b>"
                + (
                    ""
                    if root == "no PCI"
                    else " <span style='font-size:small'>PCI host bridge</span>"
                )
            )
            layout.addWidget(title)
            for controller in controllers:
                box = ControllerBox(
                    controller,
                    menu_hook=self.controller_menu,
                    tile_width=width,
                    on_built=self._built,
                    on_exposed=self._build_in_view,
                )
                self.boxes.append(box)
                layout.addWidget(box)
        layout.addStretch(1)
        if self._content is not None:
            self._outer.removeWidget(self._content)
            self._content.hide()
            self._content.deleteLater()
        self._content = content
        self._outer.addWidget(content)
        self._unmatched = self._unmatching()  # the filter typed, over the new map's slots
        if self.isVisible():  # read again while on screen: the boxes in view built now, in
            content.show()  # place; or, when the map grows, as the scroll area makes room
            self._outer.activate()  # for them (`resizeEvent`)
            self._build_in_view()

    @property
    def tiles(self) -> list[SlotTile]:
        """Every tile in map order, those not built yet built now: for a walk over all of
        them. What the map does itself goes through `built_tiles`."""
        return [tile for box in self.boxes for tile in box.tiles]

    def built_tiles(self) -> list[SlotTile]:
        """The tiles built so far (those in view, or asked for), in map order."""
        return [tile for box in self.boxes if box.built for tile in box.tiles]

    def _built(self, box: ControllerBox, tiles: list[SlotTile]) -> None:
        """A box's tiles, just built: what the map knows of their slots."""
        for tile in tiles:
            tile.clicked.connect(lambda slot, c=box.controller: self._select(c, slot))
            disk = tile.slot.disk
            tile.planned = disk is not None and disk.name in self._planned
            tile.selected = tile.slot.key == self._selected_key
            tile.matches = tile.slot.key not in self._unmatched
            if disk is not None:  # a map read again keeps what was read
                tile.set_health(self._health.get(disk.name))

    def _build_in_view(self) -> None:
        """Builds the tiles of the boxes in view, and of those a screen's height above and
        below it (what a turn of the wheel brings in), before they are painted."""
        content = self._content
        if not self.isVisible() or content is None or not self._placed(content):
            return
        seen = self.rect()
        scroll = self._scroll_area()
        if scroll is not None:  # the part of the map its viewport shows
            viewport = scroll.viewport()
            seen = seen.intersected(QRect(self.mapFrom(viewport, QPoint(0, 0)), viewport.size()))
        if seen.isEmpty():
            return
        band = seen.adjusted(0, -seen.height(), 0, seen.height())
        for box in self.boxes:
            if not box.built and QRect(box.mapTo(self, QPoint(0, 0)), box.size()).intersects(band):
                box.tiles  # noqa: B018  # built when asked for

    @staticmethod
    def _placed(content: QWidget) -> bool:
        """Its boxes are where they go: a new map, shown before the scroll area has made it
        its height, has them squeezed together, all of them on its first screen."""
        return content.height() >= content.heightForWidth(content.width())

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        scroll = self._scroll_area()
        if scroll is not None and scroll is not self._watched:
            if self._watched is not None:
                self._watched.viewport().removeEventFilter(self)
                for bar in (self._watched.verticalScrollBar(), self._watched.horizontalScrollBar()):
                    bar.valueChanged.disconnect(self._scrolled)
            scroll.viewport().installEventFilter(self)  # a window made taller shows more
            for bar in (scroll.verticalScrollBar(), scroll.horizontalScrollBar()):
                bar.valueChanged.connect(self._scrolled)  # after the scroll area moved us
            self._watched = scroll
        self._build_in_view()

    def _scrolled(self, _value: int) -> None:
        self._build_in_view()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._build_in_view()

    def moveEvent(self, event: QMoveEvent) -> None:
        """Outside a scroll area's reach, a parent may move the map about."""
        super().moveEvent(event)
        self._build_in_view()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            self._watched is not None
            and watched is self._watched.viewport()
            and event.type() == QEvent.Type.Resize
        ):
            self._build_in_view()
        return False

    def _select(self, controller: Controller, slot: Slot) -> None:
        self._selected_key = slot.key
        for tile in self.built_tiles():
            selected = tile.slot.key == slot.key
            if selected != tile.selected:
                tile.selected = selected
                tile.update()
        self.slotSelected.emit(controller, slot)

    def select_key(self, key: str) -> bool:
        found = next(
            ((box, slot) for box in self.boxes for slot in box.controller.slots if slot.key == key),
            None,
        )
        if found is not None:
            self._select(found[0].controller, found[1])
        return found is not None

    def tile_of(self, slot: Slot) -> SlotTile | None:
        """The slot's tile, its box's tiles built if they were not yet."""
        for box in self.boxes:
            if slot in box.controller.slots:
                return box.tiles[box.controller.slots.index(slot)]
        return None

    def apply_filter(self, text: str) -> int:
        """Dims tiles that do not match; returns how many disks match."""
        self._needle = text.strip().lower()
        self._unmatched = self._unmatching()
        for tile in self.built_tiles():
            matches = tile.slot.key not in self._unmatched
            if matches != tile.matches:
                tile.matches = matches
                tile.update()
        return sum(
            slot.disk is not None and slot.key not in self._unmatched
            for box in self.boxes
            for slot in box.controller.slots
        )

    def _unmatching(self) -> set[str]:
        return {
            slot.key
            for box in self.boxes
            for slot in box.controller.slots
            if not slot_matches(slot, self._needle)
        }

    def matching_slots(self) -> list[tuple[Controller, Slot]]:
        """The slots a filter found, in map order (none without a filter); disks' first."""
        if not self._needle:
            return []
        found = [
            (box.controller, slot)
            for box in self.boxes
            for slot in box.controller.slots
            if slot.key not in self._unmatched
        ]
        return sorted(found, key=lambda pair: pair[1].disk is None)  # stable: map order

    def select_next_match(self) -> SlotTile | None:
        """Selects the match after the selected one (the first when none is), as Enter in
        the filter asks; returns its tile."""
        found = self.matching_slots()
        if not found:
            return None
        keys = [slot.key for _controller, slot in found]
        after = keys.index(self._selected_key) + 1 if self._selected_key in keys else 0
        controller, slot = found[after % len(found)]
        self._select(controller, slot)
        return self.tile_of(slot)

    def set_planned(self, disk_names: set[str]) -> None:
        """Disks the planner has put into a proposed array are drawn in the planned colour."""
        self._planned = set(disk_names)
        for tile in self.built_tiles():
            planned = tile.slot.disk is not None and tile.slot.disk.name in self._planned
            if planned != tile.planned:
                tile.planned = planned
                tile.update()

    def set_health(self, verdicts: Mapping[str, HealthVerdict]) -> None:
        """Each disk's SMART verdict by name: a failing or warned one's card shows a badge.
        Only the cards whose verdict changed are repainted."""
        self._health = dict(verdicts)
        for tile in self.built_tiles():
            if tile.slot.disk is not None:
                tile.set_health(self._health.get(tile.slot.disk.name))

    def _neighbour(self, tile: SlotTile, step: int) -> SlotTile | None:
        """The tile `step` (1 or -1) from `tile` in map order, the next box's built if need
        be; None past either end."""
        boxes = [box for box in self.boxes if box.controller.slots]
        box = next((b for b in boxes if b.built and tile in b.tiles), None)
        if box is None:
            return None
        index = box.tiles.index(tile) + step
        if 0 <= index < len(box.tiles):
            return box.tiles[index]
        beside = boxes.index(box) + step
        if not 0 <= beside < len(boxes):
            return None
        return boxes[beside].tiles[0 if step > 0 else -1]

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Arrow keys walk the tiles in map order, into view."""
        step = {
            Qt.Key.Key_Right: 1,
            Qt.Key.Key_Down: 1,
            Qt.Key.Key_Left: -1,
            Qt.Key.Key_Up: -1,
        }.get(Qt.Key(event.key()))
        focused = QApplication.focusWidget()
        if step is None or not isinstance(focused, SlotTile) or not self.isAncestorOf(focused):
            super().keyPressEvent(event)
            return
        target = self._neighbour(focused, step)
        if target is not None:
            target.setFocus(Qt.FocusReason.OtherFocusReason)
            scroll = self._scroll_area()
            if scroll is not None:
                scroll.ensureWidgetVisible(target)

    def _scroll_area(self) -> QScrollArea | None:
        widget = self.parentWidget()
        while widget is not None and not isinstance(widget, QScrollArea):
            widget = widget.parentWidget()
        return widget

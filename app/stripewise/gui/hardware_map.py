"""The hardware map: PCI roots, controller boxes, and a tile per slot in physical port order
(the tiles themselves are `hardware_tile`'s)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from PySide6.QtCore import QEvent, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QContextMenuEvent,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QPalette,
)
from PySide6.QtWidgets import QFrame, QLabel, QMenu, QSizePolicy, QVBoxLayout, QWidget

from stripewise.gui.hardware_tile import SlotTile
from stripewise.gui.tile_grid import TileGrid
from stripewise.model.health import HealthVerdict
from stripewise.model.topology import Controller, Inventory, Slot, link_text
from stripewise.model.wording import count_noun


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


# what a controller's context menu offers besides Copy (the page's Measure Ceiling...)
ControllerMenuHook = Callable[[Controller, QMenu], None]


class ControllerBox(QFrame):
    def __init__(
        self,
        controller: Controller,
        parent: QWidget | None = None,
        menu_hook: ControllerMenuHook | None = None,
    ) -> None:
        super().__init__(parent)
        self.controller = controller
        self.menu_hook = menu_hook
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("controllerBox")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 10)
        layout.setSpacing(6)
        self.header = _Header(controller_header(controller), self.menu)
        layout.addWidget(self.header)
        self.tiles: list[SlotTile] = []
        tiles = QWidget()
        self.grid = TileGrid(tiles, spacing=6)
        for slot in controller.slots:
            tile = SlotTile(controller, slot)
            self.tiles.append(tile)
            self.grid.addWidget(tile)
        tiles.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        layout.addWidget(tiles)
        self.placeholder: QLabel | None = None
        if not controller.slots:  # a driver that names no ports (RAID cards, NVMe): say so
            self.placeholder = QLabel(NO_DISKS_TEXT)
            self.placeholder.setObjectName("noDisks")
            self.placeholder.setWordWrap(True)
            self.placeholder.setForegroundRole(QPalette.ColorRole.PlaceholderText)
            tiles.hide()
            layout.addWidget(self.placeholder)

    def menu(self) -> QMenu:
        """The card's context menu: its header's text to copy, then the page's actions."""
        menu = QMenu(self)
        menu.addAction("Copy", self.header.copy)
        if self.menu_hook is not None:
            self.menu_hook(self.controller, menu)
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        self.menu().exec(event.globalPos())


NO_DISKS_TEXT = "No disks attached. The driver does not list this controller's ports."


class _Header(QWidget):
    """A controller's header: its title in bold, its facts in small type below, each wrapped
    to the box's width. Painted by hand: a rich-text label laid its text out several times a
    layout pass (0.5 ms a box, 30 ms of CPU for the 60 boxes of a 480-disk map)."""

    def __init__(self, text: str, menu: Callable[[], QMenu]) -> None:
        super().__init__()
        self._text = text
        self._menu = menu  # its box's context menu
        self._title, _, self._facts = text.partition("\n")
        self._heights: dict[int, int] = {}
        self._fonts: tuple[QFont, QFont] | None = None  # bold, small: until a font change
        self.setAccessibleName(text.replace("\n", ": "))
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def text(self) -> str:
        """The title, and the facts on a line below it."""
        return self._text

    def _lines(self) -> tuple[tuple[QFont, str], tuple[QFont, str]]:
        if self._fonts is None:
            bold, small = QFont(self.font()), QFont(self.font())
            bold.setBold(True)
            small.setPointSizeF(small.pointSizeF() * _SMALL)
            self._fonts = (bold, small)
        return (self._fonts[0], self._title), (self._fonts[1], self._facts)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        if width not in self._heights:
            self._heights[width] = sum(
                _wrapped(font, text, width).height() for font, text in self._lines()
            )
        return self._heights[width]

    def sizeHint(self) -> QSize:
        width = max(QFontMetrics(font).horizontalAdvance(text) for font, text in self._lines())
        return QSize(width, self.heightForWidth(width))

    def minimumSizeHint(self) -> QSize:
        """As narrow as its longest word: the rest wraps."""
        width = max(
            QFontMetrics(font).horizontalAdvance(word)
            for font, text in self._lines()
            for word in text.split() or [""]
        )
        return QSize(width, self.heightForWidth(width))

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setPen(self.palette().color(QPalette.ColorRole.WindowText))
        top = 0
        for font, text in self._lines():
            painter.setFont(font)
            area = QRect(0, top, self.width(), self.height() - top)
            top += painter.drawText(area, _WRAP, text).height()

    def copy(self) -> None:
        """Its text to the clipboard: a painted header cannot be selected, so its context
        menu offers this (the PCI address or the model, for a ticket)."""
        QGuiApplication.clipboard().setText(self._text)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        self._menu().exec(event.globalPos())

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in _RELAYOUT:
            self._heights.clear()
            self._fonts = None
            self.updateGeometry()
        super().changeEvent(event)


def _wrapped(font: QFont, text: str, width: int) -> QRect:
    """The rectangle `text` takes wrapped at `width`, as `paintEvent` draws it."""
    return QFontMetrics(font).boundingRect(QRect(0, 0, max(1, width), 1 << 20), _WRAP, text)


_WRAP = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap
_SMALL = 0.85  # the facts' type, as the cards' small lines


_RELAYOUT = frozenset({QEvent.Type.FontChange, QEvent.Type.StyleChange})


def is_empty(controller: Controller) -> bool:
    """Nothing attached: no disk and no further path of a multipathed one."""
    return not any(slot.disk or slot.path_of for slot in controller.slots)


def controller_header(controller: Controller) -> str:
    """Its title, and on a line below the facts: id, driver, ports used, link."""
    title = controller.model or "Unknown controller"
    facts = [controller.id]
    if controller.driver:
        facts.append(controller.driver)
    if controller.port_count is not None:
        used = len(controller.disks)
        facts.append(f"{used} of {count_noun(controller.port_count, 'port')} used")
    elif controller.slots and is_empty(controller):  # with no slots, the box body says so
        facts.append("no disks attached")
    facts.append(link_text(controller))
    return f"{title}\n{' · '.join(facts)}"


class HardwareMap(QWidget):
    """Controllers grouped by PCI root; selection and search are reported, not handled here."""

    slotSelected = Signal(object, object)  # Controller, Slot

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._outer = QVBoxLayout(self)
        self._outer.setContentsMargins(0, 0, 0, 0)
        self._content: QWidget | None = None  # the map drawn: replaced whole by the next
        self.tiles: list[SlotTile] = []
        self.boxes: list[ControllerBox] = []
        self._selected_key: str | None = None
        self._planned: set[str] = set()
        self._health: dict[str, HealthVerdict] = {}  # disk name -> its verdict
        self._filtered = False  # a filter is typed: matching_tiles() has something to say
        self.controller_menu: ControllerMenuHook | None = None  # the page's, for each card

    def set_inventory(self, inventory: Inventory) -> None:
        """Builds the whole map out of sight and puts it in place at once: shown, polished
        and laid out in one pass, not once a card as each came into a map on screen."""
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(10)
        self.tiles, self.boxes = [], []
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
                box = ControllerBox(controller, menu_hook=self.controller_menu)
                for tile in box.tiles:
                    tile.clicked.connect(lambda slot, c=controller: self._select(c, slot))
                    tile.planned = (
                        tile.slot.disk is not None and tile.slot.disk.name in self._planned
                    )
                    tile.selected = tile.slot.key == self._selected_key
                    if tile.slot.disk is not None:  # a map read again keeps what was read
                        tile.set_health(self._health.get(tile.slot.disk.name))
                self.tiles.extend(box.tiles)
                self.boxes.append(box)
                layout.addWidget(box)
        layout.addStretch(1)
        # one width for every box's tiles: their columns line up down the map
        width = max((tile.sizeHint().width() for tile in self.tiles), default=0)
        for box in self.boxes:
            box.grid.tile_width = width
        if self._content is not None:
            self._outer.removeWidget(self._content)
            self._content.hide()
            self._content.deleteLater()
        self._content = content
        self._outer.addWidget(content)

    def _select(self, controller: Controller, slot: Slot) -> None:
        self._selected_key = slot.key
        for tile in self.tiles:
            selected = tile.slot.key == slot.key
            if selected != tile.selected:
                tile.selected = selected
                tile.update()
        self.slotSelected.emit(controller, slot)

    def select_key(self, key: str) -> bool:
        tile = next((t for t in self.tiles if t.slot.key == key), None)
        if tile is not None:
            self._select(tile.controller, tile.slot)
        return tile is not None

    def apply_filter(self, text: str) -> int:
        """Dims tiles that do not match; returns how many disks match."""
        needle = text.strip().lower()
        self._filtered = bool(needle)
        count = 0
        for tile in self.tiles:
            matches = slot_matches(tile.slot, needle)
            count += matches and tile.slot.disk is not None
            if matches != tile.matches:
                tile.matches = matches
                tile.update()
        return count

    def matching_tiles(self) -> list[SlotTile]:
        """The tiles a filter found, in map order (none without a filter); disks' first."""
        if not self._filtered:
            return []
        found = [tile for tile in self.tiles if tile.matches]
        return sorted(found, key=lambda tile: tile.slot.disk is None)  # stable: map order

    def select_next_match(self) -> SlotTile | None:
        """Selects the match after the selected one (the first when none is), as Enter in
        the filter asks; returns it."""
        found = self.matching_tiles()
        if not found:
            return None
        keys = [tile.slot.key for tile in found]
        after = keys.index(self._selected_key) + 1 if self._selected_key in keys else 0
        tile = found[after % len(found)]
        self._select(tile.controller, tile.slot)
        return tile

    def set_planned(self, disk_names: set[str]) -> None:
        """Disks the planner has put into a proposed array are drawn in the planned colour."""
        self._planned = set(disk_names)
        for tile in self.tiles:
            planned = tile.slot.disk is not None and tile.slot.disk.name in self._planned
            if planned != tile.planned:
                tile.planned = planned
                tile.update()

    def set_health(self, verdicts: Mapping[str, HealthVerdict]) -> None:
        """Each disk's SMART verdict by name: a failing or warned one's card shows a badge.
        Only the cards whose verdict changed are repainted."""
        self._health = dict(verdicts)
        for tile in self.tiles:
            if tile.slot.disk is not None:
                tile.set_health(self._health.get(tile.slot.disk.name))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Arrow keys walk the tiles in map order."""
        step = {
            Qt.Key.Key_Right: 1,
            Qt.Key.Key_Down: 1,
            Qt.Key.Key_Left: -1,
            Qt.Key.Key_Up: -1,
        }.get(Qt.Key(event.key()))
        focused = next((i for i, t in enumerate(self.tiles) if t.hasFocus()), None)
        if step is None or focused is None:
            super().keyPressEvent(event)
            return
        target = self.tiles[max(0, min(len(self.tiles) - 1, focused + step))]
        target.setFocus(Qt.FocusReason.OtherFocusReason)

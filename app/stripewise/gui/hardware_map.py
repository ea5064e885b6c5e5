"""The hardware map: PCI roots, controller boxes, and a tile per slot in physical port order."""

from __future__ import annotations

from PySide6.QtCore import QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFocusEvent,
    QFont,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import QFrame, QLabel, QSizePolicy, QVBoxLayout, QWidget

from stripewise.gui.disk_colors import PLANNED, STATE_COLORS
from stripewise.gui.flow_layout import FlowLayout
from stripewise.model.topology import Controller, Inventory, Slot, link_text
from stripewise.model.units import human_size
from stripewise.model.wording import count_noun

TILE_SIZE = QSize(120, 64)


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


class SlotTile(QWidget):
    """One port or bay. Painted by hand: 48 of these must draw in a few milliseconds."""

    clicked = Signal(object)  # Slot

    def __init__(self, controller: Controller, slot: Slot, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.slot = slot
        self.selected = False
        self.matches = True
        self.planned = False
        self.setFixedSize(TILE_SIZE)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        disk = slot.disk
        self.setAccessibleName(
            f"{slot.title}: {disk.name} {human_size(disk.size_bytes)} {disk.state.value}"
            if disk
            else f"{slot.title}: {slot.note or 'empty'}"
        )
        self.setToolTip(self._tooltip())

    def _tooltip(self) -> str:
        disk = self.slot.disk
        if disk is None:
            return f"{self.slot.title} ({self.slot.port}): {self.slot.note or 'empty'}"
        lines = [
            f"{disk.name} in {self.slot.title} ({self.slot.port})",
            f"{disk.model or 'model unknown'}, {human_size(disk.size_bytes)}",
            f"serial {disk.serial or 'unknown'}",
        ]
        lines += list(disk.system_reasons)
        return "\n".join(lines)

    @property
    def state_key(self) -> str | None:
        if self.slot.disk is None:
            return None
        return PLANNED if self.planned else self.slot.disk.state.value

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if not self.matches:
            painter.setOpacity(0.28)
        palette = self.palette()
        box = QRectF(self.rect()).adjusted(1.5, 1.5, -1.5, -1.5)
        disk = self.slot.disk
        border = palette.color(QPalette.ColorRole.Mid)
        if disk is None:
            dashes = palette.color(QPalette.ColorRole.PlaceholderText)
            painter.setPen(QPen(dashes, 1.2, Qt.PenStyle.DashLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(box, 6, 6)
            self._text(painter, QRect(10, 6, self.width() - 14, 16), self.slot.title, small=True)
            self._text(
                painter,
                QRect(10, 26, self.width() - 14, 34),
                self.slot.note or "empty",
                dim=True,
                small=bool(self.slot.note),
            )
        else:
            painter.setPen(QPen(border, 1))
            painter.setBrush(palette.color(QPalette.ColorRole.Base))
            painter.drawRoundedRect(box, 6, 6)
            colour = STATE_COLORS.get(self.state_key or "", QColor("gray"))
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawRoundedRect(QRectF(box.x(), box.y(), 7, box.height()), 3, 3)
            width = self.width() - 18
            self._text(painter, QRect(13, 4, width, 15), self.slot.title, small=True)
            self._text(painter, QRect(13, 19, width, 18), disk.name, bold=True)
            size = human_size(disk.size_bytes).replace("size unknown", "size ?")
            self._text(
                painter,
                QRect(13, 40, width, 18),
                f"{size} · {disk.model or 'model unknown'}",
                small=True,
            )
        if self.selected or self.hasFocus():
            pen = QPen(palette.color(QPalette.ColorRole.Highlight), 2.5 if self.selected else 1.5)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(box.adjusted(0.5, 0.5, -0.5, -0.5), 6, 6)
        painter.end()

    def _text(
        self,
        painter: QPainter,
        rect: QRect,
        text: str,
        *,
        bold: bool = False,
        small: bool = False,
        dim: bool = False,
        right: bool = False,
    ) -> int:
        """Draws `text` elided to `rect`; returns the width it took."""
        font = QFont(self.font())
        if small:
            font.setPointSizeF(font.pointSizeF() * 0.85)
        font.setBold(bold)
        painter.setFont(font)
        role = QPalette.ColorRole.PlaceholderText if (dim or small) else QPalette.ColorRole.Text
        painter.setPen(self.palette().color(role))
        elided = painter.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, rect.width())
        align = Qt.AlignmentFlag.AlignRight if right else Qt.AlignmentFlag.AlignLeft
        painter.drawText(rect, int(align | Qt.AlignmentFlag.AlignVCenter), elided)
        return painter.fontMetrics().horizontalAdvance(elided)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.setFocus(Qt.FocusReason.MouseFocusReason)
            self.clicked.emit(self.slot)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.clicked.emit(self.slot)
        else:
            super().keyPressEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:
        self.update()
        super().focusInEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        self.update()
        super().focusOutEvent(event)


class ControllerBox(QFrame):
    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("controllerBox")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 10)
        layout.setSpacing(6)
        header = QLabel(controller_header(controller))
        header.setTextFormat(Qt.TextFormat.RichText)
        header.setWordWrap(True)
        header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(header)
        self.tiles: list[SlotTile] = []
        tiles = QWidget()
        flow = FlowLayout(tiles, spacing=6)
        for slot in controller.slots:
            tile = SlotTile(controller, slot)
            self.tiles.append(tile)
            flow.addWidget(tile)
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


NO_DISKS_TEXT = "No disks attached. The driver does not list this controller's ports."


def is_empty(controller: Controller) -> bool:
    """Nothing attached: no disk and no further path of a multipathed one."""
    return not any(slot.disk or slot.path_of for slot in controller.slots)


def controller_header(controller: Controller) -> str:
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
    return f"<b>{title}</b><br><span style='font-size:small'>{' · '.join(facts)}</span>"


class HardwareMap(QWidget):
    """Controllers grouped by PCI root; selection and search are reported, not handled here."""

    slotSelected = Signal(object, object)  # Controller, Slot

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(10)
        self.tiles: list[SlotTile] = []
        self.boxes: list[ControllerBox] = []
        self._selected_key: str | None = None
        self._planned: set[str] = set()

    def set_inventory(self, inventory: Inventory) -> None:
        while (item := self._layout.takeAt(0)) is not None:
            if item.widget() is not None:
                item.widget().deleteLater()
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
            self._layout.addWidget(title)
            for controller in controllers:
                box = ControllerBox(controller)
                for tile in box.tiles:
                    tile.clicked.connect(lambda slot, c=controller: self._select(c, slot))
                    tile.planned = (
                        tile.slot.disk is not None and tile.slot.disk.name in self._planned
                    )
                    tile.selected = tile.slot.key == self._selected_key
                self.tiles.extend(box.tiles)
                self.boxes.append(box)
                self._layout.addWidget(box)
        self._layout.addStretch(1)

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
        count = 0
        for tile in self.tiles:
            matches = slot_matches(tile.slot, needle)
            count += matches and tile.slot.disk is not None
            if matches != tile.matches:
                tile.matches = matches
                tile.update()
        return count

    def set_planned(self, disk_names: set[str]) -> None:
        """Disks the planner has put into a proposed array are drawn in the planned colour."""
        self._planned = set(disk_names)
        for tile in self.tiles:
            planned = tile.slot.disk is not None and tile.slot.disk.name in self._planned
            if planned != tile.planned:
                tile.planned = planned
                tile.update()

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

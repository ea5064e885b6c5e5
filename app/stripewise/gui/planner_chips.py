"""Disk chips for the planner: selectable, draggable between the pool and array cards. A disk
of this machine whose SMART health fails or warns carries the Hardware page's badge (FAILING,
WARN) in its bottom right corner, its reasons in the tooltip (docs/health.md)."""

from __future__ import annotations

import json

from PySide6.QtCore import QMimeData, QPoint, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QDrag,
    QDragEnterEvent,
    QDropEvent,
    QFont,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import QApplication, QWidget

from stripewise.gui.disk_colors import PLANNED, STATE_COLORS
from stripewise.gui.hardware_tile import draw_badge, health_badge
from stripewise.model.health import HealthVerdict
from stripewise.model.plan import PlanDisk
from stripewise.planner.from_inventory import BAY_PREFIX
from stripewise.planner.sizes import size_text

DISK_MIME = "application/x-stripewise-disks"
CHIP_SIZE = QSize(112, 52)


def disks_mime(disk_ids: list[str]) -> QMimeData:
    mime = QMimeData()
    mime.setData(DISK_MIME, json.dumps(disk_ids).encode())
    mime.setText(" ".join(disk_ids))
    return mime


def disks_from_mime(mime: QMimeData) -> tuple[str, ...]:
    if not mime.hasFormat(DISK_MIME):
        return ()
    try:
        value = json.loads(bytes(mime.data(DISK_MIME).data()))
    except (ValueError, UnicodeDecodeError):
        return ()
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def accept_disks(event: QDragEnterEvent) -> bool:
    """A drag of planner disks may land here; anything else is ignored."""
    if disks_from_mime(event.mimeData()):
        event.acceptProposedAction()
        return True
    return False


def take_disks(event: QDropEvent) -> tuple[str, ...]:
    """The disks of a drop, accepted; empty for a drop of something else."""
    ids = disks_from_mime(event.mimeData())
    if ids:
        event.acceptProposedAction()
    return ids


def chip_title(disk: PlanDisk) -> str:
    """ "bay 2-03 (sdk)" for a disk in a mapped bay, its id otherwise."""
    if disk.slot and disk.slot.startswith(BAY_PREFIX):
        return f"{disk.slot} ({disk.id})"
    return disk.id


class DiskChip(QWidget):
    """One disk. Click selects, Ctrl-click adds, Shift-click extends; drag carries the selection."""

    pressed = Signal(object, object)  # DiskChip, Qt.KeyboardModifier
    dragRequested = Signal(object)  # DiskChip

    def __init__(self, disk: PlanDisk, array: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.disk = disk
        self.array = array
        self.selected = False
        self.highlighted = False  # would improve the spread of the array being dragged onto
        self._press: QPoint | None = None
        self.health: HealthVerdict | None = None  # this machine's disk's SMART verdict
        self.setFixedSize(CHIP_SIZE)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._describe()

    def set_health(self, health: HealthVerdict | None) -> None:
        if health != self.health:
            self.health = health
            self._describe()
            self.update()

    @property
    def badge(self) -> tuple[str, QColor] | None:
        """The health badge as drawn (FAILING, WARN), None when the disk shows none."""
        return health_badge(self.health)

    def _describe(self) -> None:
        disk, badge = self.disk, self.badge
        health = f", health {badge[0].lower()}" if badge else ""
        self.setAccessibleName(f"{disk.id} {size_text(disk)}{health}")
        where = f" in {self.array}" if self.array else ""
        reasons = self.health.reasons if badge and self.health else ()
        self.setToolTip(
            f"{disk.id}{where}: {disk.model or 'model unknown'}, {size_text(disk)}"
            + (f", {disk.seq_read_mb_s:g} MB/s read (outer)" if disk.seq_read_mb_s else "")
            + (f"\n{disk.slot}" if disk.slot else "")
            + ("" if disk.usable else f"\nnot free: {disk.state.replace('_', ' ')}")
            + (f"\nhealth {badge[0].lower()}: {'; '.join(reasons)}" if badge else "")
        )

    @property
    def draggable(self) -> bool:
        return self.disk.usable

    def colour(self) -> QColor:
        key = PLANNED if self.array else self.disk.state
        return STATE_COLORS.get(key, STATE_COLORS["unknown"])

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        box = QRectF(self.rect()).adjusted(1.5, 1.5, -1.5, -1.5)
        if not self.draggable:
            painter.setOpacity(0.55)
        base = palette.color(QPalette.ColorRole.Base)
        if self.highlighted:
            base = (
                QColor(STATE_COLORS[PLANNED]).lighter(185)
                if base.lightness() > 128
                else (QColor(STATE_COLORS[PLANNED]).darker(220))
            )
        painter.setPen(QPen(palette.color(QPalette.ColorRole.Mid), 1))
        painter.setBrush(base)
        painter.drawRoundedRect(box, 5, 5)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.colour())
        painter.drawRoundedRect(QRectF(box.x(), box.y(), 6, box.height()), 3, 3)
        self._text(painter, QRect(11, 3, self.width() - 15, 18), chip_title(self.disk), bold=True)
        detail = size_text(self.disk)  # "size unknown" for a disk of a udev dump, never "0 B"
        if self.disk.hypothetical:
            detail += " · to buy"
        self._text(painter, QRect(11, 20, self.width() - 15, 14), detail, small=True)
        badge = self._paint_badge(painter)
        self._text(
            painter,
            QRect(11, 34, self.width() - 15 - badge, 14),
            self.disk.model or "model unknown",
            small=True,
        )
        if self.selected or self.hasFocus():
            painter.setOpacity(1.0)
            painter.setPen(
                QPen(palette.color(QPalette.ColorRole.Highlight), 2.5 if self.selected else 1.2)
            )
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(box, 5, 5)
        painter.end()

    def _paint_badge(self, painter: QPainter) -> int:
        """The health badge in the bottom right corner; -> the width it takes from the line."""
        badge = self.badge
        if badge is None:
            return 0
        word, colour = badge
        font = QFont(self.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 0.72)
        painter.setFont(font)
        width = painter.fontMetrics().horizontalAdvance(word) + 8
        draw_badge(painter, QRectF(self.width() - width - 5, 35, width, 13), word, colour, font)
        return width + 4

    def _text(
        self, painter: QPainter, rect: QRect, text: str, *, bold: bool = False, small: bool = False
    ) -> None:
        font = QFont(self.font())
        font.setBold(bold)
        if small:
            font.setPointSizeF(font.pointSizeF() * 0.82)
        painter.setFont(font)
        role = QPalette.ColorRole.PlaceholderText if small else QPalette.ColorRole.Text
        painter.setPen(self.palette().color(role))
        elided = painter.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, rect.width())
        painter.drawText(
            rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), elided
        )

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._press = event.position().toPoint()
            self.setFocus(Qt.FocusReason.MouseFocusReason)
            self.pressed.emit(self, event.modifiers())

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._press is None or not self.draggable:
            return
        moved = (event.position().toPoint() - self._press).manhattanLength()
        if moved >= QApplication.startDragDistance():
            self._press = None
            self.dragRequested.emit(self)

    def mouseReleaseEvent(self, _event: QMouseEvent) -> None:
        self._press = None


def start_drag(source: QWidget, disk_ids: list[str]) -> Qt.DropAction:
    drag = QDrag(source)
    drag.setMimeData(disks_mime(disk_ids))
    pixmap = source.grab()
    drag.setPixmap(pixmap)
    drag.setHotSpot(QPoint(pixmap.width() // 2, pixmap.height() // 2))
    return drag.exec(Qt.DropAction.MoveAction)

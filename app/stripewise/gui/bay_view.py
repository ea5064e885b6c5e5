"""The chassis as it looks: each panel's bays in rows and columns, painted in one widget.

A bay with a disk shows its label, the disk's name, size and model, a stripe in the map's
state colour (system, array member, in use, free) and the health badge of the map's cards; a
bay mapped to a port with no disk now is dashed and says empty; a bay not mapped yet is grey
with a question mark. One widget paints all bays (48 or 480), so drawing costs no widgets.
Click a bay: `bayClicked`; drop a disk (dragged from the list of unplaced disks, or from
another bay): `portDropped`.
"""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import QEvent, QMimeData, QPoint, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QDrag,
    QDragEnterEvent,
    QDropEvent,
    QFont,
    QFontMetrics,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import QMenu, QScrollArea, QSizePolicy, QToolTip, QWidget

from stripewise.gui.disk_colors import STATE_COLORS
from stripewise.gui.hardware_tile import draw_badge, health_badge
from stripewise.model.bay_map import PlacedBay, port_of
from stripewise.model.chassis import ChassisLayout, Face
from stripewise.model.health import HealthVerdict
from stripewise.model.units import human_size

PORT_MIME = "application/x-stripewise-port"  # a disk's by-path name, dragged onto a bay
BAY_MIN_WIDTH, BAY_HEIGHT, GAP, TITLE_HEIGHT = 40, 70, 4, 22  # 12 across at 800 px
PREVIEW_MIN_WIDTH, PREVIEW_HEIGHT = 36, 30  # the layout editor's bays: their labels only
LEFT_MIDDLE = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
WHOLE = LEFT_MIDDLE | int(Qt.TextFlag.TextDontClip)  # a disk's name: never cut


class _Line(NamedTuple):
    text: str
    font: QFont
    metrics: QFontMetrics
    colour: QColor
    whole: bool = False  # holds the disk's name: drawn whole, never elided


def _shown(line: _Line, room: int) -> str:
    if line.whole:
        return line.text
    return line.metrics.elidedText(line.text, Qt.TextElideMode.ElideRight, room)


class _Kit:
    """Fonts, their metrics and the palette's pens, made once a paint, not once a bay."""

    def __init__(self, font: QFont, palette: QPalette) -> None:
        self.normal, self.bold, self.small = QFont(font), QFont(font), QFont(font)
        self.bold.setBold(True)
        self.small.setPointSizeF(font.pointSizeF() * 0.85)
        self.badge = QFont(self.small)
        self.badge.setBold(True)
        self.tiny = QFont(self.bold)
        self.tiny.setPointSizeF(font.pointSizeF() * 0.7)
        self.metrics, self.bold_metrics = QFontMetrics(self.normal), QFontMetrics(self.bold)
        self.small_metrics, self.badge_metrics = QFontMetrics(self.small), QFontMetrics(self.badge)
        self.tiny_metrics = QFontMetrics(self.tiny)
        role = QPalette.ColorRole
        self.text, self.dim = palette.color(role.Text), palette.color(role.PlaceholderText)
        self.base, self.unmapped = palette.color(role.Base), palette.color(role.AlternateBase)
        self.border = QPen(palette.color(role.Mid), 1)
        self.dashes = QPen(self.dim, 1.2, Qt.PenStyle.DashLine)
        self.highlight = QPen(palette.color(role.Highlight), 2.5)

    def fitting(self, text: str, room: int) -> _Line:
        """A name (a bay's label, a disk's) whole, in the largest bold font it fits."""
        fonts = ((self.bold, self.bold_metrics), (self.badge, self.badge_metrics))
        font, metrics = next(
            ((f, m) for f, m in fonts if m.horizontalAdvance(text) < room),
            (self.tiny, self.tiny_metrics),
        )
        return _Line(text, font, metrics, self.text, whole=True)


class BayView(QWidget):
    bayClicked = Signal(str)  # bay label
    portDropped = Signal(str, str)  # bay label, by-path name
    bayCleared = Signal(str)  # bay label: its port unmapped

    def __init__(self, parent: QWidget | None = None, *, preview: bool = False) -> None:
        super().__init__(parent)
        self.preview = preview  # labels only, smaller: a layout being drawn has no disks
        self.min_width = PREVIEW_MIN_WIDTH if preview else BAY_MIN_WIDTH
        self.bay_height = PREVIEW_HEIGHT if preview else BAY_HEIGHT
        self.layout_: ChassisLayout | None = None
        self.placed: list[PlacedBay] = []
        self.health: dict[str, HealthVerdict] = {}
        self.selected: str | None = None
        self.lit: str | None = None  # the bay whose disk's LED is lit in a walk (not known yet)
        self._press: QPoint | None = None
        self.setAcceptDrops(True)
        self.setMouseTracking(False)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.setAccessibleName("Bays of the chassis")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # arrows choose a bay, Enter clicks it

    def set_bays(
        self,
        layout: ChassisLayout | None,
        placed: list[PlacedBay],
        health: dict[str, HealthVerdict] | None = None,
    ) -> None:
        self.layout_, self.placed = layout, placed
        if health is not None:
            self.health = health
        self.updateGeometry()
        self.update()

    def set_health(self, health: dict[str, HealthVerdict]) -> None:
        self.health = health
        self.update()

    # --- geometry --------------------------------------------------------------------------
    def _bay_width(self, width: int) -> int:
        if self.layout_ is None:
            return self.min_width
        columns = max(p.columns for p in self.layout_.panels)
        return max(self.min_width, (width - GAP * (columns - 1)) // columns)

    def _panel_tops(self) -> list[int]:
        tops, y = [], 0
        for panel in self.layout_.panels if self.layout_ else ():
            tops.append(y)
            y += TITLE_HEIGHT + panel.rows * (self.bay_height + GAP) + GAP * 2
        tops.append(y)
        return tops

    def heightForWidth(self, _width: int) -> int:
        return max(self._panel_tops()[-1], self.bay_height)

    def hasHeightForWidth(self) -> bool:
        return True

    def sizeHint(self) -> QSize:
        columns = max((p.columns for p in self.layout_.panels), default=1) if self.layout_ else 1
        return QSize(columns * (self.min_width + GAP), self.heightForWidth(0))

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def bay_rect(self, placed: PlacedBay) -> QRect:
        return self._rect(placed, self._panel_tops(), self._bay_width(self.width()))

    def bay_at(self, point: QPoint) -> PlacedBay | None:
        return next((p for p in self.placed if self.bay_rect(p).contains(point)), None)

    # --- painting --------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        if self.layout_ is None:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        kit = _Kit(self.font(), self.palette())
        tops = self._panel_tops()
        painter.setFont(kit.bold)
        painter.setPen(kit.text)
        for index, panel in enumerate(self.layout_.panels):
            title = f"{panel.face.value.capitalize()} ({panel.rows} x {panel.columns})"
            if panel.face is Face.TOP:
                title += ", seen from above with the front at the bottom"
            painter.drawText(QRect(0, tops[index], self.width(), TITLE_HEIGHT), LEFT_MIDDLE, title)
        width = self._bay_width(self.width())
        exposed = event.rect()
        for placed in self.placed:
            rect = self._rect(placed, tops, width)
            if rect.intersects(exposed):  # scrolled out of sight: not painted
                self._paint_bay(painter, kit, placed, rect)
        painter.end()

    def _rect(self, placed: PlacedBay, tops: list[int], width: int) -> QRect:
        top = tops[placed.bay.panel] + TITLE_HEIGHT + placed.bay.row * (self.bay_height + GAP)
        return QRect(placed.bay.column * (width + GAP), top, width, self.bay_height)

    def _paint_bay(self, painter: QPainter, kit: _Kit, placed: PlacedBay, rect: QRect) -> None:
        box = QRectF(rect).adjusted(1, 1, -1, -1)
        disk, label = placed.disk, placed.bay.label
        room = rect.width() - 7
        if disk is None:
            painter.setPen(kit.dashes if placed.port else kit.border)
            painter.setBrush(Qt.BrushStyle.NoBrush if placed.port else kit.unmapped)
            painter.drawRoundedRect(box, 5, 5)
        else:
            painter.setPen(kit.border)
            painter.setBrush(kit.base)
            painter.drawRoundedRect(box, 5, 5)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(STATE_COLORS.get(disk.state.value, QColor("gray")))
            painter.drawRoundedRect(QRectF(box.x(), box.y(), box.width(), 6), 3, 3)
        y = rect.y() + 8
        for line in self._lines(kit, placed, room):
            painter.setFont(line.font)
            painter.setPen(line.colour)
            # a name wider than the room overflows it (TextDontClip) rather than lose letters
            width = max(room, line.metrics.horizontalAdvance(line.text) + 2) if line.whole else room
            text_rect = QRect(rect.x() + 4, y, width, line.metrics.height())
            painter.drawText(text_rect, WHOLE if line.whole else LEFT_MIDDLE, _shown(line, room))
            y += line.metrics.height() + 1
        shown = health_badge(self.health.get(disk.name)) if disk is not None else None
        if shown is not None:
            word, colour = shown
            width = kit.badge_metrics.horizontalAdvance(word) + 8
            badge = QRectF(rect.right() - width - 3, rect.bottom() - 17, width, 14)
            draw_badge(painter, badge, word, colour, kit.badge)
        if label in (self.selected, self.lit):
            painter.setPen(kit.highlight)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(box, 5, 5)

    def _lines(self, kit: _Kit, placed: PlacedBay, room: int) -> list[_Line]:
        """A bay's text, top down. The kernel name is the disk's identity: an elided `sda…`
        for sdam reads as sda, the disk in another bay (and `rear …` names no bay). So the
        size and model are cut first, then the name's and label's font shrinks; what still
        does not fit is drawn whole."""
        disk, label = placed.disk, placed.bay.label
        lines = [kit.fitting(label, room)]
        if disk is None:
            if not self.preview:
                lines.append(
                    _Line("empty" if placed.port else "?", kit.small, kit.small_metrics, kit.dim)
                )
            return lines
        one_line = f"{label}  {disk.name}"
        if kit.bold_metrics.horizontalAdvance(one_line) < room:  # <: a rounding pixel to spare
            lines = [_Line(one_line, kit.bold, kit.bold_metrics, kit.text, whole=True)]
        else:  # a narrow bay: the label above the name
            lines.append(kit.fitting(disk.name, room))
        size = human_size(disk.size_bytes)
        whole, unit = size.split()[0].split(".")[0], size.split()[-1]
        for shorter in (f"{whole} {unit}", f"{whole}{unit[0]}"):  # 500 GB, then 500G
            if disk.size_bytes is not None and kit.metrics.horizontalAdvance(size) > room:
                size = shorter
        lines.append(_Line(size, kit.normal, kit.metrics, kit.text))
        model = disk.model or "model unknown"
        lines.append(_Line(model, kit.small, kit.small_metrics, kit.dim))
        return lines

    def shown_lines(self, placed: PlacedBay) -> list[str]:
        """A bay's lines as painted at the view's width (elided where they may be)."""
        kit = _Kit(self.font(), self.palette())
        room = self._bay_width(self.width()) - 7
        return [_shown(line, room) for line in self._lines(kit, placed, room)]

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            placed = self.bay_at(event.pos())
            text = self.describe(placed) if placed is not None else ""
            QToolTip.showText(event.globalPos(), text, self) if text else QToolTip.hideText()
            return True
        return super().event(event)

    def describe(self, placed: PlacedBay) -> str:
        """A bay's tooltip: its disk, and the port it is mapped to."""
        disk, label = placed.disk, placed.bay.label
        if placed.port is None:
            return f"Bay {label}: not mapped yet (walk, drag a disk here, or map from SES)"
        if disk is None:
            return f"Bay {label}: empty\nport {placed.port}"
        lines = [
            f"Bay {label}: {disk.name}, {human_size(disk.size_bytes)}",
            f"{disk.model or 'model unknown'}, s/n {disk.serial or 'unknown'}",
            f"{disk.state.value.replace('_', ' ')}, port {placed.port}",
        ]
        verdict = self.health.get(disk.name)
        if verdict is not None and verdict.reasons:
            lines.append(f"health {verdict.level}: {'; '.join(verdict.reasons)}")
        return "\n".join(lines)

    # --- clicks and drags ------------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:
        placed = self.bay_at(event.position().toPoint())
        if placed is None or event.button() != Qt.MouseButton.LeftButton:
            return
        self._press = event.position().toPoint()
        self.selected = placed.bay.label
        self.update()
        self.bayClicked.emit(placed.bay.label)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        placed = self.bay_at(event.pos())
        if placed is None or placed.port is None:
            return
        menu = QMenu(self)
        clear = menu.addAction(f"Clear Bay {placed.bay.label}")
        clear.setToolTip("Forget which port this bay holds (an SES slot maps it again)")
        if menu.exec(event.globalPos()) is clear:
            self.bayCleared.emit(placed.bay.label)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = Qt.Key(event.key())
        current = next((p for p in self.placed if p.bay.label == self.selected), None)
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space) and current:
            self.bayClicked.emit(current.bay.label)
        elif key in MOVES and self.placed and self.layout_ is not None:
            if current is None:
                target = self.placed[0]
            else:
                shape = [(p.rows, p.columns) for p in self.layout_.panels]
                at = (current.bay.panel, current.bay.row, current.bay.column)
                ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
                where = moved(shape, at, key, ctrl)
                spot = {(p.bay.panel, p.bay.row, p.bay.column): p for p in self.placed}
                target = spot.get(where, current)
            self.selected = target.bay.label
            self._reveal(target)
            self.update()
        else:
            super().keyPressEvent(event)

    def _reveal(self, placed: PlacedBay) -> None:
        """The chosen bay scrolled into sight (a rear panel sits below the fold at 800 px)."""
        area = self.parentWidget()
        while area is not None and not isinstance(area, QScrollArea):
            area = area.parentWidget()
        if area is not None and area.widget() is self:
            rect = self.bay_rect(placed)
            area.ensureVisible(rect.center().x(), rect.center().y(), rect.width(), rect.height())

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        """A bay's disk dragged to another bay moves it there."""
        start, self._press = self._press, None
        placed = self.bay_at(start) if start is not None else None
        if placed is None or placed.disk is None or port_of(placed.disk) is None:
            return
        drag = QDrag(self)
        data = QMimeData()
        data.setData(PORT_MIME, (port_of(placed.disk) or "").encode())
        data.setText(placed.disk.name)
        drag.setMimeData(data)
        drag.exec(Qt.DropAction.MoveAction)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasFormat(PORT_MIME):
            event.acceptProposedAction()

    def dragMoveEvent(self, event: QDragEnterEvent) -> None:  # type: ignore[override]
        if self.bay_at(event.position().toPoint()) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        placed = self.bay_at(event.position().toPoint())
        port = bytes(event.mimeData().data(PORT_MIME).data()).decode()
        if placed is None or not port:
            return
        event.acceptProposedAction()
        self.portDropped.emit(placed.bay.label, port)


MOVES = (
    Qt.Key.Key_Left,
    Qt.Key.Key_Right,
    Qt.Key.Key_Up,
    Qt.Key.Key_Down,
    Qt.Key.Key_Home,
    Qt.Key.Key_End,
    Qt.Key.Key_PageUp,
    Qt.Key.Key_PageDown,
)


def moved(
    shape: list[tuple[int, int]], at: tuple[int, int, int], key: Qt.Key, ctrl: bool = False
) -> tuple[int, int, int]:
    """Where a key moves the choice among panels of (rows, columns), drawn one under another:
    (panel, row, column). Up and Down pass a panel's edge to the panel above or below, in the
    same column (or its last); Left and Right run on in reading order, to the next row and
    panel; Home and End: the row's ends (with Ctrl: the chassis's); Page Up and Page Down: the
    same place a panel up or down."""
    panel, row, column = at
    rows, columns = shape[panel]
    last = len(shape) - 1

    def put(to: int, row: int, column: int) -> tuple[int, int, int]:
        return to, min(row, shape[to][0] - 1), min(column, shape[to][1] - 1)

    if key == Qt.Key.Key_Right:
        if column + 1 < columns:
            return panel, row, column + 1
        if row + 1 < rows:
            return panel, row + 1, 0
        return (panel + 1, 0, 0) if panel < last else at
    if key == Qt.Key.Key_Left:
        if column > 0:
            return panel, row, column - 1
        if row > 0:
            return panel, row - 1, columns - 1
        return put(panel - 1, shape[panel - 1][0] - 1, shape[panel - 1][1] - 1) if panel else at
    if key == Qt.Key.Key_Down:
        if row + 1 < rows:
            return panel, row + 1, column
        return put(panel + 1, 0, column) if panel < last else at
    if key == Qt.Key.Key_Up:
        if row > 0:
            return panel, row - 1, column
        return put(panel - 1, shape[panel - 1][0] - 1, column) if panel else at
    if key == Qt.Key.Key_Home:
        return (0, 0, 0) if ctrl else (panel, row, 0)
    if key == Qt.Key.Key_End:
        return (
            put(last, shape[last][0] - 1, shape[last][1] - 1) if ctrl else (panel, row, columns - 1)
        )
    if key == Qt.Key.Key_PageDown:
        return put(panel + 1, row, column) if panel < last else put(panel, rows - 1, column)
    if key == Qt.Key.Key_PageUp:
        return put(panel - 1, row, column) if panel else (panel, 0, column)
    return at

"""A controller's card on the hardware map: its header (model, id, driver, ports used, link)
and a tile per slot, built when the card comes into view."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QRect, QSize, Qt, QTimer
from PySide6.QtGui import (
    QContextMenuEvent,
    QFocusEvent,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QPainter,
    QPaintEvent,
    QPalette,
)
from PySide6.QtWidgets import QFrame, QLabel, QMenu, QSizePolicy, QVBoxLayout, QWidget

from stripewise.gui.hardware_tile import TILE_MIN_WIDTH, TILE_SIZE, SlotTile, card_width
from stripewise.gui.tile_grid import TileGrid
from stripewise.model.topology import Controller, link_text
from stripewise.model.wording import count_noun

# what a controller's context menu offers besides Copy (the page's Measure Ceiling...)
ControllerMenuHook = Callable[[Controller, QMenu], None]


class ControllerBox(QFrame):
    """A controller's card: its header, and a tile per slot in port order.

    The tiles are built when the box first comes into view, or when something asks for them
    (`tiles`): a 480-disk map shows some 80 of its cards on its first screen, and each card is
    a widget Qt must create, polish and lay out. Until then the box takes the place its tiles
    will take (`TileGrid.promise`), so the map's length and scroll bar are right from the
    start."""

    def __init__(
        self,
        controller: Controller,
        parent: QWidget | None = None,
        menu_hook: ControllerMenuHook | None = None,
        tile_width: int | None = None,
        on_built: Callable[[ControllerBox, list[SlotTile]], None] | None = None,
        on_exposed: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.controller = controller
        self.menu_hook = menu_hook
        self._on_built = on_built  # the map's: its selection, filter and verdicts on them
        self._on_exposed = on_exposed  # the map's: it decides what is in view
        self._tiles: list[SlotTile] | None = None
        self._build_queued = False
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("controllerBox")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 10)
        layout.setSpacing(6)
        self.header = _Header(controller_header(controller), self.menu)
        layout.addWidget(self.header)
        self._area = QWidget()
        self.grid = TileGrid(self._area, spacing=6)
        if tile_width is None:
            tile_width = max((card_width(self.font(), s) for s in controller.slots), default=0)
        self.grid.tile_width = tile_width
        self.grid.promise(len(controller.slots), TILE_MIN_WIDTH, TILE_SIZE.height())
        self._area.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        if controller.slots:  # Tab stops here while its cards are unbuilt, and is handed on
            self._area.setFocusPolicy(Qt.FocusPolicy.TabFocus)
            self._area.setAccessibleName(self.header.accessibleName())
            self._area.installEventFilter(self)
        layout.addWidget(self._area)
        self.placeholder: QLabel | None = None
        if not controller.slots:  # a driver that names no ports (RAID cards, NVMe): say so
            self.placeholder = QLabel(NO_DISKS_TEXT)
            self.placeholder.setObjectName("noDisks")
            self.placeholder.setWordWrap(True)
            self.placeholder.setForegroundRole(QPalette.ColorRole.PlaceholderText)
            self._area.hide()
            layout.addWidget(self.placeholder)

    @property
    def tiles_area(self) -> QWidget:
        """The widget its cards sit in: Tab's stop while they are unbuilt."""
        return self._area

    @property
    def built(self) -> bool:
        """Its tiles exist (it has been in view, or they were asked for)."""
        return self._tiles is not None

    @property
    def tiles(self) -> list[SlotTile]:
        """Its tiles in port order, built now if they were not yet."""
        if self._tiles is None:
            self._tiles = self._build()
        return self._tiles

    def _build(self) -> list[SlotTile]:
        on_screen = self._area.isVisible()
        # shown once with all its tiles, not a layout pass up the map a tile; unless it has
        # the focus, which a hidden widget would hand on to whatever comes next
        hide = on_screen and not self._area.hasFocus()
        if hide:
            self._area.hide()
        tiles = [SlotTile(self.controller, slot, self._area) for slot in self.controller.slots]
        if self._on_built is not None:
            self._on_built(self, tiles)
        for tile in tiles:
            self.grid.addWidget(tile)
        _chain_after(self._area, tiles)
        self._area.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # its cards take it from here
        if hide:
            self._area.show()
        elif on_screen:
            for tile in tiles:
                tile.show()
            self.grid.setGeometry(self.grid.geometry())  # placed before the next paint
        return tiles

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Tab into a box whose cards are unbuilt: built, and its first card (its last, for
        Shift+Tab) given the focus, as if they had been there all along."""
        if watched is self._area and event.type() == QEvent.Type.FocusIn and self.controller.slots:
            reason = Qt.FocusReason.OtherFocusReason
            if isinstance(event, QFocusEvent):
                reason = event.reason()
            tiles = self.tiles
            backwards = reason == Qt.FocusReason.BacktabFocusReason
            (tiles[-1] if backwards else tiles[0]).setFocus(reason)
        return False

    def paintEvent(self, event: QPaintEvent) -> None:
        """Painted with its tiles unbuilt: in view by a way the map did not foresee. Its map
        looks again on the next turn of the event loop (alone, the box builds them)."""
        super().paintEvent(event)
        if self._tiles is None and self.controller.slots and not self._build_queued:
            self._build_queued = True
            QTimer.singleShot(0, self, self._exposed)

    def _exposed(self) -> None:
        self._build_queued = False
        if self._on_exposed is not None:
            self._on_exposed()
        else:
            self.tiles  # noqa: B018  # built when asked for

    def menu(self) -> QMenu:
        """The card's context menu: its header's text to copy, then the page's actions."""
        menu = QMenu(self)
        menu.addAction("Copy", self.header.copy)
        if self.menu_hook is not None:
            self.menu_hook(self.controller, menu)
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        self.menu().exec(event.globalPos())


def _chain_after(anchor: QWidget, tiles: list[SlotTile]) -> None:
    """Tab walks the tiles where their box is: a widget made for a window already built
    joins the end of its focus chain. `setTabOrder` moves nothing after a widget that takes
    no focus, so the anchor takes it for as long as the chain is laid."""
    policy = anchor.focusPolicy()
    anchor.setFocusPolicy(Qt.FocusPolicy.TabFocus)
    previous: QWidget = anchor
    for tile in tiles:
        QWidget.setTabOrder(previous, tile)
        previous = tile
    anchor.setFocusPolicy(policy)


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
        self._hints: dict[bool, QSize] = {}  # minimum or not: until a font change
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
        if False not in self._hints:
            lines = self._lines()
            width = max(QFontMetrics(font).horizontalAdvance(text) for font, text in lines)
            self._hints[False] = QSize(width, self.heightForWidth(width))
        return self._hints[False]

    def minimumSizeHint(self) -> QSize:
        """As narrow as its longest word: the rest wraps."""
        if True not in self._hints:
            width = max(
                QFontMetrics(font).horizontalAdvance(word)
                for font, text in self._lines()
                for word in text.split() or [""]
            )
            self._hints[True] = QSize(width, self.heightForWidth(width))
        return self._hints[True]

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
            self._hints.clear()
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
        # the HBA's own ports: a disk on one, or a cable to an expander; the disks behind an
        # expander are no port of the HBA's (9 of 8 ports used, else)
        behind = sum(1 for s in controller.slots if s.disk and "expander" in s.port)
        cabled = sum(1 for s in controller.slots if s.note and s.note.startswith("cable to"))
        used = len(controller.disks) - behind + cabled
        fact = f"{used} of {count_noun(controller.port_count, 'port')} used"
        if behind:
            fact += f", {count_noun(behind, 'disk')} behind an expander"
        facts.append(fact)
    elif controller.slots and is_empty(controller):  # with no slots, the box body says so
        facts.append("no disks attached")
    facts.append(link_text(controller))
    return f"{title}\n{' · '.join(facts)}"

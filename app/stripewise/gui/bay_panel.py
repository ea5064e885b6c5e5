"""The Hardware page's bay view: the chassis drawn as it looks, with the ways to map it.

Above the bays: the layout's name and how many bays are mapped, Edit Layout, Map from SES and
Walk with Locate. Under them, the disks in no bay yet, to drag onto their bay. A walk lights
one disk's bay LED (through `Locator`), the admin clicks the bay that lit, the next one lights.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui import file_places
from stripewise.gui import help_dialogs as says
from stripewise.gui.bay_layout_dialog import BayLayoutDialog
from stripewise.gui.bay_view import PORT_MIME, BayView
from stripewise.gui.flow_layout import FlowLayout
from stripewise.model.bay_map import BayWalk, port_of, unmapped_disks
from stripewise.model.health import HealthVerdict
from stripewise.model.topology import Disk, Inventory
from stripewise.model.units import human_size
from stripewise.model.wording import count_noun
from stripewise.services.bays import BayService, BayState, Locator


class UnplacedList(QListWidget):
    """Disks in no bay yet; each drags its by-path name onto a bay."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDragEnabled(True)
        self.setFlow(QListWidget.Flow.LeftToRight)
        self.setWrapping(True)
        self.setMaximumHeight(64)
        self.setAccessibleName("Disks in no bay yet")

    def mimeData(self, items: list[QListWidgetItem]) -> QMimeData:  # type: ignore[override]
        data = QMimeData()
        port = items[0].data(Qt.ItemDataRole.UserRole) if items else ""
        data.setData(PORT_MIME, str(port).encode())
        data.setText(items[0].text() if items else "")
        return data

    def mimeTypes(self) -> list[str]:
        return [PORT_MIME]


class BayPanel(QWidget):
    statusMessage = Signal(str)

    def __init__(self, bays: BayService, locator: Locator, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bays, self.locator = bays, locator
        self.inventory: Inventory | None = None
        self.walk: BayWalk | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.caption = QLabel("No chassis layout for this machine yet.")
        self.caption.setWordWrap(True)
        layout.addWidget(self.caption)
        bar = FlowLayout()  # wraps rather than clipping at 800 px
        self.edit = QPushButton("&Edit Layout…")
        self.edit.setToolTip("Draw the chassis: rows and columns of bays, face and numbering")
        self.edit.clicked.connect(self._edit)
        self.from_ses = QPushButton("&Map from SES")
        self.from_ses.setToolTip("Put each disk an SES enclosure reports in its slot's bay")
        self.from_ses.clicked.connect(self._map_from_ses)
        self.walk_button = QPushButton("&Walk with Locate")
        self.walk_button.setToolTip(
            "Light each disk's bay LED in turn; click the bay that lit (enclosure bays only)"
        )
        self.walk_button.clicked.connect(self._walk_clicked)
        self.export = QPushButton("E&xport…")
        self.export.setToolTip("The layout and this host's mapping, as a file (F1: the manual)")
        self.export.clicked.connect(self._export)
        self.import_ = QPushButton("&Import…")
        self.import_.setToolTip("Use a layout file, shipped with a chassis or exported elsewhere")
        self.import_.clicked.connect(self._import)
        buttons = (self.edit, self.from_ses, self.walk_button, self.export, self.import_)
        for button in buttons:
            bar.addWidget(button)
        layout.addLayout(bar)

        self.walk_bar = QWidget()
        walk_layout = QHBoxLayout(self.walk_bar)
        walk_layout.setContentsMargins(0, 0, 0, 0)
        self.walk_text = QLabel()
        self.walk_text.setWordWrap(True)
        self.skip = QPushButton("S&kip")
        self.skip.clicked.connect(self._skip)
        walk_layout.addWidget(self.walk_text, 1)
        walk_layout.addWidget(self.skip)
        self.walk_bar.hide()
        layout.addWidget(self.walk_bar)

        self.view = BayView()
        self.view.bayClicked.connect(self._bay_clicked)
        self.view.portDropped.connect(self._dropped)
        self.view.bayCleared.connect(lambda label: self.bays.place(label, None))
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.view)
        layout.addWidget(scroll, 1)
        self.key = QLabel(
            "Coloured as the map: a bay marked ? is not mapped yet; a dashed one is mapped "
            "with no disk in it now. Hover a bay for its disk and port."
        )
        self.key.setWordWrap(True)
        layout.addWidget(self.key)
        self.unplaced_title = QLabel("Not in a bay yet (drag a disk onto its bay):")
        layout.addWidget(self.unplaced_title)
        self.unplaced = UnplacedList()
        layout.addWidget(self.unplaced)
        bays.changed.connect(self._redraw)
        bays.notice.connect(self.statusMessage.emit)
        bays.failed.connect(self.statusMessage.emit)

    # --- showing ---------------------------------------------------------------------------
    def show_inventory(self, inventory: Inventory) -> None:
        self.inventory = inventory
        self.stop_walk()
        self._redraw(self.bays.state)

    def set_health(self, health: dict[str, HealthVerdict]) -> None:
        self.view.set_health(health)

    def _redraw(self, state: BayState | None) -> None:
        inventory = self.inventory
        ready = state is not None and inventory is not None and state.host_key == inventory.host.key
        layout = state.layout if ready and state else None
        placed = state.placed(inventory) if layout and state and inventory else []
        self.view.set_bays(layout, placed)
        for button in (self.from_ses, self.walk_button, self.export):
            button.setEnabled(layout is not None)
        self.edit.setEnabled(ready)
        self.import_.setEnabled(ready)
        self.key.setVisible(layout is not None)  # no bays drawn: nothing for it to explain
        if layout is None:
            product = state.product if state else None
            self.caption.setText(
                f"No chassis layout for {('“' + product + '”') if product else 'this machine'}"
                " yet: Edit Layout draws one (F1 says how)."
            )
        else:
            mapped = sum(1 for p in placed if p.port)
            self.caption.setText(
                f"<b>{layout.name}</b>: {mapped} of {count_noun(len(placed), 'bay')} mapped"
                + (f" · numbering: {layout.source}" if layout.source else "")
            )
        self.unplaced.clear()
        for disk in unmapped_disks(placed, inventory) if layout and inventory else []:
            port = port_of(disk)
            if port is None:
                continue
            item = QListWidgetItem(f"{disk.name} {human_size(disk.size_bytes)}")
            item.setData(Qt.ItemDataRole.UserRole, port)
            item.setToolTip(f"{disk.model or 'model unknown'} at {port}")
            self.unplaced.addItem(item)
        shown = layout is not None and self.unplaced.count() > 0
        self.unplaced.setVisible(shown)
        self.unplaced_title.setVisible(shown)

    # --- mapping ---------------------------------------------------------------------------
    def _dropped(self, label: str, port: str) -> None:
        self.bays.place(label, port)

    def _map_from_ses(self) -> None:
        count = self.bays.map_from_enclosures()
        self.statusMessage.emit(
            f"{count_noun(count, 'bay')} mapped from SES slots"
            if count
            else "no disk sits in an SES enclosure slot on this map"
        )

    def _edit(self) -> None:
        state = self.bays.state
        if state is None:
            return
        start = state.layout or self.bays.suggested_layout()
        dialog = BayLayoutDialog(start, state.product, self.bays.templates(), self)
        if dialog.exec():
            self.bays.set_layout(dialog.result_layout())

    def _export(self) -> None:
        state = self.bays.state
        stem = file_places.file_stem(state.layout.product if state and state.layout else "bays")
        path = file_places.chosen(
            QFileDialog.getSaveFileName(
                self, says.EXPORT_BAYS, file_places.suggested(f"{stem}.toml"), "TOML (*.toml)"
            )[0]
        )
        if path:
            self.bays.export_to(Path(path))

    def _import(self) -> None:
        path = file_places.chosen(
            QFileDialog.getOpenFileName(
                self,
                says.IMPORT_BAYS,
                file_places.start_folder(),
                "Chassis layouts (*.toml);;All files (*)",
            )[0]
        )
        if path:
            self.bays.import_from(Path(path))

    # --- the walk --------------------------------------------------------------------------
    def _walk_clicked(self) -> None:
        if self.walk is not None:
            self.stop_walk()
        else:
            self.start_walk()

    def start_walk(self) -> None:
        state, inventory = self.bays.state, self.inventory
        if state is None or state.layout is None or inventory is None:
            return
        self.walk = BayWalk(inventory, state.ports)
        self.walk_bar.show()
        self.walk_button.setText("Stop &Walk")
        self._light_current()

    def _light_current(self) -> None:
        walk, inventory = self.walk, self.inventory
        if walk is None or inventory is None:
            return
        disk = walk.current
        if disk is None:
            self.statusMessage.emit("walk done: bays saved")
            self.stop_walk()
            return
        place = f"{walk.index + 1} of {len(walk.disks)}"
        reason = self.locator.reason(inventory, disk)
        if reason:
            self.walk_text.setText(f"{place}: {reason}. Click its bay if you know it, or Skip.")
            return
        self.walk_text.setText(f"{place}: lighting the LED of {disk.name}'s bay...")
        # said lit once the helper has switched it, for this disk only (a click may move on)
        self.locator.light(
            inventory,
            disk,
            True,
            lambda why: self._light_said(disk, f"{place}: {disk.name}'s LED did not light "
                                         f"({why}). Click its bay if you know it, or Skip."),
            lambda: self._light_said(disk, f"{place}: the LED of {disk.name}'s bay is lit: "
                                     "click that bay."),
        )  # fmt: skip

    def _light_said(self, disk: Disk, text: str) -> None:
        if self.walk is not None and self.walk.current == disk:
            self.walk_text.setText(text)

    def _darken_current(self) -> None:
        walk, inventory = self.walk, self.inventory
        if walk is None or inventory is None or walk.current is None:
            return
        if self.locator.reason(inventory, walk.current) is None:
            self.locator.light(inventory, walk.current, False, self.statusMessage.emit)

    def _bay_clicked(self, label: str) -> None:
        if self.walk is None:
            return
        self._darken_current()
        self.walk.place(label)
        self.bays.save_ports(self.walk.ports)  # drawn in its bay at once
        self._light_current()

    def _skip(self) -> None:
        if self.walk is not None:
            self._darken_current()
            self.walk.skip()
            self._light_current()

    def stop_walk(self) -> None:
        if self.walk is not None and not self.walk.done:
            self._darken_current()  # what was placed so far is saved already
        self.walk = None
        self.walk_bar.hide()
        self.walk_button.setText("&Walk with Locate")

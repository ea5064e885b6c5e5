"""Hardware page: the map of controllers and slots, search, details, labels, Locate, each
disk's SMART health (a badge on its card, a section in its details) and a controller's
measured ceiling (the scaling test, in its own dialog)."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui import file_places
from stripewise.gui import help_dialogs as says
from stripewise.gui.bay_panel import BayPanel
from stripewise.gui.ceiling_measure import CeilingMeasure
from stripewise.gui.disk_colors import STATE_COLORS, STATE_NAMES
from stripewise.gui.hardware_details import DetailsPanel
from stripewise.gui.hardware_map import HardwareMap
from stripewise.gui.pages import page_title
from stripewise.model.topology import Controller, Disk, Inventory, Slot
from stripewise.model.units import human_size
from stripewise.model.wording import count_noun
from stripewise.protocol.verbs import LocateArgs
from stripewise.services.bays import NOT_THIS_MACHINE, HelperLocator
from stripewise.services.hardware import HardwareService
from stripewise.services.helper_client import HelperClient
from stripewise.services.history import HistoryService


def _raw_size(disks: tuple[Disk, ...]) -> str:
    """The disks' total, never counting an unknown size (a dump records none) as 0 B."""
    known = [d.size_bytes for d in disks if d.size_bytes is not None]
    unknown = len(disks) - len(known)
    if disks and not known:
        return "size unknown"
    total = f"{human_size(sum(known))} raw"
    return f"{total} + {count_noun(unknown, 'disk')} of unknown size" if unknown else total


def legend() -> QLabel:
    chips = " &nbsp; ".join(
        f"<span style='color:{STATE_COLORS[key].name()}'>&#9632;</span> {name}"
        for key, name in STATE_NAMES.items()
    )
    label = QLabel(chips)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setWordWrap(True)
    return label


class HardwarePage(QWidget):
    statusMessage = Signal(str)

    def __init__(
        self,
        hardware: HardwareService,
        helper: HelperClient,
        parent: QWidget | None = None,
        history: HistoryService | None = None,
    ) -> None:
        super().__init__(parent)
        self.hardware = hardware
        self.helper = helper
        self.inventory: Inventory | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 20, 24, 12)
        layout.setSpacing(8)
        layout.addWidget(page_title("Hardware"))
        self.caption = QLabel("Reading hardware...")
        self.caption.setWordWrap(True)
        layout.addWidget(self.caption)
        self.incomplete = QLabel()  # a dump cut short: the map lacks disks, said above it
        self.incomplete.setObjectName("hardwareIncomplete")
        self.incomplete.setTextFormat(Qt.TextFormat.RichText)
        self.incomplete.setWordWrap(True)
        self.incomplete.hide()
        layout.addWidget(self.incomplete)

        bar = QHBoxLayout()
        self.search = QLineEdit()
        self.search.setPlaceholderText("Filter by name, serial, WWN, model or slot label")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Filter disks")
        self.search.textChanged.connect(self._filter)
        self.search.returnPressed.connect(self._select_match)
        bar.addWidget(self.search, 1)
        self.matches = QLabel()
        bar.addWidget(self.matches)
        self.refresh = QPushButton("&Refresh")
        self.refresh.setToolTip("Read the hardware again (F5)")
        self.refresh.clicked.connect(hardware.reload)
        self.open_file = QPushButton("&Open…")
        self.open_file.setToolTip(
            "Show a saved snapshot, `udevadm info --export-db` or umockdev file"
        )
        self.open_file.clicked.connect(self._open)
        self.save = QPushButton("&Save Snapshot…")
        self.save.clicked.connect(self._save)
        self.this_machine = QPushButton("&This Machine")
        self.this_machine.clicked.connect(hardware.load_live)
        self.read_health = QPushButton("Read H&ealth")
        self.read_health.setToolTip(
            "Ask the helper for each disk's SMART health (smartctl): failing and worn disks "
            "get a badge. Read by itself once the helper runs."
        )
        self.read_health.clicked.connect(lambda: hardware.read_health(helper))
        self.ceiling = CeilingMeasure(self, hardware, helper, history)  # a scaling test
        self.ceiling.statusMessage.connect(self.statusMessage.emit)
        self.measure = self.ceiling.button
        self.show_bays = QPushButton("Ba&ys")
        self.show_bays.setCheckable(True)
        self.show_bays.setToolTip("The chassis as it looks, bay by bay (again: the controllers)")
        self.show_bays.toggled.connect(self._show_bays)
        buttons = (self.refresh, self.open_file, self.save, self.this_machine, self.read_health)
        for button in (*buttons, self.show_bays):
            bar.addWidget(button)
        layout.addLayout(bar)
        layout.addWidget(legend())

        self.map = HardwareMap()
        self.map.slotSelected.connect(self._show_slot)
        self.map.controller_menu = self.ceiling.add_to_menu
        self.extras = QLabel()
        self.extras.linkActivated.connect(self.ceiling.open_link)
        self.extras.setTextFormat(Qt.TextFormat.RichText)
        self.extras.setWordWrap(True)
        content = QWidget()
        content_layout = QVBoxLayout(content)
        content_layout.setContentsMargins(0, 0, 8, 0)
        content_layout.addWidget(self.map)
        content_layout.addWidget(self.extras)
        content_layout.addStretch(1)
        self.map_scroll = QScrollArea()
        self.map_scroll.setWidgetResizable(True)
        self.map_scroll.setWidget(content)
        self.details = DetailsPanel(controller_actions=(self.measure,))
        self.details.renameRequested.connect(self._rename)
        self.details.locateRequested.connect(self._locate)
        locator = HelperLocator(helper, lambda: hardware.origin.live)  # no LED of a file's
        self.bay_panel = BayPanel(hardware.bays, locator)
        self.bay_panel.statusMessage.connect(self.statusMessage.emit)
        self.bay_panel.hide()
        self.views = QWidget()  # the controllers and ports, or the bays (a hidden one is
        views_layout = QVBoxLayout(self.views)  # not asked for room, as in a stack it is)
        views_layout.setContentsMargins(0, 0, 0, 0)
        views_layout.addWidget(self.map_scroll)
        views_layout.addWidget(self.bay_panel)
        self.splitter = QSplitter()
        self.splitter.addWidget(self.views)
        self.splitter.addWidget(self.details)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setSizes([700, 300])
        self.splitter.setChildrenCollapsible(False)
        layout.addWidget(self.splitter, 1)

        # F5 is the window's View > Refresh, which reads this page's hardware while it is on show
        QShortcut(QKeySequence(QKeySequence.StandardKey.Find), self, self.search.setFocus)
        hardware.inventoryChanged.connect(self.show_inventory)
        hardware.failed.connect(self._failed)
        hardware.busyChanged.connect(self._busy)
        hardware.hotplugged.connect(self._on_hotplug)  # a method: disconnected with the page
        hardware.notice.connect(self.statusMessage.emit)
        hardware.healthChanged.connect(self._show_health)
        hardware.healthFailed.connect(self.statusMessage.emit)
        self._busy(hardware.busy)

    # --- showing -------------------------------------------------------------------------------
    def show_inventory(self, inventory: Inventory) -> None:
        selected = self.details.slot.key if self.details.slot else None
        self.inventory = inventory
        self.ceiling.show_inventory(inventory)
        self.map.set_inventory(inventory)
        self.caption.setText(self._caption(inventory))
        self.incomplete.setText(
            "<br>".join(f"&#9888; <b>{html.escape(line)}</b>" for line in inventory.incomplete)
        )
        self.incomplete.setVisible(bool(inventory.incomplete))
        self.extras.setText(self._extras(inventory))
        self.this_machine.setVisible(not self.hardware.origin.live)
        self.read_health.setVisible(self.hardware.origin.live)
        self.map.set_health(self.hardware.verdicts(inventory))
        self.bay_panel.show_inventory(inventory)
        self.bay_panel.set_health(self.hardware.verdicts(inventory))
        self.save.setEnabled(True)
        self._filter(self.search.text())
        if not (selected and self.map.select_key(selected)):
            self.details.show_nothing()
        if self.hardware.origin.live:  # once the map has drawn: health comes in behind it
            QTimer.singleShot(0, self, lambda: self._read_health_by_itself(again=True))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.ceiling.update()
        QTimer.singleShot(0, self, lambda: self._read_health_by_itself(again=False))

    def _read_health_by_itself(self, *, again: bool) -> None:
        """While the map of this machine is on screen (each time it is read, `again`, or
        when it comes into view unread), and without asking for a password: only through a
        helper already running."""
        machine, hardware = self.hardware.machine, self.hardware
        if machine is None or not hardware.origin.live or not self.isVisible():
            return
        if self.helper.running and (again or hardware.health_host != machine.host.key):
            hardware.read_health(self.helper)

    def _show_health(self, _health: object) -> None:
        self.map.set_health(self.hardware.verdicts(self.inventory))  # none for another host
        self.bay_panel.set_health(self.hardware.verdicts(self.inventory))
        if self.details.slot is not None:
            self.map.select_key(self.details.slot.key)  # its details again, with the health

    def _caption(self, inventory: Inventory) -> str:
        origin = self.hardware.origin
        host = inventory.host.hostname
        if origin.path is None:  # live: this machine
            where = f"This machine ({host or 'unknown host name'})"
        else:
            where = origin.path.name + (f" (host {host})" if host else "")
        how = {
            "udev": "read through udev",
            "sysfs": "read from sysfs (no udev database: some identities may be missing)",
            "snapshot": "saved snapshot",
            "udev-dump": "udev database dump (no sizes, no mount state)",
            "umockdev-file": "umockdev recording (no mount state)",
        }.get(inventory.source, inventory.source)
        disks = inventory.disks
        count = len(inventory.controllers)
        text = (
            f"{where}: {count_noun(len(disks), 'disk')}, {_raw_size(disks)}, on "
            f"{count_noun(count, 'controller')} · {how}"
        )
        notes = [w for w in inventory.warnings if w not in inventory.incomplete]  # shown apart
        return text + "".join(f"\nNote: {w}" for w in notes)

    def _extras(self, inventory: Inventory) -> str:
        parts = []
        if inventory.arrays:
            rows = "".join(
                f"<li><b>{a.name}</b> {a.level or 'unknown level'}"
                + (f", chunk {a.chunk_kib} KiB" if a.chunk_kib else "")
                + (f", {human_size(a.size_bytes)}" if a.size_bytes else "")
                + f": {' '.join(a.members) or 'members unknown'}"
                + (f" (on {', '.join(a.mountpoints)})" if a.mountpoints else "")
                + "</li>"
                for a in inventory.arrays
            )
            parts.append(f"<b>Existing arrays and volumes</b><ul>{rows}</ul>")
        used = [d for d in inventory.virtual if d.size_bytes]
        idle = len(inventory.virtual) - len(used)
        if inventory.virtual:
            rows = "".join(
                f"<li>{d.name}: {human_size(d.size_bytes)}"
                + (f" on {', '.join(d.all_mountpoints)}" if d.all_mountpoints else "")
                + (" (swap)" if d.swap else "")
                + "</li>"
                for d in used
            )
            note = (
                f"<p>{count_noun(idle, 'device')} of size 0 not listed (loop devices without a "
                "backing file, unconfigured zram)</p>"
                if idle
                else ""
            )
            measure = self.ceiling.virtual_link(inventory)
            parts.append(f"<b>Virtual devices</b><ul>{rows}</ul>{measure}{note}")
        return "".join(parts)

    def _filter(self, text: str) -> None:
        count = self.map.apply_filter(text)
        total = len(self.inventory.disks) if self.inventory else 0
        self.matches.setText(f"{count} of {count_noun(total, 'disk')}" if text.strip() else "")
        found = self.map.matching_slots()
        tile = self.map.tile_of(found[0][1]) if found else None
        if tile is not None:  # "1 of 46 disks" is no use while the one is out of sight
            self.map_scroll.ensureWidgetVisible(tile)

    def _select_match(self) -> None:
        """Enter in the filter: the next match selected, its details shown, in view."""
        tile = self.map.select_next_match()
        if tile is not None:
            self.map_scroll.ensureWidgetVisible(tile)

    def _show_slot(self, controller: Controller, slot: Slot) -> None:
        self.ceiling.select(controller)
        path_to = None
        if slot.path_of and self.inventory is not None:
            path_to = self.inventory.find_disk(slot.path_of)
        disk = slot.disk or path_to
        health = self.hardware.health_of(self.inventory)
        self.details.show_slot(
            controller,
            slot,
            can_label=self.inventory is not None,
            locate_reason=self.helper.unavailable_reason
            or ("" if self.hardware.origin.live else NOT_THIS_MACHINE),
            path_to=path_to,
            health=health.get(disk.name) if disk is not None else None,
            live=self.hardware.origin.live,
        )

    def _show_bays(self, bays: bool) -> None:
        """The bays, or the controllers and ports: one click apart."""
        # The map hidden before the details give up their room, shown after they have taken
        # it back: it builds the cards in view at its own width, never at the page's.
        if bays:
            self.map_scroll.hide()
        self.details.setVisible(not bays)  # a slot's details; the bays take the width
        self.splitter.refresh()
        self.map_scroll.setVisible(not bays)
        self.bay_panel.setVisible(bays)
        self.show_bays.setText("&Ports" if bays else "Ba&ys")
        if not bays:
            self.bay_panel.stop_walk()

    def _busy(self, busy: bool) -> None:
        self.refresh.setEnabled(not busy)
        if busy and self.inventory is None:
            self.caption.setText("Reading hardware...")

    def _failed(self, message: str) -> None:
        self.statusMessage.emit(message)
        if self.inventory is None:
            self.caption.setText(message)

    # --- actions -------------------------------------------------------------------------------
    def _open(self) -> None:
        path = file_places.chosen(
            QFileDialog.getOpenFileName(
                self,
                says.OPEN_INVENTORY,
                file_places.start_folder(),
                "Inventories (*.json *.txt *.umockdev *.db);;All files (*)",
            )[0]
        )
        if path:
            self.hardware.load_file(Path(path))

    def _save(self) -> None:
        host = (self.inventory.host.hostname if self.inventory else None) or "inventory"
        path = file_places.chosen(
            QFileDialog.getSaveFileName(
                self,
                says.SAVE_INVENTORY,
                file_places.suggested(f"{file_places.file_stem(host)}-inventory.json"),
                "JSON (*.json)",
            )[0]
        )
        if path:
            self.hardware.save_snapshot(Path(path))

    def _rename(self, slot: Slot) -> None:
        label, ok = QInputDialog.getText(
            self,
            "Label Slot",
            says.with_purpose(says.label_slot(slot.port), "Your name (empty to clear):"),
            text=slot.label or "",
        )
        if ok:
            self.hardware.set_label(slot.key, label)

    def _locate(self, slot: Slot, on: bool) -> None:
        bay = slot.enclosure
        if bay is None:
            return
        if not self.hardware.origin.live:  # its enclosures are another machine's
            self._locate_failed(bay.name, NOT_THIS_MACHINE)
            return
        self.helper.request(
            LocateArgs(bay.enclosure, bay.name, on),
            lambda result: self.statusMessage.emit(
                f"Locate LED of {bay.name} {'on' if result.on else 'off'}"
            ),
            lambda error: self._locate_failed(bay.name, error),
        )

    def _locate_failed(self, bay: str, error: str) -> None:
        self.statusMessage.emit(f"Locate {bay}: {error}")
        self.details.locate.blockSignals(True)
        self.details.locate.setChecked(False)
        self.details.locate.blockSignals(False)

    def _on_hotplug(self, text: str) -> None:
        self.statusMessage.emit(f"Hotplug: {text}")

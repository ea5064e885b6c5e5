"""Everything known about the selected slot and its disk, with units spelled out."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui.disk_colors import STATE_NAMES
from stripewise.model.health import DiskHealth, verdict
from stripewise.model.topology import Controller, Disk, Slot
from stripewise.model.units import binary_size, human_size

UNKNOWN = "<i>unknown</i>"


def _value(value: object) -> str:
    if value is None or value == "" or value == ():
        return UNKNOWN
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple | list):
        return "<br>".join(escape(str(v)) for v in value)
    return escape(str(value))


def _rows(rows: Sequence[tuple[str, object]]) -> str:
    cells = "".join(
        f"<tr><td style='padding:1px 10px 1px 0; white-space:nowrap' valign='top'>{escape(k)}</td>"
        f"<td>{v if isinstance(v, str) and v.startswith('<') else _value(v)}</td></tr>"
        for k, v in rows
    )
    return f"<table cellspacing='0'>{cells}</table>"


def _size(disk: Disk) -> str:
    if disk.size_bytes is None:
        return UNKNOWN
    sectors = disk.size_bytes // 512
    binary = binary_size(disk.size_bytes)
    return f"{human_size(disk.size_bytes)} ({binary}, {sectors:,} sectors of 512 B)"


def _paths(disk: Disk) -> tuple[str, ...]:
    """Each path of a multipathed disk with the controller port it goes through."""
    return tuple(
        f"{p.name} via {p.controller} {p.port}" + (f" (HCTL {p.hctl})" if p.hctl else "")
        for p in disk.paths
    )


_HEALTH_ROWS = (  # DiskHealth's attribute -> (its row's name, its unit)
    ("temperature_c", "Temperature", " °C"),
    ("power_on_hours", "Powered on", " h"),
    ("reallocated_sectors", "Reallocated sectors", ""),
    ("pending_sectors", "Pending sectors", ""),
    ("offline_uncorrectable", "Offline uncorrectable", ""),
    ("udma_crc_errors", "UDMA CRC errors", ""),
    ("critical_warning", "NVMe critical warning", ""),
    ("media_errors", "Media / integrity errors", ""),
    ("error_log_entries", "Error log entries", ""),
    ("percentage_used", "Endurance used", " %"),
    ("available_spare_pct", "Available spare", " %"),
    ("available_spare_threshold_pct", "Spare threshold", " %"),
    ("grown_defects", "Grown defects", ""),
    ("uncorrected_errors", "Uncorrected errors", ""),
)


def health_html(health: DiskHealth | None, *, live: bool = True) -> str:
    """The disk's SMART section: its verdict with the reasons, then every figure it reports;
    `live` False for a map read from a file, whose disks cannot be asked."""
    if health is None and not live:
        return (
            "<h4>Health</h4><p><i>not read: this map is a file's; health is read from the "
            "disks themselves (This Machine, then Read Health)</i></p>"
        )
    if health is None:
        return "<h4>Health</h4><p><i>not read (Read Health asks the helper)</i></p>"
    if not health.available:
        return f"<h4>Health</h4><p>{escape(health.reason or 'no SMART data')}</p>"
    judged = verdict(health)
    colour = {"failing": "#c62828", "warn": "#b7791f"}.get(judged.level)
    word = f"<b style='color:{colour}'>{judged.level}</b>" if colour else escape(judged.level)
    rows: list[tuple[str, object]] = [
        ("Verdict", word),
        ("Why", tuple(f"• {reason}" for reason in judged.reasons)),  # wrapped: one bullet each
        ("Self-assessment", {True: "passed", False: "FAILED", None: None}[health.passed]),
        ("Protocol", health.protocol),
    ]
    for name, label, unit in _HEALTH_ROWS:
        value = getattr(health, name)
        if value is not None:
            rows.append((label, f"{value:,}{unit}"))
    return "<h4>Health</h4>" + _rows([r for r in rows if r[0] != "Why" or r[1]])


def disk_html(
    controller: Controller,
    slot: Slot,
    path_to: Disk | None = None,
    health: DiskHealth | None = None,
    live: bool = True,
) -> str:
    """`path_to`: for a slot that is a further path to a multipathed disk, that disk;
    `health`: the disk's SMART health, once read."""
    where = [
        ("Controller", f"{controller.model or 'unknown'} ({controller.id})"),
        ("Port", slot.port),
    ]
    if slot.enclosure:
        where.append(("Enclosure bay", f"{slot.enclosure.name} of {slot.enclosure.enclosure}"))
    if slot.label:
        where.append(("Your label", slot.label))
    disk = slot.disk or (path_to if slot.path_of else None)
    if disk is None:
        what = slot.note or "empty"
        return f"<h3>{escape(slot.title)}: {escape(what)}</h3>" + _rows(where)
    title = f"{disk.name} in {slot.title}"
    if slot.disk is None:  # a further path: the disk is drawn at its first path's slot
        title = f"{slot.title}: {slot.note or 'a path'}"
    state = STATE_NAMES.get(disk.state.value, disk.state.value)
    identity = [
        ("Device", disk.devnode),
        ("State", state),
        ("Why", disk.system_reasons) if disk.system_reasons else ("Why", ()),
        ("WWN", disk.wwn),
        ("Serial", disk.serial),
        ("Model", disk.model),
        ("Vendor", disk.vendor),
        ("by-id", disk.by_id),
        ("by-path", disk.by_path),
    ]
    if disk.paths:
        identity.append(("Paths", _paths(disk)))
    geometry = [
        ("Size", _size(disk)),
        ("Logical block", f"{disk.logical_block_size} B" if disk.logical_block_size else None),
        ("Physical block", f"{disk.physical_block_size} B" if disk.physical_block_size else None),
        ("Rotational", disk.rotational),
        ("Transport", disk.transport.value),
        ("HCTL", disk.hctl),
        (
            "Read-ahead",
            f"{disk.read_ahead_kb} KiB ({disk.read_ahead_kb * 2} sectors)"
            if disk.read_ahead_kb is not None
            else None,
        ),
        (
            "Scheduler",
            f"{disk.scheduler} (of {', '.join(disk.schedulers)})" if disk.scheduler else None,
        ),
    ]
    usage = [
        ("Partition table", disk.partition_table or ("none" if disk.usage_known else None)),
        ("Signature", disk.fs_type or ("none on the whole disk" if disk.partition_table else None)),
        ("Mounted at", disk.all_mountpoints or ("not mounted" if disk.usage_known else None)),
        ("Held by", disk.all_holders or ("nothing" if disk.usage_known else None)),
        ("Swap", disk.swap if disk.usage_known else None),
    ]
    parts = "".join(
        f"<li>{escape(p.name)}: {escape(human_size(p.size_bytes))}, "
        f"{escape(p.fs_type or 'no signature')}"
        + (f", on {escape(', '.join(p.mountpoints))}" if p.mountpoints else "")
        + (f", held by {escape(', '.join(p.holders))}" if p.holders else "")
        + "</li>"
        for p in disk.partitions
    )
    said = health_html(health, live=live)
    # a failing or warned disk says so first, above the fold, not under its partitions
    first = health is not None and verdict(health).concerning
    return (
        f"<h3>{escape(title)}</h3>"
        + (said if first else "")
        + _rows(where + [r for r in identity if r[0] != "Why" or r[1]])
        + "<h4>Geometry and tuning</h4>"
        + _rows(geometry)
        + "<h4>Use</h4>"
        + _rows(usage)
        + (f"<ul style='margin-left:-20px'>{parts}</ul>" if parts else "")
        + ("" if first else said)
    )


class DetailsPanel(QWidget):
    renameRequested = Signal(object)  # Slot
    locateRequested = Signal(object, bool)  # Slot, on

    def __init__(
        self, parent: QWidget | None = None, controller_actions: Sequence[QPushButton] = ()
    ) -> None:
        """`controller_actions`: buttons acting on the selected slot's controller, on a row of
        their own below the slot's (the page's Measure Ceiling…)."""
        super().__init__(parent)
        self.slot: Slot | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        self.browser.setAccessibleName("Disk details")
        layout.addWidget(self.browser, 1)
        buttons = QHBoxLayout()
        self.rename = QPushButton("&Label Slot…")
        self.rename.clicked.connect(lambda: self.slot and self.renameRequested.emit(self.slot))
        self.locate = QPushButton("&Locate")
        self.locate.setCheckable(True)
        self.locate.toggled.connect(self._locate_toggled)
        buttons.addWidget(self.rename)
        buttons.addWidget(self.locate)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        if controller_actions:
            row = QHBoxLayout()
            for button in controller_actions:
                row.addWidget(button)
            row.addStretch(1)
            layout.addLayout(row)
        self.locate_note = QLabel()
        self.locate_note.setWordWrap(True)
        layout.addWidget(self.locate_note)
        self.show_nothing()

    def show_nothing(self) -> None:
        self.slot = None
        self.browser.setHtml("<p>Select a slot to see its disk.</p>")
        self.rename.setEnabled(False)
        self._set_locate(None, "")

    def show_slot(
        self,
        controller: Controller,
        slot: Slot,
        *,
        can_label: bool,
        locate_reason: str,
        path_to: Disk | None = None,
        health: DiskHealth | None = None,
        live: bool = True,
    ) -> None:
        self.slot = slot
        self.browser.setHtml(disk_html(controller, slot, path_to, health, live))
        self.rename.setEnabled(can_label)
        self._set_locate(slot, locate_reason)

    def _set_locate(self, slot: Slot | None, reason: str) -> None:
        bay = slot.enclosure if slot else None
        available = bay is not None and bay.locate_path is not None and not reason
        self.locate.blockSignals(True)
        self.locate.setChecked(bool(bay and bay.locate_on))
        self.locate.blockSignals(False)
        self.locate.setEnabled(available)
        self.locate.setVisible(bay is not None)
        self.locate_note.setText(reason if bay is not None else "")
        self.locate_note.setVisible(bool(reason) and bay is not None)

    def _locate_toggled(self, on: bool) -> None:
        if self.slot is not None:
            self.locateRequested.emit(self.slot, on)

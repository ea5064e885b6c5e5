"""The left side of the planner: every disk of the plan, grouped by controller."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from stripewise.gui.flow_layout import FlowLayout
from stripewise.gui.planner_chips import DiskChip, accept_disks, start_drag, take_disks
from stripewise.model.arrays import PlanIndex
from stripewise.model.ceilings import Ceilings, MeasuredCeiling
from stripewise.model.plan import Plan, PlanDisk
from stripewise.model.wording import count_noun
from stripewise.planner.sizes import unknown_sizes

OVER_FULL = "#d64541"  # the colour problems_html gives errors


def _controller_title(plan: Plan, controller_id: str, ceilings: Ceilings) -> str:
    """Its distinct name in bold, then id, ports used, ceiling and bus (the ports in red when
    it carries more disks than it has); the ceiling the prediction uses, measured or from
    the catalog, saying which."""
    controller = plan.controller(controller_id)
    if controller is None:
        return f"<b>{escape(controller_id)}</b>"
    facts = [escape(controller.id)]
    if controller.label and controller.model and controller.label != controller.model:
        facts.append(escape(controller.model))
    disks = len(plan.disks_on(controller_id))
    if controller.ports is not None:
        if disks > controller.ports:
            over = f"{count_noun(disks, 'disk')} on {count_noun(controller.ports, 'port')}"
            facts.append(f"<span style='color:{OVER_FULL}'>{over}</span>")
        else:
            facts.append(f"{disks:,} of {count_noun(controller.ports, 'port')} used")
    link = ceilings.controller(controller_id)
    if link.mb_s:
        basis = f"measured, run {link.measured.run_id}" if link.measured else "catalog"
        facts.append(f"{link.mb_s:,.0f} MB/s ceiling ({basis})")
    if controller.bus:
        facts.append(f"bus {escape(controller.bus)}")
    if controller.hypothetical:
        facts.append("to buy")
    title = escape(plan.controller_names()[controller_id])
    return f"<b>{title}</b><br><span style='font-size:small'>{' · '.join(facts)}</span>"


class DiskPool(QWidget):
    """Chips for all disks; a drop here takes disks out of their array."""

    disksDropped = Signal(tuple)  # disk ids returned to the pool
    selectionChanged = Signal(tuple)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAcceptDrops(True)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(8)
        self.chips: list[DiskChip] = []
        self._anchor: DiskChip | None = None
        self.sizes_note: QLabel | None = None  # shown while disks of unknown size are listed

    def set_plan(self, plan: Plan, measured: tuple[MeasuredCeiling, ...] = ()) -> None:
        """The plan's disks by controller; `measured`: the ceilings measured on its host."""
        selected = {c.disk.id for c in self.chips if c.selected}
        while (item := self._layout.takeAt(0)) is not None:
            if (widget := item.widget()) is not None:
                widget.deleteLater()
        self.chips = []
        self.sizes_note = None
        unknown = unknown_sizes(plan, (d.id for d in plan.disks))
        if unknown:
            self.sizes_note = QLabel(
                f"Size unknown for {count_noun(len(unknown), 'disk')} (a udev dump records "
                "none): the capacity of an array using them is unknown."
            )
            self.sizes_note.setWordWrap(True)
            self._layout.addWidget(self.sizes_note)
        assigned = plan.assigned()
        by_controller: dict[str, list[PlanDisk]] = {}
        for disk in plan.disks:
            by_controller.setdefault(disk.controller, []).append(disk)
        order = [c.id for c in plan.controllers] + [
            c for c in by_controller if plan.controller(c) is None
        ]
        ceilings = Ceilings.of(PlanIndex.of(plan), measured)
        for controller_id in order:
            box = QFrame()
            box.setFrameShape(QFrame.Shape.StyledPanel)
            layout = QVBoxLayout(box)
            layout.setContentsMargins(8, 6, 8, 8)
            title = QLabel(_controller_title(plan, controller_id, ceilings))
            title.setTextFormat(Qt.TextFormat.RichText)
            title.setWordWrap(True)
            layout.addWidget(title)
            holder = QWidget()
            flow = FlowLayout(holder, spacing=5)
            disks = by_controller.get(controller_id, [])
            for disk in disks:
                chip = DiskChip(disk, assigned.get(disk.id))
                chip.selected = disk.id in selected
                chip.pressed.connect(self._pressed)
                chip.dragRequested.connect(self._drag)
                self.chips.append(chip)
                flow.addWidget(chip)
            if not disks:
                layout.addWidget(QLabel("no disks"))
            layout.addWidget(holder)
            self._layout.addWidget(box)
        if not plan.disks:
            empty = QLabel(
                "No disks yet: plan this machine's disks, open an inventory, or add "
                "controllers and disks from the catalog."
            )
            empty.setWordWrap(True)
            self._layout.addWidget(empty)
        self._layout.addStretch(1)

    # --- selection -----------------------------------------------------------------------------
    def selected_ids(self) -> list[str]:
        return [c.disk.id for c in self.chips if c.selected]

    def _pressed(self, chip: DiskChip, modifiers: Qt.KeyboardModifier) -> None:
        if modifiers & Qt.KeyboardModifier.ShiftModifier and self._anchor in self.chips:
            start, end = sorted((self.chips.index(self._anchor), self.chips.index(chip)))
            for other in self.chips[start : end + 1]:
                other.selected = other.draggable
        elif modifiers & Qt.KeyboardModifier.ControlModifier:
            chip.selected = not chip.selected
            self._anchor = chip
        else:
            if not chip.selected:
                for other in self.chips:
                    other.selected = False
                chip.selected = True
            self._anchor = chip
        for other in self.chips:
            other.update()
        self.selectionChanged.emit(tuple(self.selected_ids()))

    def _drag(self, chip: DiskChip) -> None:
        ids = [i for i in self.selected_ids() if self._chip(i).draggable] if chip.selected else []
        start_drag(chip, ids or [chip.disk.id])

    def _chip(self, disk_id: str) -> DiskChip:
        return next(c for c in self.chips if c.disk.id == disk_id)

    def highlight(self, disk_ids: frozenset[str]) -> None:
        for chip in self.chips:
            lit = chip.disk.id in disk_ids
            if lit != chip.highlighted:
                chip.highlighted = lit
                chip.update()

    # --- drops ---------------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        accept_disks(event)

    def dropEvent(self, event: QDropEvent) -> None:
        if ids := take_disks(event):
            self.disksDropped.emit(ids)

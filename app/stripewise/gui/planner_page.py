"""Planner page: disks on the left, proposed arrays on the right, figures after every drop.

Plan This Machine plans this machine's own disks; while the Hardware page shows a file (a
recording or snapshot of another server), a second button plans that map, and a note says a
plan of another machine is built there, not here (issue 29.1, 29.6).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui import file_places
from stripewise.gui import help_dialogs as says
from stripewise.gui.disk_colors import PLANNED, STATE_COLORS
from stripewise.gui.flow_layout import FlowLayout
from stripewise.gui.pages import page_title
from stripewise.gui.planner_card import LEVEL_NAMES, ArrayCard, MeasuredRun
from stripewise.gui.planner_chips import DiskChip
from stripewise.gui.planner_dialogs import CompareDialog, SpreadDialog
from stripewise.gui.planner_elsewhere import ElsewhereNote, map_title
from stripewise.gui.planner_pool import DiskPool
from stripewise.model.evaluate import PlanReport
from stripewise.model.health import verdict
from stripewise.model.placement import spread, spread_improvers, suggest_spread
from stripewise.model.plan import Plan, RaidLevel
from stripewise.model.units import human_size
from stripewise.model.wording import count_noun
from stripewise.planner.costs import cost_text, to_buy
from stripewise.planner.sizes import cost_per_usable_tb, plan_usable_bytes
from stripewise.services.hardware import HardwareService
from stripewise.services.helper_client import HelperClient
from stripewise.services.planner import PlannerService


class PlannerPage(QWidget):
    statusMessage = Signal(str)

    def __init__(
        self,
        planner: PlannerService,
        hardware: HardwareService,
        helper: HelperClient | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.planner = planner
        self.hardware = hardware
        self.helper = helper
        self.cards: dict[str, ArrayCard] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 20, 24, 12)
        layout.setSpacing(8)
        layout.addWidget(page_title("Planner"))
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)

        bar = FlowLayout()  # wraps rather than clipping at 800 px
        self.from_machine = QPushButton("Plan &This Machine")
        self.from_machine.setToolTip("Start a plan on this machine's own disks")
        self.from_machine.clicked.connect(self._plan_machine)
        self.from_map = QPushButton()  # the map on show, when it is a file: shown only then
        self.from_map.clicked.connect(self._plan_map)
        self.purchase = QPushButton("New &Purchase Plan")
        self.purchase.clicked.connect(planner.new_purchase_plan)
        self.open_plan = QPushButton("&Open…")
        self.open_plan.clicked.connect(self._open)
        self.save_plan = QPushButton("&Save…")
        self.save_plan.clicked.connect(self._save)
        self.compare = QPushButton("Co&mpare…")
        self.compare.clicked.connect(self._compare)
        self.add_hardware = QPushButton("Add Hard&ware…")
        self.add_hardware.clicked.connect(self._add_hardware)
        for button in (
            self.from_machine,
            self.from_map,
            self.purchase,
            self.open_plan,
            self.save_plan,
            self.compare,
            self.add_hardware,
        ):
            bar.addWidget(button)
        layout.addLayout(bar)

        def square(state: str) -> str:
            return f"<span style='color:{STATE_COLORS[state].name()}'>&#9632;</span>"

        legend = QLabel(
            f"{square(PLANNED)} in a planned array &nbsp; {square('free')} free &nbsp; "
            f"{square('unknown')} use unknown (the file records no mounts: check before "
            "building) &nbsp; faded: not free (system, mounted or in an array) &nbsp; "
            "Drag disks onto an array; Ctrl-click or Shift-click to take several."
        )
        legend.setTextFormat(Qt.TextFormat.RichText)
        legend.setWordWrap(True)
        self.legend = legend
        layout.addWidget(legend)
        self.elsewhere = ElsewhereNote()
        layout.addWidget(self.elsewhere)

        self.pool = DiskPool()
        self.pool.disksDropped.connect(lambda ids: planner.move_disks(ids, None))
        pool_scroll = QScrollArea()
        pool_scroll.setWidgetResizable(True)
        pool_scroll.setWidget(self.pool)

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        add_row = QHBoxLayout()
        self.new_level = QComboBox()
        for level, text in LEVEL_NAMES.items():
            self.new_level.addItem(text, level)
        self.new_level.setCurrentIndex(self.new_level.findData(RaidLevel.RAID6))
        self.new_array = QPushButton("&New Array")
        self.new_array.setToolTip("A new array, with the disks selected on the left")
        self.new_array.clicked.connect(self._new_array)
        add_row.addWidget(self.new_level)
        add_row.addWidget(self.new_array)
        add_row.addStretch(1)
        right_layout.addLayout(add_row)
        self.cards_box = QWidget()
        self.cards_layout = QVBoxLayout(self.cards_box)
        self.cards_layout.setContentsMargins(0, 0, 6, 0)
        self.cards_layout.addStretch(1)
        cards_scroll = QScrollArea()
        cards_scroll.setWidgetResizable(True)
        cards_scroll.setWidget(self.cards_box)
        right_layout.addWidget(cards_scroll, 1)

        splitter = QSplitter()
        splitter.addWidget(pool_scroll)
        splitter.addWidget(right)
        splitter.setSizes([520, 520])
        splitter.setChildrenCollapsible(False)
        layout.addWidget(splitter, 1)

        planner.planChanged.connect(self.show_plan)
        planner.measuredChanged.connect(self._show_measured)
        planner.failed.connect(self.statusMessage.emit)
        planner.notice.connect(self.statusMessage.emit)
        # methods, not lambdas: Qt disconnects them when the page goes, the service stays
        hardware.inventoryChanged.connect(self._show_map)
        hardware.machineChanged.connect(self._show_elsewhere)
        hardware.healthChanged.connect(self._health_read)
        self._show_map()
        self.show_plan(planner.plan, planner.report)

    # --- showing -------------------------------------------------------------------------------
    def show_plan(self, plan: Plan, report: PlanReport) -> None:
        self.pool.set_plan(plan, self.planner.ceilings)
        reports = {r.array.name: r for r in report.arrays}
        for name in list(self.cards):
            if name not in reports:
                self.cards.pop(name).deleteLater()
        for index, array in enumerate(plan.arrays):
            card = self.cards.get(array.name) or self._card(array.name)
            self.cards_layout.removeWidget(card)
            self.cards_layout.insertWidget(index, card)
            card.show_report(reports[array.name], plan)
            card.show_measured(self.planner.measured.get(array.name), reports[array.name])
        self.summary.setText(self._summary(plan, report))
        health = self.planner.plan_health()
        for chip in self.findChildren(DiskChip):  # in the list and on the cards alike
            chip.set_health(health.get(chip.disk.id))
        self.save_plan.setEnabled(bool(plan.disks))
        self._show_elsewhere()

    def _show_map(self, _inventory: object = None) -> None:
        """The second Plan button names the file on show; it is hidden for this machine."""
        inventory, origin = self.hardware.inventory, self.hardware.origin
        shown = not origin.live and inventory is not None
        self.from_map.setVisible(shown)
        if shown and inventory is not None:
            title = map_title(inventory, origin.describe())
            self.from_map.setText(f"Plan {title.replace('&', '&&')}")
            self.from_map.setToolTip(
                f"Start a plan on the disks of the map on show ({origin.describe()}): its "
                "commands are for that machine; nothing is created on this one from it"
            )

    def _show_elsewhere(self, _machine: object = None) -> None:
        machine = self.hardware.machine
        self.elsewhere.show_for(self.planner.plan, machine)
        self.from_machine.setEnabled(machine is not None)
        self.from_machine.setToolTip(
            "Start a plan on this machine's own disks"
            if machine is not None
            else "Reading this machine's disks..."
        )

    def _health_read(self, _health: object) -> None:
        """This machine's disk health judges a plan of its disks: a failing member warns."""
        hardware = self.hardware
        verdicts = {n: verdict(h) for n, h in hardware.health.items()}
        self.planner.set_health(hardware.health_host, verdicts)

    def _show_measured(self, measured: Mapping[str, MeasuredRun]) -> None:
        for report in self.planner.report.arrays:
            card = self.cards.get(report.array.name)
            if card is not None:
                card.show_measured(measured.get(report.array.name), report)

    def _summary(self, plan: Plan, report: PlanReport) -> str:
        used = sum(1 for d in plan.disks if d.id in plan.assigned())
        usable = plan_usable_bytes(plan, report)  # None: an array has a disk of unknown size
        text = (
            f"{plan.name}: {count_noun(len(plan.arrays), 'array')}, {used:,} of "
            f"{count_noun(len(plan.disks), 'disk')} used, "
            + ("usable capacity unknown" if usable is None else f"{human_size(usable)} usable")
        )
        per_tb = cost_per_usable_tb(plan, report)
        if report.total_cost is None:  # something to buy has no price: say so, not nothing
            text += f", cost {cost_text(plan, report)}"
        elif to_buy(plan):  # else nothing to buy (the machine's own disks, or no arrays)
            text += f", {cost_text(plan, report)}"
            if per_tb is not None:
                text += f" ({per_tb:,.0f} {plan.currency} per usable TB)"
        errors = [p.message for p in report.problems if p.error]
        return text + "".join(f"\n{e}" for e in errors)

    def _card(self, name: str) -> ArrayCard:
        card = ArrayCard(name)
        card.renamed.connect(self._renamed)
        card.changed.connect(lambda array, changes: self.planner.update_array(array, **changes))
        card.disksDropped.connect(lambda array, ids: self.planner.move_disks(ids, array))
        card.sparesDropped.connect(
            lambda array, ids: self.planner.move_disks(ids, array, as_spares=True)
        )
        card.hovered.connect(self._hover)
        card.spreadRequested.connect(self._spread)
        card.commandsRequested.connect(self._commands)
        card.deleteRequested.connect(self.planner.delete_array)
        self.cards[name] = card
        return card

    def _renamed(self, old: str, new: str) -> None:
        card = self.cards.pop(old, None)
        if self.planner.rename_array(old, new) and card is not None:
            self.cards[new] = card
        elif card is not None:
            self.cards[old] = card
            card.name_edit.setText(old)

    def _hover(self, name: str | None) -> None:
        """While disks are dragged over an array, light up free disks that improve its spread."""
        array = self.planner.plan.array(name) if name else None
        self.pool.highlight(spread_improvers(array, self.planner.plan) if array else frozenset())

    # --- actions -------------------------------------------------------------------------------
    def _new_array(self) -> None:
        chosen = tuple(self.pool.selected_ids())
        self.planner.add_array(self.new_level.currentData(), chosen)

    def _plan_machine(self) -> None:
        """This machine's own disks, whatever the Hardware page shows."""
        if self.hardware.machine is None:
            self.statusMessage.emit("This machine's disks have not been read yet")
            return
        machine = self.hardware.machine
        self.planner.plan_on_inventory(machine, self.hardware.bays.labels_for(machine))

    def _plan_map(self) -> None:
        """The map on show: a recording or snapshot of another machine, to plan for it."""
        if self.hardware.inventory is None:
            self.statusMessage.emit("The hardware has not been read yet")
            return
        shown = self.hardware.inventory
        self.planner.plan_on_inventory(shown, self.hardware.bays.labels_for(shown))

    def _spread(self, name: str) -> None:
        plan = self.planner.plan
        array = plan.array(name)
        if array is None:
            return
        from stripewise.model.placement import apply_swaps

        swaps = suggest_spread(array, plan)
        before = spread(array, plan).score
        after_plan = apply_swaps(plan, name, swaps)
        after_array = after_plan.array(name)
        after = spread(after_array, after_plan).score if after_array else before
        dialog = SpreadDialog(name, swaps, before, after, plan, self)
        if dialog.exec() and swaps:
            self.planner.apply_swaps(name, swaps)
            self.statusMessage.emit(f"{name}: spread {before} -> {after}")

    def _commands(self, name: str) -> None:
        from stripewise.gui.planner_commands import show_commands

        hardware = self.hardware
        show_commands(self, self.planner, name, self.helper, hardware.machine, hardware.inventory)

    def _open(self) -> None:
        path = file_places.chosen(
            QFileDialog.getOpenFileName(
                self, says.OPEN_PLAN, file_places.start_folder(), "Plans (*.toml)"
            )[0]
        )
        if path:
            self.planner.load(Path(path))

    def _save(self) -> None:
        default = str(self.planner.path) if self.planner.path else None
        name = f"{file_places.file_stem(self.planner.plan.name)}.toml"
        path = file_places.chosen(
            QFileDialog.getSaveFileName(
                self, says.SAVE_PLAN, default or file_places.suggested(name), "Plans (*.toml)"
            )[0]
        )
        if path:
            self.planner.save(Path(path))

    def _compare(self) -> None:
        """This session's saved plans and the current one; more can be added from files."""
        plans = list(self.planner.saved_plans)
        if not any(p is self.planner.plan for _n, p in plans):
            plans.append((f"{self.planner.plan.name} (current)", self.planner.plan))
        dialog = CompareDialog(plans, self, self.planner.ceilings)
        dialog.add_file.clicked.connect(lambda: self._compare_file(dialog, plans))
        dialog.exec()

    def _compare_file(self, dialog: CompareDialog, plans: list[tuple[str, Plan]]) -> None:
        from stripewise.planner.plan_file import PlanFileError, load_plan

        path = file_places.chosen(
            QFileDialog.getOpenFileName(
                self, says.ADD_PLAN_TO_COMPARE, file_places.start_folder(), "Plans (*.toml)"
            )[0]
        )
        if not path:
            return
        try:
            plan = load_plan(Path(path))
        except (PlanFileError, OSError) as exc:
            self.statusMessage.emit(str(exc))
            return
        plans.append((f"{plan.name} ({Path(path).name})", plan))
        dialog.set_plans(plans)

    def _add_hardware(self) -> None:
        from stripewise.gui.planner_catalog import CatalogDialog

        dialog = CatalogDialog(self.planner, self)
        dialog.exec()
        dialog.deleteLater()  # it follows the plan while open: no copy left listening

"""The Hardware page's Measure Ceiling: its button (the selected slot's controller), the item
in a controller card's context menu, the Virtual devices list's link (loop and RAM disks sit
under no controller), and the one scaling dialog open. Each is greyed with the reason while a
test cannot run: a file on show instead of this machine, no privileged helper, no disks."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMenu, QPushButton, QWidget

from stripewise.gui.scaling_dialog import ScalingDialog
from stripewise.model.scaling_set import DiskSet, ScalingSetError, controller_set, named_set
from stripewise.model.topology import Controller, Inventory
from stripewise.services.hardware import HardwareService
from stripewise.services.helper_client import HelperClient
from stripewise.services.history import HistoryService

MEASURE_VIRTUAL = "measure-virtual"  # the Virtual devices list's link
SELECT_FIRST = "Select a disk on the map, or right-click a controller's card."


class CeilingMeasure(QObject):
    statusMessage = Signal(str)

    def __init__(
        self,
        page: QWidget,
        hardware: HardwareService,
        helper: HelperClient,
        history: HistoryService | None,
    ) -> None:
        super().__init__(page)
        self._page = page
        self._hardware = hardware
        self._helper = helper
        self._history = history  # where a test is filed; none: nothing to measure into
        self.inventory: Inventory | None = None  # the map on show
        self.controller: Controller | None = None  # the selected slot's
        self.dialog: ScalingDialog | None = None  # the one open, if any
        self.button = QPushButton("Measure &Ceiling…")
        self.button.clicked.connect(self._measure_selected)
        helper.notice.connect(self.update)  # privileges lost: greyed with the reason
        self.update()

    def show_inventory(self, inventory: Inventory) -> None:
        self.inventory, self.controller = inventory, None  # the cards are new: none selected
        self.update()

    def select(self, controller: Controller) -> None:
        self.controller = controller
        self.update()

    def refusal(self, controller: Controller | None) -> str:
        """Why a scaling test cannot start now ("" when it can); `controller` None: disks
        picked by hand."""
        if self._history is None:
            return "No history to file the test in."
        if self.inventory is None or not self._hardware.origin.live:
            return (
                "The map shows a file: a scaling test reads this machine's own disks "
                "(This Machine)."
            )
        if self._helper.unavailable_reason:
            return f"Needs the privileged helper: {self._helper.unavailable_reason}"
        if self.dialog is not None and self.dialog.session.busy:
            return "A scaling test is running: one at a time."
        if controller is not None and not controller.disks:
            return f"{controller.model or controller.id} has no disks to read."
        return ""

    def update(self, _why: object = None) -> None:
        """The button's state and tooltip, as things stand (also when the privileges are
        settled: the window's system report, or the helper's notice)."""
        controller = self.controller
        why = self.refusal(controller) or ("" if controller else SELECT_FIRST)
        self.button.setEnabled(not why)
        shown = controller.model or controller.id if controller else ""
        self.button.setToolTip(
            why or f"Find where {shown}'s disks stop scaling: read-only, cited by the Planner"
        )

    def add_to_menu(self, controller: Controller, menu: QMenu) -> None:
        """A controller card's context menu item, greyed with the reason as the button."""
        action = menu.addAction("Measure Ceiling…", lambda: self.measure_controller(controller))
        why = self.refusal(controller)
        action.setEnabled(not why)
        action.setToolTip(why or "A read-only scaling test of this controller's disks")
        menu.setToolTipsVisible(True)

    def virtual_link(self, inventory: Inventory) -> str:
        """Below the Virtual devices list of this machine: a link to measure them."""
        if not self._hardware.origin.live or not any(d.size_bytes for d in inventory.virtual):
            return ""
        return (
            f"<p><a href='{MEASURE_VIRTUAL}'>Measure Ceiling of these…</a> (untick the ones "
            "to leave out)</p>"
        )

    def open_link(self, link: str) -> None:
        if link == MEASURE_VIRTUAL and self.inventory is not None:
            self.measure_disks(tuple(d.name for d in self.inventory.virtual if d.size_bytes))

    def _measure_selected(self) -> None:
        if self.controller is not None:
            self.measure_controller(self.controller)

    def measure_controller(self, controller: Controller) -> ScalingDialog | None:
        """Every disk under the controller, as `bench scaling --controller` picks them."""
        why = self.refusal(controller)
        if not why:
            try:
                chosen = controller_set(controller.id, self.inventory)
            except ScalingSetError as exc:
                why = str(exc)
        if why:
            self.statusMessage.emit(why)
            return None
        return self._open(chosen, f"{controller.model or 'controller'} {controller.id}")

    def measure_disks(self, names: tuple[str, ...]) -> ScalingDialog | None:
        """Disks picked by hand (loop and RAM disks have no controller on the map): they
        measure no link, so the Planner cites none, but the steps and outliers still tell."""
        inventory = self.inventory
        known = {d.name for d in (*inventory.disks, *inventory.virtual)} if inventory else set()
        unknown = [name for name in names if name not in known]
        why = self.refusal(None)
        if not why and (unknown or not names):
            why = f"Not on this machine's map: {', '.join(unknown) or 'no disks'}."
        if why:
            self.statusMessage.emit(why)
            return None
        return self._open(named_set(names, inventory), ", ".join(names))

    def _open(self, chosen: DiskSet, title: str) -> ScalingDialog:
        assert self._history is not None
        if self.dialog is not None:  # idle (refusal said so): the helper runs one test
            self.dialog.close()
        dialog = ScalingDialog(chosen, title, self._helper, self._history, self._page)
        dialog.session.started.connect(self.update)
        dialog.session.finished.connect(self.update)
        dialog.session.refused.connect(self.update)
        dialog.finished.connect(self._closed)  # a method: none once the page is gone
        self.dialog = dialog
        dialog.show()
        self.update()
        return dialog

    def shutdown(self) -> None:
        """The window closes: a running test is filed with what came."""
        if self.dialog is not None:
            self.dialog.session.shutdown()

    def _closed(self, _code: int) -> None:
        if self.dialog is not None and self.dialog is self.sender():
            self.dialog = None
            self.update()

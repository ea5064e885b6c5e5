"""The Tuning page: pick disks and arrays, pick a preset, see current -> new with units, then
apply, verify and revert through the helper; and each array's filesystem stripe geometry.

Everything that writes goes through the helper's journaled `tuning.*` verbs, so a revert is
possible even after the GUI (or the helper) crashed. What it lists and writes is this
machine's own, whatever map the Hardware page shows (`gui.tuning_devices`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableWidgetItem,
    QWidget,
)

from stripewise.gui.tuning_ab import ABDialog, ab_button, outcome_text
from stripewise.gui.tuning_devices import TuningDevices
from stripewise.gui.tuning_layout import build_layout
from stripewise.gui.tuning_notes import RestoredNote, geometry_text
from stripewise.gui.tuning_persist import PersistDialogs
from stripewise.gui.tuning_preview import NEW, PreviewTable, change_summary, gone_text, unwrap
from stripewise.model.ab import TARGET_HALF_WIDTH_PCT, ABFigure, ABOutcome
from stripewise.model.bench_targets import targets_from
from stripewise.model.plan import Plan
from stripewise.model.presets import CUSTOM, Preset
from stripewise.model.topology import Inventory
from stripewise.model.tunables import Change, TuningError
from stripewise.model.tuning_targets import planned_tuning
from stripewise.protocol.tuning import ApplyArgs, RevertArgs, VerifyArgs
from stripewise.protocol.tuning_replies import (
    ApplyReply,
    PutBack,
    RevertReply,
    TuningReply,
    VerifyReply,
)
from stripewise.protocol.verbs import BenchStartArgs, CapabilitiesArgs
from stripewise.services.ab_runner import ABRunner
from stripewise.services.bench_session import BenchSession
from stripewise.services.hardware import HardwareService
from stripewise.services.planner import PlannerService
from stripewise.services.tuning import (
    GeometryReport,
    PresetChoice,
    TuningService,
    edited_change,
    planned_geometry_report,
    settings_of,
    summary_of,
)

PICK = "Pick disks or arrays and a preset."
__all__ = ["TuningPage", "unwrap"]  # unwrap: where tests and callers found it


class TuningPage(QWidget):
    statusMessage = Signal(str)

    def __init__(
        self,
        service: TuningService,
        hardware: HardwareService,
        session: BenchSession | None = None,
        parent: QWidget | None = None,
        planner: PlannerService | None = None,
    ) -> None:
        super().__init__(parent)
        self.service = service
        self.hardware = hardware
        self.plan: Plan | None = planner.plan if planner is not None else None
        self._machine: Inventory | None = None  # this machine's own: what is listed and tuned
        self.ab = ABRunner(session, service, self) if session is not None else None
        self.ab_figures: list[ABFigure] = []
        self.ab_outcome: ABOutcome | None = None
        self.changes: list[Change] = []
        self.preset: Preset | None = None
        self.last_result: TuningReply | str | None = None  # the helper's answer; text: refused
        self._last_action = ""  # what Apply/Verify/Revert just did, kept above the preview
        self._edited = False  # values were typed into the preview
        self.persistence = PersistDialogs(service, self)
        self.persistence.done.connect(self._done)
        self.persistence.refused.connect(self._refused)
        self._gone: list[str] = []  # checked devices this machine no longer has
        self._replaced: list[str] = []  # checked devices another one took the name of
        self._asked: tuple[str, tuple[str, ...]] | None = None  # the preview being read

        self.targets = TuningDevices()
        self.targets.picked.connect(self._picked)
        self.devices = self.targets.list  # the rows, as tests and callers know them
        self.preset_box = QComboBox()
        self.preset_box.setAccessibleName("Preset")
        self.preset_box.currentIndexChanged.connect(lambda _i: self._selection_changed())
        self.description = QPlainTextEdit()
        self.description.setReadOnly(True)
        self.description.setMaximumHeight(110)
        self.preview = PreviewTable()
        self.preview.itemChanged.connect(self._on_value_typed)
        self.summary = QLabel(PICK)
        self.summary.setWordWrap(True)
        self.restored_note = RestoredNote()  # what the helper put back of an apply cut short
        self._asked_restored = False
        self.apply_button = QPushButton("&Apply")
        self.verify_button = QPushButton("Ver&ify")
        self.revert_button = QPushButton("&Revert")
        self.persist_button = QPushButton("Make &Persistent...")
        self.persist_button.setToolTip(
            "Write these values to a sysctl.d file and a udev rule keyed on each disk's "
            "identity, so they are set again at boot (shown before anything is written)"
        )
        self.unpersist_button = QPushButton("Re&move Persistent...")
        self.unpersist_button.setToolTip("Remove the boot-time files Stripewise wrote")
        self.unpersist_button.clicked.connect(self.remove_persistent)
        self.apply_button.clicked.connect(self.apply)
        self.verify_button.clicked.connect(self.verify)
        self.revert_button.clicked.connect(self.revert)
        self.persist_button.clicked.connect(self.persist)
        self.ab_button = ab_button()
        self.ab_button.clicked.connect(self.ask_ab)
        self.ab_button.setVisible(self.ab is not None)
        if self.ab is not None:
            self.ab.progress.connect(self._on_ab_progress)
            self.ab.finished.connect(self._on_ab_finished)
            self.ab.failed.connect(self._on_ab_failed)
        self.geometry_text = QPlainTextEdit()
        self.geometry_text.setReadOnly(True)
        self.geometry_text.setAccessibleName("Filesystem geometry")
        self.geometry_text.setPlaceholderText(
            "Select an md array to see the stride / stripe_width (ext4) and su / sw (XFS) it "
            "wants, with the mkfs and tune2fs commands, and its filesystem checked against it."
        )
        build_layout(self, self)
        self._enable()

        service.presetsLoaded.connect(self._on_presets)
        service.previewReady.connect(self._on_preview)
        service.geometryReady.connect(self._on_geometry)
        service.failed.connect(self._on_failed)
        hardware.machineChanged.connect(self._on_machine)
        hardware.machineFailed.connect(self._on_failed)
        hardware.inventoryChanged.connect(self._show_origin)
        service.helper.privilegesSettled.connect(self._ask_restored)  # shown before settled
        if planner is not None:
            planner.planChanged.connect(self._on_plan)
        self._show_origin()
        if hardware.machine is not None:
            self._on_machine(hardware.machine)
        elif self.plan is not None:
            self._fill_devices()
        service.load_presets()

    # --- inputs ----------------------------------------------------------------------------
    def _on_machine(self, machine: Inventory) -> None:
        self._machine = machine
        self._fill_devices()

    def _show_origin(self, _inventory: object = None) -> None:
        """Say so while the map on show is not this machine: its disks are not listed here."""
        origin = self.hardware.origin
        self.targets.show_elsewhere(origin.path)

    def _on_plan(self, plan: Plan, _report: object) -> None:
        """The planner reports every edit (a drag, a chunk size): the list and its preview are
        redone only when what the plan offers for tuning changed."""
        before = (self.plan.name if self.plan else None, list(self.targets.planned.values()))
        self.plan = plan
        if (plan.name, planned_tuning(plan, self._machine)) != before:
            self._fill_devices()

    def _fill_devices(self) -> None:
        """This machine's arrays and disks, then the plan's arrays by name; checks are kept.
        A checked device this machine no longer has is said to be gone, and stays unchecked."""
        vanished = self.targets.fill(self._machine, self.plan)
        listed = {
            self.devices.item(row).data(Qt.ItemDataRole.UserRole)
            for row in range(self.devices.count())
        }
        self._replaced = [*dict.fromkeys(self._replaced + self.targets.replaced)]
        self._gone = [name for name in dict.fromkeys(self._gone + vanished) if name not in listed]
        self._replaced = [name for name in self._replaced if name not in self._gone]
        self._selection_changed(keep_done=True)  # a re-read: hotplug, the apply's udev change

    def _picked(self) -> None:
        """The user checked or unchecked a row: a new choice, the devices gone are forgotten."""
        self._gone, self._replaced = [], []
        self._selection_changed()

    def select_devices(self, names: list[str]) -> None:
        """Check these rows: kernel names, or `plan:NAME` for a planned array. A new choice:
        devices gone from an earlier one are no longer mentioned."""
        self._gone, self._replaced = [], []
        self.targets.select(names)  # one preview for the whole selection, not one per row
        self._selection_changed()

    def selected_devices(self) -> list[str]:
        """Kernel names to tune: checked disks and arrays, and the devices of checked planned
        arrays (the md device once created, else the members this machine has), once each."""
        return self.targets.selected_devices()

    def _on_presets(self, choices: list[PresetChoice]) -> None:
        current = self.preset_box.currentData()
        self.preset_box.blockSignals(True)
        self.preset_box.clear()
        for choice in choices:
            label = f"{choice.name} (broken)" if choice.error else choice.name
            if choice.name == CUSTOM:
                label = "Custom: the current values, to change by hand"
            self.preset_box.addItem(label, choice.name)
            self.preset_box.setItemData(
                self.preset_box.count() - 1, choice.summary, Qt.ItemDataRole.ToolTipRole
            )
        index = self.preset_box.findData(current)
        self.preset_box.setCurrentIndex(max(0, index))
        self.preset_box.blockSignals(False)
        self._selection_changed()

    def _choice(self) -> PresetChoice | None:
        name = self.preset_box.currentData()
        return next((c for c in self.service.presets if c.name == name), None)

    def _selection_changed(self, keep_done: bool = False) -> None:
        self._last_action = self._last_action if keep_done else ""  # said till the admin acts
        choice = self._choice()
        self.description.setPlainText(
            (choice.error or unwrap(choice.description)) if choice else "No presets found."
        )
        devices = self.selected_devices()
        facts = self.targets.arrays
        arrays = [(a, *facts[a]) for a in devices if a in facts]
        planned_rows = self.targets.planned
        planned = [
            planned_geometry_report(planned_rows[key].array, self.plan)
            for key in self.targets.checked_keys()
            if key in planned_rows and planned_rows[key].created_as is None and self.plan
        ]
        if arrays or planned:
            self.service.check_geometry(arrays, planned)
        else:
            self.geometry_text.clear()
        if choice is None or choice.error or not devices:
            self._asked = None
            self.changes = []
            self._show_changes()
            return
        self._asked = (choice.name, tuple(devices))
        # rows of devices no longer selected (or gone) are never applied while the rest is read
        self.changes = [c for c in self.changes if c.setting.device in (None, *devices)]
        self._show_changes()
        self.summary.setText(f"{self._last_action} Reading the current values...".lstrip())
        self.service.preview(choice.name, devices)

    # --- preview ---------------------------------------------------------------------------
    def _on_preview(self, preset: Preset, changes: list[Change]) -> None:
        choice = self._choice()
        if choice is None or self._asked != (choice.name, tuple(self.selected_devices())):
            return  # read for a choice since changed (a device gone, another preset picked)
        self.preset, self.changes = preset, changes
        self._edited = False
        self._show_changes()

    def _show_changes(self) -> None:
        self.preview.show_changes(self.changes)
        self.summary.setText(self._summary_text())
        self._enable()

    def _summary_text(self) -> str:
        gone = f"{gone_text(self._gone, self._replaced)}: " if self._lost() else ""
        if self.changes:
            done = f"{self._last_action} " if self._last_action else ""
            count = len(settings_of(self.changes))
            if not count:  # nothing for Apply to write: never say it would (issue 29.8)
                what = "Every value is" if len(self.changes) > 1 else "The value is"
                if self.preset_box.currentData() == CUSTOM:  # the values in force, to type over
                    return f"{gone}{done}{what} as it is now: type a value under New to change it."
                return f"{gone}{done}{what} what the preset sets."
            now = "Still " if done else ""
            return (
                f"{gone}{done}{now}{change_summary(count, len(self.changes))}: Apply writes "
                f"{'it' if count == 1 else 'them'} through the helper, which journals the "
                "current values first."
            )
        if self._lost() and not self.selected_devices():
            return f"{gone}nothing to preview or apply; pick what to tune again."
        if self._asked is None:
            return self._nothing_here() or PICK
        return f"{gone}The preset sets nothing on the selected devices."

    def _nothing_here(self) -> str:
        """Planned arrays ticked whose disks are none of this machine's: said, not "Pick"."""
        keys = self.targets.checked_keys()
        if not keys or self.selected_devices() or not all(k in self.targets.planned for k in keys):
            return ""
        names = ", ".join(k.removeprefix("plan:") for k in keys)
        return (
            f"No disk of {names} is on this machine (found by WWN, serial or stable name): "
            "nothing to tune here; only the geometry shows."
        )

    def _label(self) -> str:
        """What the journal and the A/B runs' tags call these values."""
        name = self.preset.name if self.preset else CUSTOM
        return f"{name} (edited)" if self._edited and name != CUSTOM else name

    def _on_value_typed(self, item: QTableWidgetItem) -> None:
        row = item.row()
        if item.column() != NEW or not 0 <= row < len(self.changes):
            return
        try:
            change = edited_change(self.changes[row], item.text())
        except TuningError as exc:
            self._show_changes()  # the cell shows the value in force again
            self.summary.setText(f"Not taken: {exc}")
            return
        self.changes[row] = change
        self._edited = True
        self._show_changes()

    def _enable(self) -> None:
        why_not = self._why_not()
        for button in (self.apply_button, self.persist_button, self.ab_button):
            button.setEnabled(not why_not)
        self.apply_button.setToolTip(
            why_not
            or "Write the New values through the helper, which journals the current "
            "values first so Revert can put them back"
        )

    def _lost(self) -> bool:
        """Whether a device of the choice is gone or is another device now."""
        return bool(self._gone or self._replaced)

    def _why_not(self) -> str:
        """Why Apply (and Make Persistent, A/B) cannot run now; empty when they can."""
        if self.ab is not None and self.ab.running:
            return "An A/B benchmark is running: it applies and reverts the values itself"
        if settings_of(self.changes):
            return ""
        if self._lost() and not self.selected_devices():
            return f"{gone_text(self._gone, self._replaced)}: pick what to tune again"
        if not self.changes:
            return self._nothing_here() or PICK
        return "Every value is already what the preset sets: nothing to write"

    # --- A/B ---------------------------------------------------------------------------------
    def ask_ab(self) -> None:
        dialog = ABDialog(self, targets_from(self.hardware.machine))
        self.ab_dialog = dialog
        if dialog.exec() == QDialog.DialogCode.Accepted:
            args = dialog.bench_args()
            if args is None:
                self.summary.setText("A/B needs a directory on a mounted filesystem to run on")
                return
            self.start_ab(args, dialog.rounds.value())

    def start_ab(
        self,
        bench_args: BenchStartArgs,
        rounds: int,
        round_cap: int | None = None,
        target_pct: float = TARGET_HALF_WIDTH_PCT,
    ) -> None:
        assert self.ab is not None
        label = self._label()
        self.ab_figures = []
        self.ab.start(settings_of(self.changes), label, bench_args, rounds, round_cap, target_pct)
        self._enable()

    def _on_ab_progress(self, text: str) -> None:
        self.summary.setText(text)
        self.statusMessage.emit(text)

    def _on_ab_finished(self, outcome: ABOutcome) -> None:
        self.ab_outcome = outcome
        self.ab_figures = list(outcome.figures)
        self.geometry_text.setPlainText(outcome_text(outcome, self._label()))
        self.summary.setText("A/B done: the preset is reverted. Each run is in the History.")
        self._enable()

    def _on_ab_failed(self, message: str) -> None:
        self.summary.setText(f"A/B stopped: {message}")
        self._enable()

    # --- writes, through the helper -----------------------------------------------------------
    def apply(self) -> None:
        settings = settings_of(self.changes)
        label = self._label()
        self.summary.setText("Applying...")
        self._ask_restored(quietly=False)
        self.service.call(
            ApplyArgs(settings, label), lambda r: self._done("Applied", r), self._refused
        )

    def verify(self) -> None:
        self._ask_restored(quietly=False)
        self.service.call(VerifyArgs(), lambda r: self._done("Verified", r), self._refused)

    def revert(self) -> None:
        self._ask_restored(quietly=False)
        self.service.call(RevertArgs(), lambda r: self._done("Reverted", r), self._refused)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._ask_restored()

    def _ask_restored(self, quietly: bool = True) -> None:
        """What the helper put back as it started: asked when the page is first shown if that
        prompts for no password, else before its first verb (which may then be refused,
        with nothing to verify or revert)."""
        if not self._asked_restored and (
            not quietly or (self.isVisible() and self.service.asks_quietly())
        ):
            self._asked_restored = True
            self.service.call(
                CapabilitiesArgs(),
                lambda reply: self._tell_restored(reply.restored_at_start),
                lambda _message: None,  # the verb that follows says what is wrong
            )

    def persist(self) -> None:
        self.persistence.make_persistent(settings_of(self.changes))

    def remove_persistent(self) -> None:
        self.persistence.remove()

    def _done(self, what: str, result: TuningReply) -> None:
        self.last_result = result
        if isinstance(result, ApplyReply | VerifyReply | RevertReply):
            self._tell_restored(result.restored_at_start, read_again=False)  # read just below
        text = summary_of(what, result)
        self.statusMessage.emit(f"Tuning: {text}")
        self._selection_changed()  # re-read: the preview shows what is now in force
        self._last_action = text
        self.summary.setText(text)

    def _tell_restored(self, items: tuple[PutBack, ...], *, read_again: bool = True) -> None:
        """The helper put back what an apply killed half-way had left (as it started, or
        before an apply): said once, and kept above the summary; the preview is read again,
        as the values in force are no longer those it showed."""
        if (last := self.restored_note.tell(items)) is not None:
            self.statusMessage.emit(f"Tuning: {last}")
            if read_again:
                self._selection_changed()

    def _refused(self, message: str) -> None:
        self.last_result = message
        self.summary.setText(f"Not done: {message}")

    def _on_failed(self, message: str) -> None:
        self.changes = []
        self._show_changes()
        self.summary.setText(message)

    # --- geometry ---------------------------------------------------------------------------
    def _on_geometry(self, reports: list[GeometryReport]) -> None:
        self.geometry_text.setPlainText(geometry_text(reports))

"""Commands for a planned array, and building it through the helper after serials are typed.

Building acts on this machine's disks: each member is found here by WWN, serial or stable name
(`model.device_match`), never by the kernel name it had in the map it was planned on, and the
request names the disk found. A member not found here keeps Create on This Machine greyed,
with the reason (issue 29.1).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui import file_places
from stripewise.gui import help_dialogs as says
from stripewise.gui.screen_fit import resize_showing_all, scrolling_down
from stripewise.model.device_match import Here, found_here, not_here_text
from stripewise.model.plan import Plan, PlannedArray, RaidLevel
from stripewise.model.topology import Inventory
from stripewise.output_files import OutputFileError, write_output
from stripewise.protocol.verbs import ArrayCreateArgs, ArrayMember
from stripewise.services.helper_client import HelperClient
from stripewise.services.planner import PlannerService

CREATABLE = {RaidLevel.RAID0, RaidLevel.RAID1, RaidLevel.RAID5, RaidLevel.RAID6, RaidLevel.RAID10}


def creatable_reason(
    plan: Plan, array: PlannedArray, helper: HelperClient | None, machine: Inventory | None
) -> str:
    """Empty when the helper may build this array on this machine (`machine`: its own
    inventory, whatever map is on show)."""
    everyone = (*array.members, *array.spares)
    disks = [plan.disk(d) for d in everyone]
    if any(d is None or d.hypothetical for d in disks):
        return "The array uses disks that are not bought yet."
    if array.level not in CREATABLE:
        return "Nested arrays are built set by set: run the saved script."
    if machine is None:
        return "This machine's disks have not been read yet."
    found = found_here(plan, machine)
    missing = [d for d in everyone if d not in found]
    if missing:
        text = not_here_text(missing, plan)
        return f"{text[0].upper()}{text[1:]}. The commands are for the machine it was planned on."
    if helper is None:
        return "No privileged helper in this window."
    return helper.unavailable_reason


class SerialsDialog(QDialog):
    """One field per disk. The serials are not shown: the admin reads them off the drives."""

    def __init__(
        self,
        plan: Plan,
        array: PlannedArray,
        here: dict[str, Here] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Create {array.name}: confirm the disks")
        self.here = here or {}  # plan disk id -> this machine's disk: what is created on
        layout = QVBoxLayout(self)
        layout.addWidget(says.purpose_label(says.create_array(array.name)))
        fields = QWidget()
        form = QFormLayout(fields)
        self.fields: dict[str, QLineEdit] = {}
        for disk_id in (*array.members, *array.spares):
            disk = plan.disk(disk_id)
            found = self.here[disk_id].disk if disk_id in self.here else None
            field = QLineEdit()
            field.setPlaceholderText("serial number from the drive label")
            hint = field.fontMetrics().horizontalAdvance(field.placeholderText())
            field.setMinimumWidth(hint + 2 * field.fontMetrics().averageCharWidth())  # read whole
            field.setAccessibleName(f"Serial of {disk_id}")
            named = (
                disk_id
                if found is None or found.name == disk_id
                else f"{disk_id}, here {found.name}"
            )
            model = (found.model if found else None) or (disk.model if disk else None)
            where = (
                f"{named} ({model or 'model unknown'}, {disk.slot or disk.controller})"
                if disk
                else named
            )
            form.addRow(where, field)
            self.fields[disk_id] = field
        # a field per disk: 24 of them are taller than an 800x600 console, so they scroll and
        # Create Array stays in sight
        area = scrolling_down(fields)
        layout.addWidget(area, 1)
        self.overwrite = QCheckBox("Destroy what is on these disks (filesystems, partitions, RAID)")
        self.overwrite.setToolTip(
            "Without this, the helper refuses disks that carry anything it recognises"
        )
        layout.addWidget(self.overwrite)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.create_button = buttons.addButton(
            "Create Array", QDialogButtonBox.ButtonRole.AcceptRole
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        resize_showing_all(self, area)  # every field in sight where the screen has room

    def request_args(self, plan: Plan, array: PlannedArray) -> ArrayCreateArgs:
        def entry(disk_id: str) -> ArrayMember:  # the disk found here, by a name that stays
            return ArrayMember(self.here[disk_id].device, self.fields[disk_id].text().strip())

        return ArrayCreateArgs(
            array.name,
            array.level.value,
            None if array.level is RaidLevel.RAID1 else array.chunk_kib,
            tuple(entry(d) for d in array.members),
            tuple(entry(d) for d in array.spares),
            self.overwrite.isChecked(),
        )


def show_commands(
    page: QWidget,
    planner: PlannerService,
    name: str,
    helper: HelperClient | None = None,
    machine: Inventory | None = None,
    shown: Inventory | None = None,
) -> None:
    """The script `stripewise plan FILE --script` writes for a plan of this one array (with
    `--inventory` of the machine planned on, `shown` or `machine` when either is that one)."""
    from stripewise.gui.planner_dialogs import CommandsDialog
    from stripewise.planner.commands import PlanNotReady
    from stripewise.planner.script import homehost, shell_script

    plan = planner.plan
    array = plan.array(name)
    report = next((r for r in planner.report.arrays if r.array.name == name), None)
    if array is None or report is None or not report.ok:
        return  # the card keeps the button disabled while the array has problems
    planned_on = next((i for i in (shown, machine) if i and i.host.key == plan.host), None)
    try:
        script = shell_script(replace(plan, arrays=(array,)), (report,), homehost(plan, planned_on))
    except PlanNotReady as exc:  # the card disables the button first; this is the last guard
        planner.failed.emit(str(exc))
        return
    dialog = CommandsDialog(f"Commands for {name}", script, page, says.show_commands(name))
    dialog.save.clicked.connect(lambda: _save_script(dialog, script, name))
    reason = creatable_reason(plan, array, helper, machine)
    create = QPushButton("Create on This &Machine…")
    create.setEnabled(not reason)
    create.setToolTip(reason)
    dialog.create_button = create
    body = dialog.layout()
    assert body is not None  # CommandsDialog lays itself out when built
    body.addWidget(create)
    if reason:  # said beside the button, not only in a tooltip
        why = QLabel(reason)
        why.setWordWrap(True)
        why.setAccessibleName("Why it cannot be created here")
        body.addWidget(why)
    here = found_here(plan, machine)
    create.clicked.connect(lambda: _create(dialog, plan, array, helper, here))
    dialog.exec()


def _save_script(parent: QWidget, script: str, name: str) -> None:
    path = file_places.chosen(
        QFileDialog.getSaveFileName(
            parent,
            says.save_script(name),
            file_places.suggested(f"create-{file_places.file_stem(name)}.sh"),
            "Shell scripts (*.sh)",
        )[0]
    )
    if not path:
        return
    try:
        write_output(Path(path), script, mode=0o700)  # as `plan --script` writes it
    except OutputFileError as exc:
        QMessageBox.warning(parent, says.save_script(name), str(exc))


def _create(
    parent: QWidget,
    plan: Plan,
    array: PlannedArray,
    helper: HelperClient | None,
    here: dict[str, Here],
) -> None:
    if helper is None:
        return
    dialog = SerialsDialog(plan, array, here, parent)
    if not dialog.exec():
        return
    result = QLabel("Asking the helper…")
    result.setWordWrap(True)
    body = parent.layout()
    assert body is not None  # the commands dialog, laid out when built
    body.addWidget(result)
    helper.request(
        dialog.request_args(plan, array),
        lambda answer: result.setText(f"Created: {' '.join(answer.argv)}"),
        lambda error: result.setText(f"Not created: {error}"),
    )

"""Commands for a planned array, and building it through the helper after serials are typed."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui import help_dialogs as says
from stripewise.model.plan import Plan, PlannedArray, RaidLevel
from stripewise.protocol.verbs import ArrayCreateArgs, ArrayMember
from stripewise.services.helper_client import HelperClient
from stripewise.services.planner import PlannerService

CREATABLE = {RaidLevel.RAID0, RaidLevel.RAID1, RaidLevel.RAID5, RaidLevel.RAID6, RaidLevel.RAID10}


def creatable_reason(plan: Plan, array: PlannedArray, helper: HelperClient | None) -> str:
    """Empty when the helper may build this array on this machine."""
    disks = [plan.disk(d) for d in (*array.members, *array.spares)]
    if any(d is None or d.hypothetical for d in disks):
        return "The array uses disks that are not bought yet."
    if array.level not in CREATABLE:
        return "Nested arrays are built set by set: run the saved script."
    if helper is None:
        return "No privileged helper in this window."
    return helper.unavailable_reason


class SerialsDialog(QDialog):
    """One field per disk. The serials are not shown: the admin reads them off the drives."""

    def __init__(self, plan: Plan, array: PlannedArray, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Create {array.name}: confirm the disks")
        layout = QVBoxLayout(self)
        layout.addWidget(says.purpose_label(says.create_array(array.name)))
        form = QFormLayout()
        self.fields: dict[str, QLineEdit] = {}
        for disk_id in (*array.members, *array.spares):
            disk = plan.disk(disk_id)
            field = QLineEdit()
            field.setPlaceholderText("serial number from the drive label")
            field.setAccessibleName(f"Serial of {disk_id}")
            where = f"{disk_id} ({disk.model or 'model unknown'}, {disk.slot or disk.controller})"
            form.addRow(where if disk else disk_id, field)
            self.fields[disk_id] = field
        layout.addLayout(form)
        self.overwrite = QCheckBox("Destroy what is on these disks (filesystems, partitions, RAID)")
        self.overwrite.setToolTip(
            "Without this, the helper refuses disks that carry anything it recognises"
        )
        layout.addWidget(self.overwrite)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.create = buttons.addButton("Create Array", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def request_args(self, plan: Plan, array: PlannedArray) -> ArrayCreateArgs:
        def entry(disk_id: str) -> ArrayMember:
            disk = plan.disk(disk_id)
            device = disk.stable_path if disk and disk.stable_path else f"/dev/{disk_id}"
            return ArrayMember(device, self.fields[disk_id].text().strip())

        return ArrayCreateArgs(
            array.name,
            array.level.value,
            None if array.level is RaidLevel.RAID1 else array.chunk_kib,
            tuple(entry(d) for d in array.members),
            tuple(entry(d) for d in array.spares),
            self.overwrite.isChecked(),
        )


def show_commands(
    page: QWidget, planner: PlannerService, name: str, helper: HelperClient | None = None
) -> None:
    from stripewise.gui.planner_dialogs import CommandsDialog
    from stripewise.planner.commands import PlanNotReady, shell_script

    plan = planner.plan
    array = plan.array(name)
    report = next((r for r in planner.report.arrays if r.array.name == name), None)
    if array is None or report is None or not report.ok:
        return  # the card keeps the button disabled while the array has problems
    single = Plan(
        name=plan.name,
        controllers=plan.controllers,
        disks=plan.disks,
        arrays=(array,),
        host=plan.host,
        currency=plan.currency,
    )
    try:
        script = shell_script(single, (report,))
    except PlanNotReady as exc:  # the card disables the button first; this is the last guard
        planner.failed.emit(str(exc))
        return
    dialog = CommandsDialog(f"Commands for {name}", script, page, says.show_commands(name))
    dialog.save.clicked.connect(lambda: _save_script(dialog, script, name))
    reason = creatable_reason(plan, array, helper)
    create = QPushButton("Create on This &Machine…")
    create.setEnabled(not reason)
    create.setToolTip(reason)
    dialog.layout().addWidget(create)
    create.clicked.connect(lambda: _create(dialog, plan, array, helper))
    dialog.exec()


def _save_script(parent: QWidget, script: str, name: str) -> None:
    path, _ = QFileDialog.getSaveFileName(
        parent, says.save_script(name), f"create-{name}.sh", "Shell scripts (*.sh)"
    )
    if path:
        Path(path).write_text(script, encoding="utf-8")


def _create(parent: QWidget, plan: Plan, array: PlannedArray, helper: HelperClient | None) -> None:
    if helper is None:
        return
    dialog = SerialsDialog(plan, array, parent)
    if not dialog.exec():
        return
    result = QLabel("Asking the helper…")
    result.setWordWrap(True)
    parent.layout().addWidget(result)
    helper.request(
        dialog.request_args(plan, array),
        lambda answer: result.setText(f"Created: {' '.join(answer.argv)}"),
        lambda error: result.setText(f"Not created: {error}"),
    )

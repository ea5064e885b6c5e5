"""The Tuning page's left side: what can be tuned on this machine, and a note when the map on
show is another one.

The rows come from this machine's own inventory (`HardwareService.machine`), never from the
map on show: a recording of another server has an sdk too, and tuning it would write to this
machine's sdk (issue 29.1). The plan's arrays are listed by their plan names, tuned through
the member disks found here by WWN, serial or stable name.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from stripewise.model.disk_words import disk_summary
from stripewise.model.plan import Plan
from stripewise.model.topology import Disk, DiskKind, Inventory
from stripewise.model.tuning_targets import PlannedTuning, planned_tuning
from stripewise.model.wording import count_noun

ArrayFacts = tuple[str | None, int, int | None, str | None]  # level, members, chunk KiB, fs


def elsewhere_text(shown: str) -> str:
    """The note above the list while the map on show is not this machine."""
    return (
        f"The Hardware page shows {shown}, not this machine. Listed here are this machine's "
        "own disks: tuning acts on them only."
    )


def who_is(disk: Disk) -> str:
    """What a row was checked for: the disk by its WWN or serial (a disk probed again is still
    that disk); without either, what is in it now (a loop device attached again, under the
    same name, is another device)."""
    if disk.wwn or disk.serial:
        return disk.identity
    return f"{disk.identity} diskseq {disk.diskseq}"


class TuningDevices(QWidget):
    """Checkable rows: md arrays and disks of this machine, then the plan's arrays."""

    picked = Signal()  # the user checked or unchecked a row

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.arrays: dict[str, ArrayFacts] = {}
        self.planned: dict[str, PlannedTuning] = {}  # "plan:NAME" -> what it tunes
        self.replaced: list[str] = []  # checked at the last fill, another device there now
        self._who: dict[str, str] = {}  # a disk's or array's row -> who_is() when listed
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setFrameShape(QFrame.Shape.StyledPanel)
        self.note.setMargin(6)
        self.note.setAccessibleName("Which machine is tuned")
        self.note.setVisible(False)
        self.list = QListWidget()
        self.list.setAccessibleName("Disks and arrays to tune")
        # a label too long for the pane wraps (and is re-wrapped as the pane is resized)
        # rather than scrolling sideways out of sight
        self.list.setWordWrap(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.itemChanged.connect(lambda _item: self.picked.emit())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 8, 0)
        heading = QLabel("Disks and arrays of this machine")
        heading.setWordWrap(True)  # the list is the first to give way on a narrow screen
        layout.addWidget(heading)
        layout.addWidget(self.note)
        layout.addWidget(self.list, 1)

    def show_elsewhere(self, shown: Path | None) -> None:
        """`shown`: the file on show when the map is not this machine's, else None."""
        self.note.setText(elsewhere_text(shown.name) if shown else "")
        self.note.setToolTip(str(shown) if shown else "")
        self.note.setVisible(shown is not None)

    def fill(self, machine: Inventory | None, plan: Plan | None) -> list[str]:
        """Rows for this machine's arrays and disks, then the plan's arrays; checks are kept
        for the same device. Returns the checked keys no longer listed (gone); those listed
        again for another device are `replaced`. Neither stays checked."""
        checked = set(self.checked_keys())
        self.arrays = {}
        self.planned = {}
        rows = self._listed(machine)
        before, self._who = self._who, {name: who for name, _label, who in rows}
        self.replaced = [
            name
            for name in sorted(checked)
            if name in before and name in self._who and before[name] != self._who[name]
        ]
        checked -= set(self.replaced)
        self.list.blockSignals(True)
        self.list.clear()
        for name, label, _who in rows:
            self._add(name, label, checked)
        self._add_planned(machine, plan, checked)
        self.list.blockSignals(False)
        listed = {
            self.list.item(r).data(Qt.ItemDataRole.UserRole) for r in range(self.list.count())
        }
        return sorted(k for k in checked if k not in listed and not k.startswith("plan:"))

    def _listed(self, machine: Inventory | None) -> list[tuple[str, str, str]]:
        """(key, label, who_is) of this machine's arrays, then its disks; `arrays` filled."""
        if machine is None:
            return []
        rows = []
        for array in machine.arrays:
            if array.kind is not DiskKind.ARRAY:
                continue
            fs = next(
                (d.fs_type for d in machine.virtual if d.name == array.name and d.fs_type), None
            )
            self.arrays[array.name] = (array.level, len(array.members), array.chunk_kib, fs)
            members = count_noun(len(array.members), "member")
            label = f"{array.name}  ({array.level or 'md'}, {members})"
            rows.append((array.name, label, f"md uuid {array.uuid}"))  # md0 made again: another
        for disk in (*machine.disks, *machine.virtual):
            if disk.kind is DiskKind.VIRTUAL and not (
                disk.name.startswith("loop") and disk.size_bytes
            ):
                continue  # zram, ram disks and unattached loop devices have nothing to tune
            rows.append((disk.name, f"{disk.name}  ({disk_summary(disk)})", who_is(disk)))
        return rows

    def _add_planned(self, machine: Inventory | None, plan: Plan | None, checked: set[str]) -> None:
        planned = planned_tuning(plan, machine) if plan is not None else []
        if plan is None or not planned:
            return
        heading = QListWidgetItem(f"From the plan \u201c{plan.name}\u201d")
        heading.setFlags(Qt.ItemFlag.NoItemFlags)
        self.list.addItem(heading)
        for target in planned:
            key = f"plan:{target.array.name}"
            self.planned[key] = target
            self._add(key, target.label, checked)
            if not target.devices:
                item = self.list.item(self.list.count() - 1)
                item.setToolTip(
                    "None of its disks is on this machine (found by WWN, serial or stable "
                    "name): only its geometry shows"
                )

    def _add(self, name: str, label: str, checked: set[str]) -> None:
        item = QListWidgetItem(label)
        item.setToolTip(label)
        item.setData(Qt.ItemDataRole.UserRole, name)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if name in checked else Qt.CheckState.Unchecked)
        self.list.addItem(item)

    def select(self, names: list[str]) -> None:
        """Check exactly these rows, with one signal for the whole choice."""
        self.list.blockSignals(True)
        for row in range(self.list.count()):
            item = self.list.item(row)
            wanted = item.data(Qt.ItemDataRole.UserRole) in names
            item.setCheckState(Qt.CheckState.Checked if wanted else Qt.CheckState.Unchecked)
        self.list.blockSignals(False)

    def checked_keys(self) -> list[str]:
        return [
            str(item.data(Qt.ItemDataRole.UserRole))
            for item in (self.list.item(row) for row in range(self.list.count()))
            if item.data(Qt.ItemDataRole.UserRole) is not None
            and item.checkState() is Qt.CheckState.Checked
        ]

    def selected_devices(self) -> list[str]:
        """Kernel names to tune: checked disks and arrays, and the devices of checked planned
        arrays (the md device once created, else the members found here), once each."""
        names: list[str] = []
        for key in self.checked_keys():
            for name in self.planned[key].devices if key in self.planned else (key,):
                if name not in names:
                    names.append(name)
        return names

"""Where a benchmark runs: this machine (the form's target), a stored host group, or hosts
typed in, and for hosts the directory the test file goes in on each of them.

Sits on the Benchmark page above the form; "Host Groups..." beside it opens the editor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from stripewise.model.bench import SpecError
from stripewise.model.host_address import HostAddress, HostAddressError, parse_host
from stripewise.model.host_group import HostGroup, unique_hosts

if TYPE_CHECKING:
    from stripewise.gui.bench_form import BenchForm

THIS_MACHINE = "This machine"
TYPED_HOSTS = "Hosts typed in"
DEFAULT_REMOTE_PATH = "/var/tmp"
TYPED_PLACEHOLDER = "HOST:PORT ssh://host ..."


class GroupTarget(QWidget):
    """The "Run on" row: `hosts()` is empty for this machine."""

    changed = Signal()  # this machine <-> hosts, or other hosts
    editGroups = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._groups: dict[str, HostGroup] = {}
        self._running = False
        self._typed_text = ""  # what was typed, while a group or this machine is chosen
        self._shown = THIS_MACHINE
        self.where = QComboBox()
        self.where.setAccessibleName("Run on")
        self.where.setToolTip("This machine, a host group, or hosts typed in (fio client mode)")
        self.where.addItem(THIS_MACHINE)
        self.where.addItem(TYPED_HOSTS)
        self.where.currentIndexChanged.connect(self._on_where)
        self.edit_button = QPushButton("Host Groups\u2026")
        self.edit_button.setToolTip("Add, remove and check host groups")
        self.edit_button.clicked.connect(self.editGroups)
        self.typed = QLineEdit()
        self.typed.setAccessibleName("Hosts")
        self.typed.setPlaceholderText(TYPED_PLACEHOLDER)
        self.typed.setToolTip("Hosts separated by spaces or commas")
        self.typed.textEdited.connect(self._check_typed)
        self.path = QLineEdit(DEFAULT_REMOTE_PATH)
        self.path.setAccessibleName("Directory on the hosts")
        self.path.setToolTip("The test file goes in this directory on every host")
        self.path.textEdited.connect(self._check_typed)  # its error goes as it is corrected
        self.error = QLabel()
        self.error.setObjectName("fieldError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c9403c;")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.where, 1)
        row.addWidget(self.edit_button)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self._where_label = QLabel("R&un on")
        self._where_label.setBuddy(self.where)
        form.addRow(self._where_label, row)
        self._typed_label = QLabel("H&osts")
        self._typed_label.setBuddy(self.typed)
        form.addRow(self._typed_label, self.typed)
        self._path_label = QLabel("&Directory")
        self._path_label.setBuddy(self.path)
        form.addRow(self._path_label, self.path)
        form.addRow("", self.error)
        self._on_where()

    def set_groups(self, groups: list[HostGroup]) -> None:
        """The stored groups, listed between this machine and typed hosts; the choice stays."""
        chosen = self.where.currentText()
        self._groups = {g.name: g for g in groups}
        self.where.blockSignals(True)
        self.where.clear()
        self.where.addItem(THIS_MACHINE)
        for group in groups:
            self.where.addItem(group.name)
            self.where.setItemData(
                self.where.count() - 1, ", ".join(group.labels) or "no hosts yet"
            )
        self.where.addItem(TYPED_HOSTS)
        index = self.where.findText(chosen)
        self.where.setCurrentIndex(max(0, index))
        self.where.blockSignals(False)
        self._on_where()

    @property
    def on_hosts(self) -> bool:
        return self.where.currentText() != THIS_MACHINE

    @property
    def group_name(self) -> str | None:
        name = self.where.currentText()
        return name if name in self._groups else None

    def choose(self, text: str) -> None:
        """Pick this machine, a group by name, or typed hosts."""
        index = self.where.findText(text)
        if index < 0:
            raise KeyError(text)
        self.where.setCurrentIndex(index)

    def hosts(self) -> tuple[HostAddress, ...]:
        """The hosts to run on (none: this machine); SpecError with one line when they are
        not usable."""
        if not self.on_hosts:
            return ()
        group = self._groups.get(self.where.currentText())
        if group is not None:
            if not group.hosts:
                raise SpecError(f"group {group.name} has no hosts: add some in Host Groups")
            return group.hosts
        words = self.typed.text().replace(",", " ").split()
        if not words:
            raise SpecError("type the hosts to run on: HOST:PORT or ssh://[user@]host")
        try:
            return unique_hosts([parse_host(word) for word in words])
        except HostAddressError as exc:
            raise SpecError(str(exc)) from None

    def remote_path(self) -> str:
        path = self.path.text().strip()
        if not path.startswith("/"):
            raise SpecError("directory on the hosts: an absolute path, e.g. /var/tmp")
        return path

    def set_running(self, running: bool) -> None:
        self._running = running
        self._enable()

    def align_labels(self, width: int) -> None:
        """Labels as wide as the form's below, so the fields of both line up."""
        for label in (self._where_label, self._typed_label, self._path_label):
            label.setMinimumWidth(width)

    def align_with(self, form: BenchForm) -> None:
        """The labels as wide as those of the form's first rows, which sit below."""
        outer = form.layout()
        first = outer.itemAt(0) if outer is not None else None
        inner = first.layout() if first is not None else None
        if not isinstance(inner, QFormLayout):
            return
        widths = []
        for row in range(inner.rowCount()):
            item = inner.itemAt(row, QFormLayout.ItemRole.LabelRole)
            label = item.widget() if item is not None else None
            if label is not None:
                widths.append(label.sizeHint().width())
        if widths:
            self.align_labels(max(widths))

    def _enable(self) -> None:
        """Every row stays on show (the form does not move); what does not apply is off."""
        free = not self._running
        typed = self.where.currentText() == TYPED_HOSTS
        rows: list[tuple[tuple[QWidget, ...], bool]] = [
            ((self._where_label, self.where, self.edit_button), free),
            ((self._typed_label, self.typed), free and typed),
            ((self._path_label, self.path), free and self.on_hosts),
        ]
        for widgets, enabled in rows:
            for widget in widgets:
                widget.setEnabled(enabled)

    def _on_where(self, *_args: object) -> None:
        where, before = self.where.currentText(), self._shown
        self._shown = where
        group = self._groups.get(where)
        if before == TYPED_HOSTS and where != TYPED_HOSTS:
            self._typed_text = self.typed.text()  # kept for when typed hosts come back
        if where == TYPED_HOSTS:
            if before != TYPED_HOSTS:
                self.typed.setText(self._typed_text)
            self.typed.setPlaceholderText(TYPED_PLACEHOLDER)
        else:
            self.typed.setText(" ".join(group.labels) if group else "")
            self.typed.setPlaceholderText(
                "this machine: the Target below" if group is None else "no hosts yet"
            )
        self.typed.setCursorPosition(0)
        self.where.setToolTip(", ".join(group.labels) if group else "")
        self.error.clear()
        self.error.setVisible(False)
        self._enable()
        self.changed.emit()

    def _check_typed(self, _text: str) -> None:
        """Checked as it is typed: the hosts (once some are), then the directory."""
        problem = None
        try:
            self.hosts()
        except SpecError as exc:
            if self.typed.text().strip():
                problem = str(exc)
        if problem is None and self.on_hosts:
            try:
                self.remote_path()
            except SpecError as exc:
                problem = str(exc)
        self.error.setText(problem or "")
        self.error.setVisible(problem is not None)


def hold_local_rows(form: BenchForm) -> None:
    """On hosts, the form's rows that only a run on this machine uses are off: its target and
    the device confirmation, the CPU latency limit (only this machine's helper can hold one)
    and steady state (only the helper runs rounds; a fio server runs each phase once)."""
    for widget in (
        form.target,
        form.browse,
        form.confirm,
        form.overwrite,
        form.confirm_label,
        form.hold_cpu_latency,
        form.cpu_latency,
        form.steady,
    ):
        widget.setEnabled(False)

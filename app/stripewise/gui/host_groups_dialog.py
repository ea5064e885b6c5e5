"""Host Groups...: named lists of hosts benchmarked together, kept in the history database.

Groups on the left, the chosen group's hosts on the right. A host is typed as `HOST:PORT` (a
running fio server) or `ssh://[user@]host`, checked as typed (the error shows under the field);
Check asks every host of the group, each in the background, whether it answers, its fio
version and whether that speaks this fio's protocol. Every change is saved at once.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui.help_dialogs import HOST_GROUPS, purpose_label
from stripewise.gui.screen_fit import resize_within_screen
from stripewise.gui.tables import Table
from stripewise.model.host_address import HostAddress, HostAddressError, parse_host
from stripewise.model.host_group import HostGroup, check_group_name, unique_hosts
from stripewise.services.host_groups import HostGroupsService

HOST_HEADERS = ("Host", "Reachable", "fio", "Protocol", "Note")
UNSAVED_NOTE = "not saved until it has a host"


class HostGroupsDialog(QDialog):
    def __init__(self, service: HostGroupsService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Host Groups")
        self.service = service
        self._groups: dict[str, HostGroup] = {}
        self._unsaved: set[str] = set()  # new groups without hosts: kept here until a host
        self._checking: set[HostAddress] = set()

        self.groups = QListWidget()
        self.groups.setAccessibleName("Host groups")
        self.groups.currentTextChanged.connect(self._show_group)
        self.group_name = QLineEdit()
        self.group_name.setPlaceholderText("new group name, e.g. site-a")
        self.group_name.setAccessibleName("New group name")
        self.group_name.returnPressed.connect(self.add_group)
        self.add_group_button = QPushButton("Add Group")
        self.add_group_button.clicked.connect(self.add_group)
        self.remove_group_button = QPushButton("Remove Group")
        self.remove_group_button.clicked.connect(self.remove_group)
        self.group_error = _error_label()

        self.hosts = Table(0, len(HOST_HEADERS))
        self.hosts.setHorizontalHeaderLabels(HOST_HEADERS)
        self.hosts.setAccessibleName("Hosts of the group")
        self.hosts.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.hosts.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.hosts.verticalHeader().hide()
        header = self.hosts.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.host_text = QLineEdit()
        self.host_text.setPlaceholderText("HOST:PORT or ssh://[user@]host")
        self.host_text.setAccessibleName("Host to add")
        self.host_text.textEdited.connect(self._validate_host)
        self.host_text.returnPressed.connect(self.add_host)
        self.add_host_button = QPushButton("Add Host")
        self.add_host_button.clicked.connect(self.add_host)
        self.remove_host_button = QPushButton("Remove Host")
        self.remove_host_button.clicked.connect(self.remove_host)
        self.check_button = QPushButton("Check")
        self.check_button.setToolTip("Ask every host: reachable, fio version, protocol match")
        self.check_button.clicked.connect(self.check)
        self.host_error = _error_label()
        self.status = QLabel()
        self.status.setWordWrap(True)

        self._build_layout()
        service.groupsLoaded.connect(self._on_groups)
        service.hostChecked.connect(self._on_checked)
        service.failed.connect(self._on_failed)
        self._on_groups(service.groups)
        service.load()
        self._update_buttons()

    def _build_layout(self) -> None:
        grid = QGridLayout()
        left = QVBoxLayout()
        left.addWidget(QLabel("Groups"))
        left.addWidget(self.groups, 1)
        new_group = QHBoxLayout()
        new_group.addWidget(self.group_name, 1)
        new_group.addWidget(self.add_group_button)
        left.addLayout(new_group)
        left.addWidget(self.group_error)
        left.addWidget(self.remove_group_button)
        right = QVBoxLayout()
        right.addWidget(QLabel("Hosts"))
        right.addWidget(self.hosts, 1)
        new_host = QHBoxLayout()
        new_host.addWidget(self.host_text, 1)
        new_host.addWidget(self.add_host_button)
        right.addLayout(new_host)
        right.addWidget(self.host_error)
        host_buttons = QHBoxLayout()
        host_buttons.addWidget(self.remove_host_button)
        host_buttons.addStretch(1)
        host_buttons.addWidget(self.check_button)
        right.addLayout(host_buttons)
        grid.addLayout(left, 0, 0)
        grid.addLayout(right, 0, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 3)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(purpose_label(HOST_GROUPS))
        layout.addLayout(grid, 1)
        layout.addWidget(self.status)
        layout.addWidget(close)
        resize_within_screen(self, QSize(820, 460))

    # --- groups -------------------------------------------------------------------------------
    def current_group(self) -> HostGroup | None:
        name = self.groups.currentItem().text() if self.groups.currentItem() else ""
        return self._groups.get(name)

    def _on_groups(self, groups: list[HostGroup]) -> None:
        current = self.current_group()
        self._groups = {g.name: g for g in groups}
        self._unsaved -= set(self._groups)
        for name in self._unsaved:
            self._groups[name] = HostGroup(name, ())
        self.groups.blockSignals(True)
        self.groups.clear()
        for name in sorted(self._groups):
            self.groups.addItem(name)
        self.groups.blockSignals(False)
        wanted = current.name if current is not None else None
        found = self.groups.findItems(wanted, Qt.MatchFlag.MatchExactly) if wanted else []
        if found:
            self.groups.setCurrentItem(found[0])
        elif self.groups.count():
            self.groups.setCurrentRow(0)
        self._show_group()

    def add_group(self) -> None:
        try:
            name = check_group_name(self.group_name.text())
        except ValueError as exc:
            self.group_error.setText(str(exc))
            return
        if name in self._groups:
            self.group_error.setText(f"group {name} exists already")
            return
        self.group_error.clear()
        self.group_name.clear()
        self._unsaved.add(name)
        self._groups[name] = HostGroup(name, ())
        self.groups.addItem(name)
        self.groups.setCurrentItem(self.groups.findItems(name, Qt.MatchFlag.MatchExactly)[0])
        self.host_text.setFocus()

    def remove_group(self) -> None:
        group = self.current_group()
        if group is None:
            return
        self._groups.pop(group.name, None)
        if group.name in self._unsaved:
            self._unsaved.discard(group.name)
            self._on_groups([g for n, g in self._groups.items() if n not in self._unsaved])
            return
        self.status.setText(f"Removing group {group.name}...")
        self.service.remove(group.name, lambda: self.status.setText(f"Removed {group.name}."))

    # --- hosts --------------------------------------------------------------------------------
    def _validate_host(self, text: str) -> HostAddress | None:
        if not text.strip():
            self.host_error.clear()
            return None
        try:
            address = parse_host(text)
        except HostAddressError as exc:
            self.host_error.setText(str(exc))
            return None
        self.host_error.clear()
        return address

    def add_host(self) -> None:
        group = self.current_group()
        if group is None:
            self.host_error.setText("add or pick a group first")
            return
        address = self._validate_host(self.host_text.text())
        if address is None:
            if not self.host_text.text().strip():
                self.host_error.setText("type a host: HOST:PORT or ssh://[user@]host")
            return
        if address in group.hosts:
            self.host_error.setText(f"{address.label} is in {group.name} already")
            return
        self.host_text.clear()
        self._save(HostGroup(group.name, unique_hosts((*group.hosts, address))))

    def remove_host(self) -> None:
        group = self.current_group()
        row = self.hosts.currentRow()
        if group is None or not 0 <= row < len(group.hosts):
            return
        self._save(HostGroup(group.name, group.hosts[:row] + group.hosts[row + 1 :]))

    def _save(self, group: HostGroup) -> None:
        self._groups[group.name] = group  # shown at once; the listing after the write agrees
        self._unsaved.discard(group.name)
        self._show_group()
        self.service.save(group)

    def _show_group(self, *_args: object) -> None:
        group = self.current_group()
        hosts = group.hosts if group is not None else ()
        self.hosts.setRowCount(len(hosts))
        for row, address in enumerate(hosts):
            cells = (address.label, "", "", "", "")
            if group is not None and group.name in self._unsaved:
                cells = (address.label, "", "", "", UNSAVED_NOTE)
            for column, text in enumerate(cells):
                self.hosts.setItem(row, column, QTableWidgetItem(text))
        if group is not None and group.name in self._unsaved:
            self.status.setText(f"{group.name}: {UNSAVED_NOTE}.")
        self._update_buttons()

    def _update_buttons(self) -> None:
        group = self.current_group()
        has_hosts = group is not None and bool(group.hosts)
        self.remove_group_button.setEnabled(group is not None)
        self.add_host_button.setEnabled(group is not None)
        self.remove_host_button.setEnabled(has_hosts)
        self.check_button.setEnabled(has_hosts and not self._checking)

    # --- checks -------------------------------------------------------------------------------
    def check(self) -> None:
        group = self.current_group()
        if group is None or not group.hosts:
            return
        self._checking = set(group.hosts)
        for row in range(self.hosts.rowCount()):
            self.hosts.setItem(row, 4, QTableWidgetItem("checking..."))
        self.status.setText(f"Checking {len(group.hosts)} hosts of {group.name}...")
        self._update_buttons()
        self.service.check(group.hosts)

    def _on_checked(self, check: object) -> None:
        address = getattr(check, "address", None)
        self._checking.discard(address)
        group = self.current_group()
        if group is not None and address in group.hosts:
            row = group.hosts.index(address)
            for column, text in enumerate(check_cells(check)):
                item = QTableWidgetItem(text)
                if column == 4:
                    item.setToolTip(text)
                self.hosts.setItem(row, column, item)
        if not self._checking:
            self.status.setText("Checked.")
        self._update_buttons()

    def _on_failed(self, message: str) -> None:
        self.status.setText(message)

    def host_row(self, label: str) -> tuple[str, ...]:
        """The cells of the host shown as `label` (for tests and the manual's examples)."""
        for row in range(self.hosts.rowCount()):
            cells = tuple(_text(self.hosts.item(row, c)) for c in range(len(HOST_HEADERS)))
            if cells[0] == label:
                return cells
        raise KeyError(label)


def check_cells(check: object) -> tuple[str, str, str, str, str]:
    """A HostCheck as the table's cells: host, reachable, fio version, protocol, note."""
    address = getattr(check, "address", None)
    reachable = bool(getattr(check, "reachable", False))
    version = getattr(check, "fio_version", None) or ""
    matches = getattr(check, "protocol_matches", None)
    protocol = "" if not reachable else ("matches" if matches else "differs")
    return (
        address.label if isinstance(address, HostAddress) else "",
        "yes" if reachable else "no",
        version,
        protocol,
        getattr(check, "message", "") or "",
    )


def _text(item: QTableWidgetItem | None) -> str:
    return item.text() if item is not None else ""


def _error_label() -> QLabel:
    label = QLabel()
    label.setObjectName("fieldError")
    label.setWordWrap(True)
    label.setStyleSheet("color: #c9403c;")
    return label

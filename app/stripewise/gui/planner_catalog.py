"""Adding hardware that is not bought yet: controllers and disks from the catalog, or custom."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from stripewise.model.plan import PlanController, PlanDisk
from stripewise.model.topology import pcie_link_mb_s
from stripewise.planner.catalog import load_catalog
from stripewise.planner.from_inventory import catalog_controller, catalog_disk
from stripewise.services.planner import PlannerService

PCIE_SPEEDS = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}  # GT/s per lane


class CatalogDialog(QDialog):
    def __init__(self, planner: PlannerService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.planner = planner
        self.catalog = load_catalog()
        self.setWindowTitle("Add Hardware")
        layout = QVBoxLayout(self)

        controllers = QGroupBox("Controller")
        form = QHBoxLayout(controllers)
        self.controller_entry = QComboBox()
        self.controller_entry.addItem("Custom controller (ports and link below)", None)
        for entry in self.catalog.controllers:
            self.controller_entry.addItem(
                f"{entry.title}: {entry.ports} ports, {entry.bus_mb_s:,} MB/s, "
                f"{entry.price:,.0f} USD",
                entry.id,
            )
        add_controller = QPushButton("Add &Controller")
        add_controller.clicked.connect(self._add_controller)
        form.addWidget(self.controller_entry, 1)
        form.addWidget(add_controller)
        layout.addWidget(controllers)
        custom = QGroupBox("Custom controller")
        custom_form = QHBoxLayout(custom)
        self.ports = QSpinBox()
        self.ports.setRange(1, 64)
        self.ports.setValue(8)
        self.ports.setSuffix(" ports")
        self.link = QComboBox()
        for generation in range(1, 7):
            for lanes in (1, 2, 4, 8, 16):
                speed = PCIE_SPEEDS[generation]
                self.link.addItem(
                    f"PCIe {generation}.0 x{lanes} ({pcie_link_mb_s(speed, lanes):,} MB/s)",
                    pcie_link_mb_s(speed, lanes),
                )
        self.link.addItem("other bus: ceiling below", None)
        self.link.setCurrentIndex(
            self.link.findText("PCIe 3.0 x8", flags=Qt.MatchFlag.MatchStartsWith)
        )
        self.ceiling = QSpinBox()
        self.ceiling.setRange(10, 200_000)
        self.ceiling.setValue(1064)
        self.ceiling.setSuffix(" MB/s")
        self.ceiling.setToolTip("PCI 32-bit/33 MHz: 133; PCI-X 64-bit/133 MHz: 1,064")
        self.controller_price = QDoubleSpinBox()
        self.controller_price.setRange(0, 100_000)
        self.controller_price.setValue(300)
        self.controller_price.setSuffix(" USD")
        for widget in (self.ports, self.link, self.ceiling, self.controller_price):
            custom_form.addWidget(widget)
        layout.addWidget(custom)

        disks = QGroupBox("Disks")
        disk_form = QFormLayout(disks)
        self.disk_entry = QComboBox()
        self.disk_entry.addItem("Custom disk (values below)", None)
        for entry in self.catalog.disks:
            self.disk_entry.addItem(
                f"{entry.title}: {entry.capacity_gb:,.0f} GB, {entry.outer_mb_s:,.0f}/"
                f"{entry.inner_mb_s:,.0f} MB/s outer/inner, {entry.price:,.0f} USD",
                entry.id,
            )
        self.disk_entry.currentIndexChanged.connect(self._custom_enabled)
        self.count = QSpinBox()
        self.count.setRange(1, 96)
        self.count.setValue(8)
        self.target = QComboBox()
        self.capacity = QDoubleSpinBox()
        self.capacity.setRange(1, 100_000)
        self.capacity.setSuffix(" GB")
        self.capacity.setValue(4000)
        self.read = QDoubleSpinBox()
        self.read.setRange(1, 20_000)
        self.read.setSuffix(" MB/s")
        self.read.setValue(200)
        self.write = QDoubleSpinBox()
        self.write.setRange(1, 20_000)
        self.write.setSuffix(" MB/s")
        self.write.setValue(190)
        self.price = QDoubleSpinBox()
        self.price.setRange(0, 100_000)
        self.price.setSuffix(" USD")
        self.price.setValue(100)
        disk_form.addRow("Model", self.disk_entry)
        disk_form.addRow("How many", self.count)
        disk_form.addRow("On controller", self.target)
        disk_form.addRow("Capacity", self.capacity)
        disk_form.addRow("Read (outer)", self.read)
        disk_form.addRow("Write (outer)", self.write)
        disk_form.addRow("Price each", self.price)
        add_disks = QPushButton("Add &Disks")
        add_disks.clicked.connect(self._add_disks)
        disk_form.addRow(add_disks)
        layout.addWidget(disks)
        self.note = QLabel()
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._refresh_targets()
        self._custom_enabled()

    def _refresh_targets(self) -> None:
        self.target.clear()
        for controller in self.planner.plan.controllers:
            self.target.addItem(controller.model or controller.id, controller.id)

    def _custom_enabled(self) -> None:
        custom = self.disk_entry.currentData() is None
        for widget in (self.capacity, self.read, self.write, self.price):
            widget.setEnabled(custom)

    def _add_controller(self) -> None:
        entry_id = self.controller_entry.currentData()
        entry = self.catalog.controller(entry_id) if entry_id else None
        controller_id = self.planner.unique_id("ctl")
        if entry is None:
            ceiling = self.link.currentData() or self.ceiling.value()
            controller = PlanController(
                id=controller_id,
                model=f"custom {self.ports.value()}-port controller",
                bus_mb_s=float(ceiling),
                ports=self.ports.value(),
                hypothetical=True,
                price=self.controller_price.value(),
            )
            self.planner.add_controller(controller)
            self._refresh_targets()
            self.target.setCurrentIndex(self.target.count() - 1)
            self.note.setText(f"Added a custom controller as {controller_id}.")
            return
        controller = catalog_controller(entry, controller_id)
        self.planner.add_controller(controller)
        self._refresh_targets()
        self.target.setCurrentIndex(self.target.count() - 1)
        self.note.setText(f"Added {entry.title} as {controller.id}.")

    def _add_disks(self) -> None:
        controller = self.target.currentData()
        if controller is None:
            self.note.setText("Add a controller first: every disk hangs off one.")
            return
        entry_id = self.disk_entry.currentData()
        entry = self.catalog.disk(entry_id) if entry_id else None
        disks: list[PlanDisk] = []
        for _ in range(self.count.value()):
            disk_id = self.planner.unique_id("d")
            if entry is not None:
                disk = catalog_disk(entry, controller, disk_id)
            else:
                disk = PlanDisk(
                    id=disk_id,
                    controller=controller,
                    capacity_bytes=int(self.capacity.value() * 10**9),
                    seq_read_mb_s=self.read.value(),
                    seq_write_mb_s=self.write.value(),
                    price=self.price.value(),
                    model="custom disk",
                    hypothetical=True,
                )
            disks.append(disk)
            self.planner.add_disks((disk,))  # one at a time: ids stay unique
        self.note.setText(f"Added {len(disks)} disks on {controller}.")

"""Adding hardware that is not bought yet: controllers and disks from the catalog, or custom.

Every field is labelled with its unit. Picking a catalog entry shows that entry's own figures
in the (greyed) fields; picking Custom again brings back what was typed there. An Add button
is disabled, with the reason beside it, while what it would add is impossible: a name another
controller has, more disks than the controller has free ports. The planner service refuses the
same things, so nothing gets round the dialog.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui import help_dialogs as says
from stripewise.gui.screen_fit import resize_showing_all, scrolling_down
from stripewise.model.plan import (
    CONTROLLER_LIMITS,
    DISK_LIMITS,
    MAX_CAPACITY_BYTES,
    MAX_PORTS,
    Plan,
    PlanController,
    PlanDisk,
)
from stripewise.model.topology import pcie_link_mb_s
from stripewise.model.wording import count_noun
from stripewise.planner.catalog import CatalogController, CatalogDisk, load_catalog
from stripewise.planner.from_inventory import catalog_controller, catalog_disk
from stripewise.services.planner import PlannerService

PCIE_SPEEDS = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}  # GT/s per lane
LANES = (1, 2, 4, 8, 16)
GB = 10**9
MAX_DISKS_AT_ONCE = 96
WIDTH = 840  # px: catalog titles and the target's load unclipped on a 1024x768 screen
_Field = QSpinBox | QDoubleSpinBox | QComboBox


def _wide_combo(combo: QComboBox) -> None:
    """Long catalog titles: the box stays a sane width, its list shows them whole."""
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(36)
    combo.view().setMinimumWidth(combo.view().sizeHintForColumn(0) + 24)


def _whole(low: float, high: float, value: int) -> QSpinBox:
    box = QSpinBox()
    box.setRange(int(low), int(high))
    box.setValue(value)
    _spin_style(box)
    return box


def _decimal(low: float, high: float, value: float, decimals: int) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setDecimals(decimals)
    box.setRange(low, high)
    box.setValue(value)
    _spin_style(box)
    return box


def _spin_style(box: QAbstractSpinBox) -> None:
    box.setGroupSeparatorShown(True)  # 18,000 GB, not 18000
    box.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToNearestValue)


def _reason_label() -> QLabel:
    """Why an Add button is disabled; two lines kept free so the dialog does not jump."""
    label = QLabel()
    label.setWordWrap(True)
    label.setObjectName("reason")
    label.setMinimumHeight(2 * label.fontMetrics().lineSpacing() + 4)
    label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    return label


def _align_labels(*forms: QFormLayout) -> None:
    """One label column width for several forms, so their fields line up."""
    items = [
        form.itemAt(row, QFormLayout.ItemRole.LabelRole)
        for form in forms
        for row in range(form.rowCount())
    ]
    labels = [w for item in items if item is not None and (w := item.widget()) is not None]
    width = max(label.sizeHint().width() for label in labels)
    for label in labels:
        label.setMinimumWidth(width)


class _Typed:
    """What was typed into the custom fields, kept while a catalog entry shows its own figures."""

    def __init__(self, fields: tuple[_Field, ...]) -> None:
        self.fields = fields
        self.saved: list[float] | None = None

    def keep(self) -> None:
        if self.saved is None:
            self.saved = [_value(f) for f in self.fields]

    def restore(self) -> None:
        if self.saved is not None:
            for field, value in zip(self.fields, self.saved, strict=True):
                _set(field, value)
        self.saved = None


def _value(field: _Field) -> float:
    return field.currentIndex() if isinstance(field, QComboBox) else field.value()


def _set(field: _Field, value: float) -> None:
    if isinstance(field, QComboBox):
        field.setCurrentIndex(int(value))
    elif isinstance(field, QSpinBox):
        field.setValue(round(value))
    else:
        field.setValue(value)


class CatalogDialog(QDialog):
    def __init__(self, planner: PlannerService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.planner = planner
        self.catalog = load_catalog()
        self.setWindowTitle("Add Hardware")
        layout = QVBoxLayout(self)
        layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)
        self.description = says.purpose_label(says.ADD_HARDWARE)
        layout.addWidget(self.description)
        boxes = QWidget()
        both = QVBoxLayout(boxes)
        both.setContentsMargins(0, 0, 0, 0)
        both.addWidget(self._controller_box())
        both.addWidget(self._disk_box())
        both.addStretch(1)  # height to spare goes below the forms, not into them
        _align_labels(self.controller_form, self.disk_form)
        # the two forms are taller than an 800x600 console: they scroll, Close stays in sight
        area = scrolling_down(boxes)
        layout.addWidget(area, 1)
        self.note = QLabel()
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        planner.planChanged.connect(self._plan_changed)
        self._show_controller_pick()
        self._show_disk_pick()
        self._plan_changed()
        resize_showing_all(self, area, WIDTH)

    # --- building ------------------------------------------------------------------------------
    def _controller_box(self) -> QGroupBox:
        box = QGroupBox("Controller")
        form = self.controller_form = QFormLayout(box)
        self.controller_entry = QComboBox()
        self.controller_entry.addItem("Custom controller (ports and link below)", None)
        for entry in self.catalog.controllers:
            self.controller_entry.addItem(
                f"{entry.title}: {count_noun(entry.ports, 'port')}, {entry.bus_mb_s:,} MB/s, "
                f"{entry.price:,.0f} USD",
                entry.id,
            )
        _wide_combo(self.controller_entry)
        self.controller_name = QLineEdit()
        self.controller_name.setToolTip(
            "What the planner, its array cards, plan files and reports call this controller; "
            "no two controllers of a plan share a name"
        )
        self.controller_name.textEdited.connect(self._name_typed)
        self._name_typed_by_hand = False
        self.ports = _whole(1, MAX_PORTS, 8)
        self.link = QComboBox()
        for generation, speed in PCIE_SPEEDS.items():
            for lanes in LANES:
                mb_s = pcie_link_mb_s(speed, lanes)
                self.link.addItem(f"PCIe {generation}.0 x{lanes} ({mb_s:,} MB/s)", mb_s)
        self.link.addItem("other bus: ceiling below", None)
        self.link.setCurrentIndex(self._link_index(3, 8))
        self.ceiling = _whole(*CONTROLLER_LIMITS["bus_mb_s"], 1064)
        self.ceiling.setToolTip("PCI 32-bit/33 MHz: 133; PCI-X 64-bit/133 MHz: 1,064")
        self._other_ceiling = self.ceiling.value()  # typed for "other bus"
        self.controller_price = _decimal(*CONTROLLER_LIMITS["price"], 300, decimals=2)
        form.addRow("Model", self.controller_entry)
        form.addRow("Name", self.controller_name)
        form.addRow("Ports (disks it takes)", self.ports)
        form.addRow("Host link (PCIe generation, lanes)", self.link)
        form.addRow("Bus ceiling (MB/s)", self.ceiling)
        form.addRow("Price (USD)", self.controller_price)
        self.custom_controller = (self.ports, self.link, self.ceiling, self.controller_price)
        self._typed_controller = _Typed((self.ports, self.link, self.controller_price))
        self.add_controller = QPushButton("Add &Controller")
        self.add_controller.setAutoDefault(False)
        self.add_controller.clicked.connect(self._add_controller)
        self.controller_reason = _reason_label()
        form.addRow(self._button_row(self.controller_reason, self.add_controller))
        self.controller_entry.currentIndexChanged.connect(self._show_controller_pick)
        self.link.currentIndexChanged.connect(self._show_link)
        self.ceiling.valueChanged.connect(self._ceiling_typed)
        self.ports.valueChanged.connect(self._suggest_name)
        self.controller_name.textChanged.connect(self._check_controller)
        return box

    def _disk_box(self) -> QGroupBox:
        box = QGroupBox("Disks")
        form = self.disk_form = QFormLayout(box)
        self.disk_entry = QComboBox()
        self.disk_entry.addItem("Custom disk (figures below)", None)
        for entry in self.catalog.disks:  # the title says the capacity
            self.disk_entry.addItem(
                f"{entry.title}: {entry.outer_mb_s:,.0f}-{entry.inner_mb_s:,.0f} MB/s, "
                f"{entry.price:,.0f} USD",
                entry.id,
            )
            self.disk_entry.setItemData(
                self.disk_entry.count() - 1,
                f"{entry.capacity_gb:,g} GB; reads {entry.outer_mb_s:,.0f} MB/s at the outer "
                f"tracks, {entry.inner_mb_s:,.0f} MB/s at the inner ones; {entry.interface}, "
                f"{entry.year}",
                Qt.ItemDataRole.ToolTipRole,
            )
        _wide_combo(self.disk_entry)
        self.count = _whole(1, MAX_DISKS_AT_ONCE, 8)
        self.target = QComboBox()
        _wide_combo(self.target)
        self.capacity = _decimal(1, MAX_CAPACITY_BYTES / GB, 4000, decimals=1)
        self.read = _decimal(1, DISK_LIMITS["seq_read_mb_s"][1], 200, decimals=0)
        self.write = _decimal(1, DISK_LIMITS["seq_write_mb_s"][1], 190, decimals=0)
        self.price = _decimal(*DISK_LIMITS["price"], 100, decimals=2)
        form.addRow("Model", self.disk_entry)
        form.addRow("How many (disks)", self.count)
        form.addRow("On controller", self.target)
        form.addRow("Capacity (GB, 10^9 bytes)", self.capacity)
        form.addRow("Sequential read, outer tracks (MB/s)", self.read)
        form.addRow("Sequential write, outer tracks (MB/s)", self.write)
        form.addRow("Price each (USD)", self.price)
        self.custom_disk = (self.capacity, self.read, self.write, self.price)
        self._typed_disk = _Typed(self.custom_disk)
        self.add_disks = QPushButton("Add &Disks")
        self.add_disks.setAutoDefault(False)
        self.add_disks.clicked.connect(self._add_disks)
        self.disk_reason = _reason_label()
        form.addRow(self._button_row(self.disk_reason, self.add_disks))
        self.disk_entry.currentIndexChanged.connect(self._show_disk_pick)
        self.count.valueChanged.connect(self._check_disks)
        self.target.currentIndexChanged.connect(self._check_disks)
        return box

    @staticmethod
    def _button_row(reason: QLabel, button: QPushButton) -> QHBoxLayout:
        row = QHBoxLayout()
        row.addWidget(reason, 1)
        row.addWidget(button)
        return row

    def _link_index(self, generation: int | None, lanes: int | None) -> int:
        """The link item of a PCIe generation and width, else "other bus"."""
        if generation in PCIE_SPEEDS and lanes in LANES:
            return (generation - 1) * len(LANES) + LANES.index(lanes)
        return self.link.count() - 1

    # --- showing what is picked ----------------------------------------------------------------
    def _picked_controller(self) -> CatalogController | None:
        entry_id = self.controller_entry.currentData()
        return self.catalog.controller(entry_id) if entry_id else None

    def _picked_disk(self) -> CatalogDisk | None:
        entry_id = self.disk_entry.currentData()
        return self.catalog.disk(entry_id) if entry_id else None

    def _show_controller_pick(self) -> None:
        entry = self._picked_controller()
        if entry is None:
            self._typed_controller.restore()
        else:
            self._typed_controller.keep()
            self.ports.setValue(entry.ports)
            self.link.setCurrentIndex(self._link_index(entry.pcie_gen, entry.lanes))
            self.controller_price.setValue(entry.price)
        for field in (self.ports, self.link, self.controller_price):
            field.setEnabled(entry is None)
        self._name_typed_by_hand = False
        self._show_link()
        self._suggest_name()

    def _show_link(self) -> None:
        """A PCIe link sets the ceiling (shown, greyed), as does a catalog entry; a custom
        controller on another bus takes the ceiling typed for it."""
        entry = self._picked_controller()
        link_mb_s = self.link.currentData()
        shown = link_mb_s or (entry.bus_mb_s if entry else self._other_ceiling)
        self.ceiling.blockSignals(True)
        self.ceiling.setValue(int(shown))
        self.ceiling.blockSignals(False)
        self.ceiling.setEnabled(entry is None and link_mb_s is None)

    def _ceiling_typed(self, value: int) -> None:
        if self.ceiling.isEnabled():
            self._other_ceiling = value

    def _show_disk_pick(self) -> None:
        entry = self._picked_disk()
        if entry is None:
            self._typed_disk.restore()
        else:
            self._typed_disk.keep()
            self.capacity.setValue(entry.capacity_gb)
            self.read.setValue(entry.outer_mb_s)
            self.write.setValue(entry.outer_write_mb_s)
            self.price.setValue(entry.price)
        for field in self.custom_disk:
            field.setEnabled(entry is None)
        self._check_disks()

    def _name_typed(self) -> None:
        self._name_typed_by_hand = True

    def _suggest_name(self) -> None:
        """The model's name, numbered where the plan has one like it ("... #2")."""
        if not self._name_typed_by_hand:
            self.controller_name.setText(self.planner.plan.distinct_label(self._model_name()))
        self._check_controller()

    def _model_name(self) -> str:
        entry = self._picked_controller()
        return entry.title if entry else f"Custom {self.ports.value()}-port controller"

    def _plan_changed(self, *_args: object) -> None:
        plan: Plan = self.planner.plan
        chosen = self.target.currentData()
        self.target.blockSignals(True)
        self.target.clear()
        names = plan.controller_names()
        for controller in plan.controllers:
            used = len(plan.disks_on(controller.id))
            load = count_noun(used, "disk")
            if controller.ports is not None:
                load = f"{used} of {count_noun(controller.ports, 'port')} used"
            self.target.addItem(f"{names[controller.id]} ({load})", controller.id)
        self.target.setCurrentIndex(max(0, self.target.findData(chosen)))
        self.target.blockSignals(False)
        self._suggest_name()
        self._check_disks()

    # --- what Add would do ---------------------------------------------------------------------
    def _controller(self, controller_id: str) -> PlanController:
        name = self.controller_name.text().strip() or None
        entry = self._picked_controller()
        if entry is not None:
            return replace(catalog_controller(entry, controller_id), label=name)
        return PlanController(
            id=controller_id,
            model=self._model_name(),
            bus_mb_s=float(self.link.currentData() or self.ceiling.value()),
            ports=self.ports.value(),
            hypothetical=True,
            price=self.controller_price.value(),
            label=name,
        )

    def _disks(self, ids: tuple[str, ...]) -> tuple[PlanDisk, ...]:
        controller = self.target.currentData()
        entry = self._picked_disk()
        if entry is not None:
            return tuple(catalog_disk(entry, controller, i) for i in ids)
        return tuple(
            PlanDisk(
                id=disk_id,
                controller=controller,
                capacity_bytes=round(self.capacity.value() * GB),
                seq_read_mb_s=self.read.value(),
                seq_write_mb_s=self.write.value(),
                price=self.price.value(),
                model="Custom disk",
                hypothetical=True,
            )
            for disk_id in ids
        )

    def controller_refusal(self) -> str | None:
        if not self.controller_name.text().strip():
            return "Give the controller a name."
        return self.planner.controller_refusal(self._controller(self.planner.unique_id("ctl")))

    def disks_refusal(self) -> str | None:
        if self.target.currentData() is None:
            return "Add a controller first: every disk hangs off one."
        ids = self.planner.unique_ids("d", self.count.value())
        return self.planner.disks_refusal(self._disks(ids))

    def _check_controller(self) -> None:
        reason = self.controller_refusal()
        self.add_controller.setEnabled(reason is None)
        self.controller_reason.setText(_sentence(reason))

    def _check_disks(self) -> None:
        reason = self.disks_refusal()
        self.add_disks.setEnabled(reason is None)
        self.disk_reason.setText(_sentence(reason))

    # --- adding --------------------------------------------------------------------------------
    def _add_controller(self) -> None:
        if self.controller_refusal() is not None:
            return  # the button is disabled and says why; a shortcut does not get round it
        controller = self._controller(self.planner.unique_id("ctl"))
        if self.planner.add_controller(controller):
            self._name_typed_by_hand = False
            self.target.setCurrentIndex(self.target.findData(controller.id))
            self._suggest_name()
            self.note.setText(f"Added {controller.title} as {controller.id}.")

    def _add_disks(self) -> None:
        if self.disks_refusal() is not None:
            return
        disks = self._disks(self.planner.unique_ids("d", self.count.value()))
        name = self.planner.plan.controller_names()[self.target.currentData()]
        if self.planner.add_disks(disks):
            self.note.setText(f"Added {count_noun(len(disks), 'disk')} on {name}.")


def _sentence(reason: str | None) -> str:
    if not reason:
        return ""
    reason = reason[0].upper() + reason[1:]
    return reason if reason.endswith(".") else f"{reason}."

"""Add Hardware and the planner page on impossible hardware (issue 16, point 7): an 8-port
controller takes 8 disks, two identical cards get names that tell them apart, greyed fields
show the catalog pick's own figures, every field says its unit, counts are in the right number,
no figure can be 0, and the dialog says what it does before it does it."""

from __future__ import annotations

import re

import pytest
from PySide6.QtWidgets import QLabel, QVBoxLayout

from stripewise.gui.help_dialogs import ADD_HARDWARE, PURPOSE_NAME
from stripewise.gui.planner_catalog import CatalogDialog
from stripewise.gui.planner_page import PlannerPage
from stripewise.model.plan import PlanDisk, RaidLevel
from stripewise.planner.plan_file import loads_plan
from stripewise.planner.plan_writer import dumps_plan
from stripewise.services.hardware import HardwareService
from stripewise.services.planner import PlannerService

LSI = "lsi-9300-8i"  # LSI SAS 9300-8i: 8 ports, PCIe 3.0 x8, 250 USD
EXOS = "seagate-exos-x18-18tb"


@pytest.fixture
def planner() -> PlannerService:
    service = PlannerService()
    service.new_purchase_plan()
    return service


@pytest.fixture
def dialog(qtbot, planner: PlannerService) -> CatalogDialog:
    made = CatalogDialog(planner)
    qtbot.addWidget(made)
    return made


def pick(combo, entry_id: str | None) -> None:
    index = combo.findData(entry_id)
    assert index >= 0, entry_id
    combo.setCurrentIndex(index)


def add_lsi(dialog: CatalogDialog) -> str:
    pick(dialog.controller_entry, LSI)
    qtbot_click(dialog.add_controller)
    return dialog.planner.plan.controllers[-1].id


def qtbot_click(button) -> None:
    assert button.isEnabled(), "the button should be enabled here"
    button.click()


def test_exos_is_in_the_catalog(dialog: CatalogDialog) -> None:
    assert dialog.disk_entry.findData(EXOS) > 0, "the tests below pick it"


# --- 1. no more disks than ports ---------------------------------------------------------------


def test_a_ninth_disk_on_an_8_port_controller_is_refused_with_the_reason(
    dialog: CatalogDialog,
) -> None:
    controller = add_lsi(dialog)
    pick(dialog.disk_entry, EXOS)
    dialog.count.setValue(9)
    assert not dialog.add_disks.isEnabled()
    assert "8 free ports, not enough for 9 disks" in dialog.disk_reason.text()
    dialog.count.setValue(8)
    qtbot_click(dialog.add_disks)
    assert len(dialog.planner.plan.disks_on(controller)) == 8
    dialog.count.setValue(1)
    assert not dialog.add_disks.isEnabled()
    assert "0 free ports, not enough for 1 disk:" in dialog.disk_reason.text()
    dialog._add_disks()  # what a shortcut would call: refused all the same
    assert len(dialog.planner.plan.disks) == 8
    shown = dialog.target.currentText()
    assert "8 of 8 ports used" in shown


def test_the_service_refuses_disks_beyond_the_ports(qtbot, planner: PlannerService) -> None:
    dialog = CatalogDialog(planner)
    qtbot.addWidget(dialog)
    controller = add_lsi(dialog)
    disks = tuple(
        PlanDisk(id=f"x{i}", controller=controller, capacity_bytes=10**12, hypothetical=True)
        for i in range(9)
    )
    with qtbot.waitSignal(planner.failed) as refused:
        assert planner.add_disks(disks) is False
    assert "8 free ports, not enough for 9 disks" in refused.args[0]
    assert planner.plan.disks == ()


SIXTEEN_ON_EIGHT = (
    'format = "stripewise-plan"\nversion = 1\nname = "JBOD shelf"\n'
    '[[controller]]\nid = "hba"\nmodel = "LSI SAS 9300-8i"\nports = 8\n'
    + "".join(f'[[disk]]\nid = "d{i}"\ncontroller = "hba"\ncapacity_gb = 4000\n' for i in range(16))
)


def test_the_planner_page_shows_a_controller_with_more_disks_than_ports(qtbot) -> None:
    planner = PlannerService()
    page = PlannerPage(planner, HardwareService())
    qtbot.addWidget(page)
    planner.set_plan(loads_plan(SIXTEEN_ON_EIGHT))
    assert not planner.report.ok
    summary = page.summary.text()
    assert "controller LSI SAS 9300-8i (hba) has 16 disks on 8 ports" in summary
    assert "move 8 disks to another controller" in summary
    header = next(
        label.text()
        for label in page.pool.findChildren(QLabel)
        if "LSI SAS 9300-8i" in label.text()
    )
    assert "16 disks on 8 ports" in header
    planner.add_array(RaidLevel.RAID6, tuple(f"d{i}" for i in range(6)))
    card = page.cards["md0"]
    assert "has 16 disks on 8 ports" in card.problems.text()
    assert not card.commands_button.isEnabled(), "no commands for hardware that cannot be"


# --- 2. two identical cards, two names ---------------------------------------------------------


def test_two_identical_controllers_get_names_that_tell_them_apart(
    dialog: CatalogDialog,
) -> None:
    first = add_lsi(dialog)
    assert dialog.controller_name.text().endswith(" #2"), "the next one is offered as #2"
    second = add_lsi(dialog)
    plan = dialog.planner.plan
    names = plan.controller_names()
    assert names[first] != names[second]
    assert names[second] == names[first] + " #2"
    targets = [dialog.target.itemText(i) for i in range(dialog.target.count())]
    assert len(set(targets)) == 2 and targets[1].startswith(names[second])
    # the plan file keeps the names, and the report and the cards show them
    again = loads_plan(dumps_plan(plan))
    assert again.controller_names() == names
    assert f'label = "{names[second]}"' in dumps_plan(plan)


def test_a_name_another_controller_has_is_refused(dialog: CatalogDialog) -> None:
    add_lsi(dialog)
    taken = dialog.planner.plan.controllers[0].title
    dialog.controller_name.setText(taken)
    assert not dialog.add_controller.isEnabled()
    assert "already" in dialog.controller_reason.text()
    dialog.controller_name.setText("Shelf 2 HBA")
    assert dialog.add_controller.isEnabled()
    dialog.add_controller.click()
    assert dialog.planner.plan.controllers[-1].label == "Shelf 2 HBA"


def test_array_cards_name_the_controllers_by_their_names(qtbot) -> None:
    planner = PlannerService()
    page = PlannerPage(planner, HardwareService())
    qtbot.addWidget(page)
    dialog = CatalogDialog(planner, page)
    qtbot.addWidget(dialog)
    for _ in range(2):
        add_lsi(dialog)
        pick(dialog.disk_entry, EXOS)
        dialog.count.setValue(3)
        dialog.add_disks.click()
    planner.add_array(RaidLevel.RAID6, tuple(d.id for d in planner.plan.disks))
    figures = page.cards["md0"].figures.text()
    names = list(planner.plan.controller_names().values())
    assert f"3 on {names[0]}," in figures and f"3 on {names[1]}" in figures


# --- 3. greyed fields show what is picked ------------------------------------------------------


def test_greyed_disk_fields_show_the_catalog_pick_and_custom_figures_come_back(
    dialog: CatalogDialog,
) -> None:
    dialog.capacity.setValue(1234)
    dialog.read.setValue(111)
    pick(dialog.disk_entry, EXOS)
    exos = dialog.catalog.disk(EXOS)
    assert not dialog.capacity.isEnabled()
    assert dialog.capacity.value() == pytest.approx(exos.capacity_gb)
    assert dialog.read.value() == pytest.approx(exos.outer_mb_s)
    assert dialog.write.value() == pytest.approx(exos.outer_write_mb_s)
    assert dialog.price.value() == pytest.approx(exos.price)
    pick(dialog.disk_entry, None)
    assert dialog.capacity.isEnabled()
    assert (dialog.capacity.value(), dialog.read.value()) == (1234, 111)


def test_greyed_controller_fields_show_the_catalog_pick(dialog: CatalogDialog) -> None:
    dialog.ports.setValue(4)
    pick(dialog.link, None)  # other bus
    dialog.ceiling.setValue(133)
    pick(dialog.controller_entry, LSI)
    assert not dialog.ports.isEnabled() and not dialog.ceiling.isEnabled()
    assert dialog.ports.value() == 8
    assert dialog.link.currentText().startswith("PCIe 3.0 x8")
    assert dialog.ceiling.value() == dialog.catalog.controller(LSI).bus_mb_s
    assert dialog.controller_price.value() == dialog.catalog.controller(LSI).price
    pick(dialog.controller_entry, None)
    assert dialog.ports.value() == 4 and dialog.link.currentData() is None
    assert dialog.ceiling.isEnabled() and dialog.ceiling.value() == 133


def test_a_pcie_link_shows_its_own_ceiling(dialog: CatalogDialog) -> None:
    pick(dialog.link, 7876)  # PCIe 3.0 x8
    assert not dialog.ceiling.isEnabled() and dialog.ceiling.value() == 7876


# --- 4. every field labelled with its unit -----------------------------------------------------


@pytest.mark.parametrize(
    ("field", "unit"),
    [
        ("ports", "Ports"),
        ("link", "PCIe"),
        ("ceiling", "MB/s"),
        ("controller_price", "USD"),
        ("controller_name", "Name"),
        ("count", "disks"),
        ("capacity", "GB"),
        ("read", "MB/s"),
        ("write", "MB/s"),
        ("price", "USD"),
    ],
)
def test_every_field_has_a_label_with_its_unit(
    dialog: CatalogDialog, field: str, unit: str
) -> None:
    widget = getattr(dialog, field)
    label = dialog.controller_form.labelForField(widget) or dialog.disk_form.labelForField(widget)
    assert isinstance(label, QLabel), f"{field} has no label"
    assert unit in label.text()


def test_labels_of_both_groups_line_up(dialog: CatalogDialog) -> None:
    dialog.show()
    left = {
        dialog.controller_form.labelForField(dialog.ports).width(),
        dialog.disk_form.labelForField(dialog.capacity).width(),
    }
    assert len(left) == 1
    x = {
        dialog.ports.mapTo(dialog, dialog.ports.rect().topLeft()).x(),
        dialog.capacity.mapTo(dialog, dialog.capacity.rect().topLeft()).x(),
    }
    assert len(x) == 1, "the fields of the two groups start at one x"


# --- 5. counts in the right number -------------------------------------------------------------


def test_counts_are_in_the_right_number(dialog: CatalogDialog) -> None:
    texts = [dialog.controller_entry.itemText(i) for i in range(dialog.controller_entry.count())]
    assert any(re.search(r": 1 port,", t) for t in texts), "the catalog has a 1-port slot"
    assert not any(re.search(r"\b1 ports\b", t) for t in texts)
    dialog.ports.setValue(1)
    assert dialog.ports.text() == "1"
    assert dialog.controller_name.text() == "Custom 1-port controller"
    dialog.add_controller.click()
    assert "(0 of 1 port used)" in dialog.target.currentText()
    dialog.count.setValue(1)
    dialog.add_disks.click()
    assert dialog.note.text().startswith("Added 1 disk on ")
    assert "(1 of 1 port used)" in dialog.target.currentText()


def test_the_page_summary_counts_in_the_right_number(qtbot) -> None:
    planner = PlannerService()
    page = PlannerPage(planner, HardwareService())
    qtbot.addWidget(page)
    dialog = CatalogDialog(planner, page)
    qtbot.addWidget(dialog)
    add_lsi(dialog)
    dialog.count.setValue(1)
    dialog.add_disks.click()
    assert "0 arrays, 0 of 1 disk used" in page.summary.text()
    planner.add_array(RaidLevel.RAID0, (planner.plan.disks[0].id,))
    assert "1 array, 1 of 1 disk used" in page.summary.text()


# --- 6. no figure of 0, none absurd ------------------------------------------------------------


def test_spin_boxes_cannot_hold_0_or_absurd_figures(dialog: CatalogDialog) -> None:
    for field in (dialog.capacity, dialog.read, dialog.write, dialog.ports, dialog.count):
        field.setValue(0)
        assert field.value() > 0, field
    dialog.ports.setValue(100_000)
    assert dialog.ports.value() == 1024


def test_the_service_refuses_a_disk_of_0_bytes(qtbot, dialog: CatalogDialog) -> None:
    controller = add_lsi(dialog)
    zero = PlanDisk(id="z", controller=controller, capacity_bytes=0, hypothetical=True)
    with qtbot.waitSignal(dialog.planner.failed) as refused:
        assert dialog.planner.add_disks((zero,)) is False
    assert "disk z: capacity_bytes" in refused.args[0]
    dialog.planner.add_disks((PlanDisk(id="z", controller=controller, capacity_bytes=1),))
    assert dialog.planner.plan.disk("z") is not None


# --- 7. the dialog says what it does -----------------------------------------------------------


def test_the_dialog_says_what_it_does_first(dialog: CatalogDialog) -> None:
    layout = dialog.layout()
    assert isinstance(layout, QVBoxLayout)
    first = layout.itemAt(0).widget()
    assert isinstance(first, QLabel) and first is dialog.description
    assert first.objectName() == PURPOSE_NAME, "the line every dialog opens with"
    text = first.text()
    assert text == ADD_HARDWARE, "kept with the other dialogs' lines in help_dialogs"
    assert text.startswith("Adds ") and "nothing is bought" in text
    assert text.count(".") == 1 and "\n" not in text, "one sentence"

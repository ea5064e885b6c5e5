"""Issue 27 point 10 in the window: storage controllers with nothing attached on the hardware map
and in the planner, and (point 5) a dual-ported NVMe drive's second controller."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from stripewise.gui.hardware_map import NO_DISKS_TEXT, ControllerBox
from stripewise.gui.hardware_page import HardwarePage
from stripewise.gui.planner_catalog import CatalogDialog
from stripewise.gui.planner_page import PlannerPage
from tests.gui.conftest import WindowFactory

SERVER = Path(__file__).parents[1] / "fixtures" / "udev" / "nvme_storage_server.txt"


def box(page: HardwarePage, controller_id: str) -> ControllerBox:
    return next(b for b in page.map.boxes if b.controller.id == controller_id)


def header(found: ControllerBox) -> str:
    return found.header.text()


def test_empty_controllers_are_drawn_as_empty_on_purpose(qtbot, make_window: WindowFactory) -> None:
    page = make_window(view="hardware", inventory=SERVER).page_widgets["hardware"]
    assert isinstance(page, HardwarePage)
    assert "11 disks, size unknown, on 14 controllers" in page.caption.text()

    raid = box(page, "0000:c2:00.0")
    assert raid.tiles == [] and raid.placeholder is not None
    qtbot.waitUntil(raid.placeholder.isVisible)  # layouts show new widgets from the event loop
    assert raid.placeholder.text() == NO_DISKS_TEXT
    assert "MegaRAID Tri-Mode SAS3508" in header(raid) and "megaraid_sas" in header(raid)
    assert raid.sizeHint().height() < 200, "a short box, not a tall empty frame"

    hba = box(page, "0000:c1:00.0")
    assert hba.placeholder is None
    assert [(t.slot.port, t.slot.disk) for t in hba.tiles] == [(f"phy {n}", None) for n in range(8)]
    assert "0 of 8 ports used" in header(hba)
    assert hba.tiles[0].accessibleName() == "phy 0: empty"


def test_the_second_port_of_a_dual_ported_drive_names_its_disk(
    qtbot, make_window: WindowFactory
) -> None:
    page = make_window(view="hardware", inventory=SERVER).page_widgets["hardware"]
    assert isinstance(page, HardwarePage)
    port_b = box(page, "0000:82:00.0")
    assert "no disks attached" not in header(port_b)
    tile = port_b.tiles[0]
    assert tile.slot.path_of == "nvme8n1" and "path to nvme8n1" in tile.toolTip()
    page.map.ensurePolished()
    qtbot.mouseClick(box(page, "0000:81:00.0").tiles[0], Qt.MouseButton.LeftButton)
    text = page.details.browser.toPlainText()
    assert "nvme8c8n1 via 0000:81:00.0 namespace 1" in text
    assert "nvme8c9n1 via 0000:82:00.0 namespace 1" in text


def test_the_planner_offers_the_empty_controllers(qtbot, make_window: WindowFactory) -> None:
    page = make_window(view="planner", inventory=SERVER).page_widgets["planner"]
    assert isinstance(page, PlannerPage)
    page.from_map.click()  # the dump on show (Plan This Machine plans this machine)
    plan = page.planner.plan
    hba, raid = plan.controller("0000:c1:00.0"), plan.controller("0000:c2:00.0")
    assert hba is not None and raid is not None
    assert (hba.ports, plan.disks_on(hba.id), plan.disks_on(raid.id)) == (8, (), ())
    titles = [label.text() for label in page.pool.findChildren(QLabel)]
    shown = [t for t in titles if "MegaRAID" in t or "SAS3008" in t]
    assert len(shown) == 2, "one box in the pool for each"
    assert "0000:c1:00.0 · 0 of 8 ports used" in shown[0] and "0000:c2:00.0" in shown[1]

    dialog = CatalogDialog(page.planner)
    qtbot.addWidget(dialog)
    dialog.disk_entry.setCurrentIndex(dialog.disk_entry.findData("seagate-exos-x18-18tb"))
    dialog.count.setValue(8)
    dialog.target.setCurrentIndex(dialog.target.findData(hba.id))
    assert dialog.target.currentText().endswith("(0 of 8 ports used)")
    dialog.add_disks.click()
    assert len(page.planner.plan.disks_on(hba.id)) == 8

"""Issue 16 points 1 and 2 on the Hardware page: a field dump with unknown sizes and a stray
line, and one disk reached through two HBAs."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from stripewise.gui.hardware_map import SlotTile
from stripewise.gui.hardware_page import HardwarePage

DUMPS = Path(__file__).parent.parent / "fixtures" / "udev"


def page_of(window) -> HardwarePage:
    page = window.page_widgets["hardware"]
    assert isinstance(page, HardwarePage)
    return page


def tile_at(page: HardwarePage, controller: str, port: str) -> SlotTile:
    return next(t for t in page.map.tiles if t.controller.id == controller and t.slot.port == port)


def test_a_dump_without_sizes_says_so_and_names_the_skipped_line(make_window) -> None:
    page = page_of(make_window(view="hardware", inventory=DUMPS / "workstation_md_raid0.txt"))
    caption = page.caption.text()
    assert "4 disks, size unknown, on 1 controller" in caption
    assert "0 B" not in caption
    assert "workstation_md_raid0.txt:909: skipped 3 unreadable lines" in caption
    assert "md127" in page.extras.text() and "sda3 sdb1 sdc1 sdd1" in page.extras.text()


def test_the_details_of_a_multipath_disk_list_both_paths(qtbot, make_window) -> None:
    page = page_of(make_window(view="hardware", inventory=DUMPS / "multipath_two_hbas.txt"))
    assert "5 disks" in page.caption.text()
    shown = tile_at(page, "0000:03:00.0", "phy 0 lun 1")
    assert shown.slot.disk is not None and shown.slot.disk.name == "dm-1"
    page.map.ensurePolished()
    qtbot.mouseClick(shown, Qt.MouseButton.LeftButton)
    text = page.details.browser.toPlainText()
    assert "dm-1 in phy 0 lun 1" in text and "/dev/mapper/mpathb" in text
    assert "sdc via 0000:03:00.0 phy 0 lun 1 (HCTL 0:0:0:1)" in text
    assert "sdd via 0000:82:00.0 phy 4 lun 1 (HCTL 1:0:0:1)" in text

    other = tile_at(page, "0000:82:00.0", "phy 4 lun 1")
    assert other.slot.disk is None and other.slot.path_of == "dm-1"
    assert "path to dm-1" in other.toolTip()
    qtbot.mouseClick(other, Qt.MouseButton.LeftButton)
    text = page.details.browser.toPlainText()
    assert "phy 4 lun 1: sdd: path to dm-1" in text
    assert "sdc via 0000:03:00.0" in text and "600c0ff000d5b8a52f3c4b5d02000000" in text


def test_searching_a_path_name_finds_its_disk(qtbot, make_window) -> None:
    page = page_of(make_window(view="hardware", inventory=DUMPS / "multipath_two_hbas.txt"))
    qtbot.keyClicks(page.search, "sdd")
    found = [(t.controller.id, t.slot.port) for t in page.map.tiles if t.matches]
    assert found == [("0000:03:00.0", "phy 0 lun 1"), ("0000:82:00.0", "phy 4 lun 1")]

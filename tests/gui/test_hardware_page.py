"""The Hardware page on saved maps of real layouts, and on this machine."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from stripewise.environment import PrivilegeMode, Privileges
from stripewise.gui.hardware_map import SlotTile
from stripewise.gui.hardware_page import HardwarePage
from stripewise.inventory import load_inventory
from stripewise.inventory.snapshot import dumps
from tests.fixtures.machines import X4500_CONTROLLERS, X4500_SLOT_MAP, sun_x4500
from tests.fixtures.machines_sas import sas_enclosure


def snapshot(tmp_path: Path, name: str, umockdev_text: str) -> Path:
    recording = tmp_path / f"{name}.umockdev"
    recording.write_text(umockdev_text)
    path = tmp_path / f"{name}.json"
    path.write_text(dumps(load_inventory(recording)))
    return path


@pytest.fixture
def x4500_file(tmp_path: Path) -> Path:
    return snapshot(tmp_path, "x4500", sun_x4500().umockdev())


def page_of(window) -> HardwarePage:
    page = window.page_widgets["hardware"]
    assert isinstance(page, HardwarePage)
    return page


def tile(page: HardwarePage, disk: str) -> SlotTile:
    return next(t for t in page.map.tiles if t.slot.disk and t.slot.disk.name == disk)


def test_x4500_drawn_as_six_controllers_of_eight_ports(make_window, x4500_file: Path) -> None:
    page = page_of(make_window(view="hardware", inventory=x4500_file))
    assert [box.controller.id for box in page.map.boxes] == list(X4500_CONTROLLERS)
    for index, box in enumerate(page.map.boxes):
        assert [t.slot.port for t in box.tiles] == [f"port {i}" for i in range(8)]
        names = [t.slot.disk.name for t in box.tiles]
        assert [X4500_SLOT_MAP[n] for n in names] == [(index, i) for i in range(8)]
    assert "48 disks" in page.caption.text()


def test_search_dims_everything_else(qtbot, make_window, x4500_file: Path) -> None:
    page = page_of(make_window(view="hardware", inventory=x4500_file))
    serial = tile(page, "sdi").slot.disk.serial
    qtbot.keyClicks(page.search, serial.lower())
    assert page.matches.text() == "1 of 48 disks"
    assert [t.slot.disk.name for t in page.map.tiles if t.matches] == ["sdi"]
    page.search.clear()
    assert all(t.matches for t in page.map.tiles)


def test_click_shows_details_and_keys_walk_the_map(qtbot, make_window, x4500_file: Path) -> None:
    page = page_of(make_window(view="hardware", inventory=x4500_file))
    sdi = tile(page, "sdi")
    page.map.ensurePolished()
    qtbot.mouseClick(sdi, Qt.MouseButton.LeftButton)
    html = page.details.browser.toPlainText()
    assert "sdi in port 0" in html and sdi.slot.disk.serial in html
    assert "976,773,168 sectors of 512 B" in html
    assert sdi.selected
    qtbot.keyClick(sdi, Qt.Key.Key_Right)
    neighbour = page.map.tiles[page.map.tiles.index(sdi) + 1]
    assert neighbour.hasFocus()
    qtbot.keyClick(neighbour, Qt.Key.Key_Return)
    assert neighbour.selected and not sdi.selected


def test_slot_labels_are_kept_per_host(qtbot, make_window, x4500_file: Path) -> None:
    page = page_of(make_window(view="hardware", inventory=x4500_file))
    key = tile(page, "sdi").slot.key
    with qtbot.waitSignal(page.hardware.labelSaved, timeout=10_000):
        page.hardware.set_label(key, "Bay 12 (boot)")
    assert tile(page, "sdi").slot.title == "Bay 12 (boot)"
    again = page_of(make_window(view="hardware", inventory=x4500_file))
    assert tile(again, "sdi").slot.label == "Bay 12 (boot)"
    with qtbot.waitSignal(again.hardware.labelSaved, timeout=10_000):
        again.hardware.set_label(key, "")
    assert tile(again, "sdi").slot.title == "port 0"


def test_planned_members_get_their_own_colour(make_window, x4500_file: Path) -> None:
    page = page_of(make_window(view="hardware", inventory=x4500_file))
    page.map.set_planned({"sdas", "sdat"})
    assert tile(page, "sdas").state_key == "planned"
    assert tile(page, "sdi").state_key == "unknown"  # a snapshot of a dump: use not known


def test_locate_needs_privileges_and_this_machine(qtbot, make_window, tmp_path: Path) -> None:
    """A snapshot of the SAS server: its enclosure is another machine's, so even as root its
    LED is not offered, and a request that came all the same is refused without the helper
    (an enclosure at the same address here would light the wrong chassis). The LED through
    the real helper on a live map: tests/bays/test_locate_walk.py."""
    path = snapshot(tmp_path, "sas", sas_enclosure().umockdev())
    window = make_window(view="hardware", inventory=path)
    page = page_of(window)
    bay = next(t for t in page.map.tiles if t.slot.enclosure and t.slot.disk)
    window.helper.set_privileges(Privileges(PrivilegeMode.NONE, "no privileged actions: test"))
    qtbot.mouseClick(bay, Qt.MouseButton.LeftButton)
    assert page.details.locate.isVisible() and not page.details.locate.isEnabled()
    assert "no privileged actions" in page.details.locate_note.text()
    window.helper.set_privileges(Privileges(PrivilegeMode.ROOT, "test runs as root"))
    qtbot.mouseClick(bay, Qt.MouseButton.LeftButton)
    assert page.details.locate.isVisible() and not page.details.locate.isEnabled()
    said = "this map is not this machine's: its bay LEDs are not here"
    assert page.details.locate_note.text() == said
    messages: list[str] = []
    page.statusMessage.connect(messages.append)
    page.details.locateRequested.emit(bay.slot, True)  # said at once: no helper's reply
    assert messages == [f"Locate {bay.slot.enclosure.name}: {said}"]
    assert not page.details.locate.isChecked()


def test_this_machine(make_window) -> None:
    page = page_of(make_window(view="hardware"))
    inventory = page.hardware.inventory
    assert inventory is not None and page.hardware.origin.live
    assert len(page.map.tiles) >= len(inventory.disks)
    assert page.caption.text().startswith("This machine")


@pytest.mark.parametrize("view", ["hardware", "history"])
def test_f5_reads_the_page_on_show_again(qtbot, make_window, view: str) -> None:
    """One F5 in the window: on the Hardware page it reads the hardware again, elsewhere the
    history. Two shortcuts on one key are ambiguous to Qt, which then runs neither."""
    window = make_window(view=view)
    hardware, history = window.page_widgets["hardware"].hardware, window.history
    read: list[str] = []
    hardware.busyChanged.connect(lambda busy: busy and read.append("hardware"))
    history.runsLoaded.connect(lambda _runs: read.append("history"))
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window.page_widgets[view], Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: view in read, timeout=5_000)
    assert read[0] == view


def test_disks_behind_an_expander_are_no_port_of_the_hba(tmp_path: Path) -> None:
    """The SAS server: 8 disks in the expander's enclosure, 1 on the HBA's own phy 4. Its
    header counts the HBA's ports, not "9 of 8 ports used"."""
    from stripewise.gui.controller_box import controller_header

    path = snapshot(tmp_path, "sas", sas_enclosure().umockdev())
    (hba,) = load_inventory(path).controllers
    facts = controller_header(hba).splitlines()[1]
    assert "1 of 8 ports used, 8 disks behind an expander" in facts and "9 of 8" not in facts

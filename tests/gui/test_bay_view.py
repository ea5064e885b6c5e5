"""The Hardware page's bays: the X4500's 4 x 12 top drawn once in the editor, walked with the
locate LED (a fake LED stands in for the helper, behind the same interface), a disk dragged
onto a bay, health badges on the bays, and the ports one click away."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QScrollArea

from stripewise.gui.bay_layout_dialog import BayLayoutDialog
from stripewise.gui.bay_view import PORT_MIME, BayView
from stripewise.gui.hardware_page import HardwarePage
from stripewise.gui.planner_chips import chip_title
from stripewise.inventory import load_inventory
from stripewise.inventory.chassis_files import host_bays, layouts
from stripewise.inventory.snapshot import dumps
from stripewise.model.bay_map import PlacedBay
from stripewise.model.chassis import Face, Origin, dump_layout, parse_layout
from stripewise.model.health import parse_smartctl
from stripewise.model.topology import Disk, Inventory
from tests.bays.conftest import x4500_bay_of_port, x4500_port_name
from tests.bays.test_layouts import HAND_WRITTEN
from tests.fixtures.machines import X4500_CONTROLLERS, sun_x4500
from tests.gui.test_help import first_line

SMART = Path(__file__).resolve().parents[1] / "fixtures" / "smart"


class FakeLed:
    """Stands in for the helper's enclosure.locate: records what was lit and darkened."""

    def __init__(self) -> None:
        self.switched: list[tuple[str, bool]] = []

    def reason(self, inventory: Inventory, disk: Disk) -> str | None:
        return None

    def light(
        self,
        inventory: Inventory,
        disk: Disk,
        on: bool,
        failed: Callable[[str], None],
        done: Callable[[], None] = lambda: None,
    ) -> None:
        self.switched.append((disk.name, on))
        done()


@pytest.fixture
def x4500_file(tmp_path: Path) -> Path:
    recording = tmp_path / "x4500.umockdev"
    recording.write_text(sun_x4500().umockdev())
    path = tmp_path / "x4500.json"
    path.write_text(dumps(load_inventory(recording)))
    return path


def click_bay(qtbot, page: HardwarePage, label: str) -> None:
    view = page.bay_panel.view
    placed = next(p for p in view.placed if p.bay.label == label)
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=view.bay_rect(placed).center())


def test_the_x4500_drawn_walked_and_dragged(
    qtbot, make_window, x4500_file: Path, tmp_path: Path
) -> None:
    window = make_window(view="hardware", inventory=x4500_file)
    page = window.page_widgets["hardware"]
    assert isinstance(page, HardwarePage) and page.inventory is not None
    bays = window.hardware.bays
    qtbot.waitUntil(lambda: bays.state is not None)
    page.show_bays.click()
    assert page.bay_panel.isVisible() and not page.map_scroll.isVisible()
    assert page.show_bays.text() == "&Ports"
    assert "No chassis layout" in page.bay_panel.caption.text()
    assert not page.bay_panel.walk_button.isEnabled()
    assert not page.bay_panel.key.isVisible(), "no bays drawn: no key to them"

    # drawn in the editor, starting from the shipped X4500 layout
    templates = [layout for layout, _ in layouts().values()]
    dialog = BayLayoutDialog(None, "Sun Fire X4500", templates, page)
    assert first_line(dialog).startswith("Save keeps this layout for every machine of its product")
    dialog.start_from.setCurrentIndex(
        dialog.start_from.findText("Sun Fire X4500, 48 top-loading bays")
    )
    dialog.start_from.activated.emit(dialog.start_from.currentIndex())
    assert dialog.face.currentData() == Face.TOP.value and dialog.rows.value() == 4
    assert dialog.origin.currentData() == Origin.BOTTOM_LEFT.value
    dialog.rows.setValue(5)  # a slip, seen in the preview, put right
    assert len(dialog.preview.placed) == 60
    dialog.rows.setValue(4)
    layout = dialog.result_layout()
    assert layout.product == "Sun Fire X4500" and len(layout.bays) == 48
    dialog.close()
    bays.set_layout(layout)
    assert page.bay_panel.walk_button.isEnabled() and len(page.bay_panel.view.placed) == 48
    assert page.bay_panel.key.isVisible()
    assert page.bay_panel.unplaced.count() == 48

    # a file's map: the helper is not asked to light a bay of this machine; the walk says so
    page.bay_panel.start_walk()
    assert "this map is not this machine's: its bay LEDs are not here" in (
        page.bay_panel.walk_text.text()
    )
    page.bay_panel.stop_walk()

    # the walk: each port's LED in turn, through the six controllers; click the bay it lit
    led = FakeLed()
    page.bay_panel.locator = led
    page.bay_panel.start_walk()
    inventory = page.inventory
    lit = 0
    while page.bay_panel.walk is not None:
        disk = page.bay_panel.walk.current
        assert disk is not None and led.switched[-1] == (disk.name, True)
        assert f"the LED of {disk.name}'s bay is lit" in page.bay_panel.walk_text.text()
        controller = next(c for c in inventory.controllers if disk in c.disks)
        port = next(s.index for s in controller.slots if s.disk == disk)
        if lit == 5:
            page.bay_panel.skip.click()  # no LED seen: left for later
        else:
            number = x4500_bay_of_port(X4500_CONTROLLERS.index(controller.id), port)
            click_bay(qtbot, page, str(number))
        assert (disk.name, False) in led.switched[-2:]  # darkened before the next lights
        lit += 1
    assert lit == 48 and not page.bay_panel.walk_bar.isVisible()
    state = bays.state
    assert state is not None and len(state.ports) == 47
    skipped = page.bay_panel.unplaced.item(0)
    assert page.bay_panel.unplaced.count() == 1 and "mapped" in page.bay_panel.caption.text()

    # the skipped disk dragged onto its bay
    port = skipped.data(Qt.ItemDataRole.UserRole)
    name = skipped.text().split()[0]
    controller_index, slot = next(
        (X4500_CONTROLLERS.index(c.id), s.index)
        for c in inventory.controllers
        for s in c.slots
        if s.disk and s.disk.name == name
    )
    label = str(x4500_bay_of_port(controller_index, slot))
    view = page.bay_panel.view
    target = next(p for p in view.placed if p.bay.label == label)
    data = QMimeData()
    data.setData(PORT_MIME, port.encode())
    drop = QDropEvent(
        QPointF(view.bay_rect(target).center()),
        Qt.DropAction.MoveAction,
        data,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    view.dropEvent(drop)
    assert not page.bay_panel.unplaced.isVisible()
    placed = {p.bay.label: p.disk.name for p in view.placed if p.disk}
    assert len(placed) == 48 and placed[label] == name
    assert "48 of 48 bays mapped" in page.bay_panel.caption.text()

    # health badges stay on the bays
    failing = json.loads((SMART / "sata_hdd_failing_pending.json").read_text())
    window.hardware.set_health((parse_smartctl("sdi", failing),), inventory.host.key)
    assert view.health["sdi"].failing
    view.grab()

    # kept for the host, by by-path, in the config folder
    qtbot.waitUntil(lambda: len(host_bays(inventory.host.key, None).ports) == 48)

    # a bay cleared by hand forgets its port; its disk is back in the list to place
    view.bayCleared.emit(label)
    assert label not in bays.state.ports and page.bay_panel.unplaced.count() == 1
    view.portDropped.emit(label, port)
    assert bays.state.ports[label] == port

    # the keyboard chooses a bay as well: arrows move, Enter clicks it
    view.selected = "0"
    view.setFocus()
    clicked: list[str] = []
    view.bayClicked.connect(clicked.append)
    for key in (Qt.Key.Key_Right, Qt.Key.Key_Up, Qt.Key.Key_Left, Qt.Key.Key_Return):
        qtbot.keyClick(view, key)
    assert clicked == ["12"]  # one to the right (1), up a row toward the rear (13), left (12)

    # the planner names each disk by its bay
    window.planner.plan_on_inventory(inventory, bays.labels_for(inventory))
    sdi = next(d for d in window.planner.plan.disks if d.id == "sdi")
    assert chip_title(sdi) == "bay 6 (sdi)"

    # exported to share, and a file with one bay fewer mapped imported as this host's
    exported = tmp_path / "thumper.toml"
    bays.export_to(exported)
    qtbot.waitUntil(exported.exists)
    shared = parse_layout(exported.read_text(encoding="utf-8"), "thumper.toml")
    assert shared.product == "Sun Fire X4500" and dict(shared.ports) == bays.state.ports
    fewer = {k: v for k, v in shared.ports.items() if k != "0"}
    (tmp_path / "fewer.toml").write_text(dump_layout(shared, fewer), encoding="utf-8")
    bays.import_from(tmp_path / "fewer.toml")
    qtbot.waitUntil(lambda: "0" not in bays.state.ports)
    assert len(bays.state.ports) == 47 and page.bay_panel.unplaced.count() == 1

    # the controllers one click away
    page.show_bays.click()
    assert page.map_scroll.isVisible() and not page.bay_panel.isVisible()
    assert page.show_bays.text() == "Ba&ys" and page.details.isVisible()


def test_at_800x600_each_bay_shows_its_disk_name_whole(
    qtbot, make_window, x4500_file: Path
) -> None:
    """A kernel name cut short reads as another disk's: `sda…` for sdam is sda, two bays
    away, the disk an admin would pull. The size and model give way; the name never does."""
    window = make_window(view="hardware", inventory=x4500_file)
    window.resize(800, 600)
    page = window.page_widgets["hardware"]
    bays = window.hardware.bays
    qtbot.waitUntil(lambda: bays.state is not None)
    x4500 = next(layout for layout, _ in layouts().values() if layout.product == "Sun Fire X4500")
    ports = {
        str(x4500_bay_of_port(c, p)): x4500_port_name(c, p) for c in range(6) for p in range(8)
    }
    bays.set_layout(replace(x4500, ports=ports))
    page.show_bays.click()
    view = page.bay_panel.view
    assert window.width() == 800 and sum(1 for p in view.placed if p.disk) == 48
    narrowest = BayView()  # 12 bays across at their least width
    narrowest.set_bays(x4500, view.placed)
    narrowest.resize(narrowest.minimumSizeHint())
    for shown in (view, narrowest):
        for placed in shown.placed:
            assert placed.disk is not None
            words = " ".join(shown.shown_lines(placed)[:2]).split()
            assert placed.disk.name in words, (placed.bay.label, words)
            assert not any(word.endswith("…") for word in words), (placed.bay.label, words)
        shown.grab()  # painted as said


def test_the_arrows_reach_every_panel_and_enter_clicks_a_rear_bay(qtbot) -> None:
    """docs/bays.md's 36 bays, 24 at the front and 12 at the back: the keyboard passes a
    panel's edge to the next, so a rear bay is chosen (and clicked in a walk) without a mouse."""
    layout = parse_layout(HAND_WRITTEN, "hand.toml")
    view = BayView()
    view.set_bays(layout, [PlacedBay(bay, None, None) for bay in layout.bays])
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setWidget(view)
    scroll.resize(800, 300)  # the back below the fold
    qtbot.addWidget(scroll)
    scroll.show()
    qtbot.waitExposed(scroll)
    clicked: list[str] = []
    view.bayClicked.connect(clicked.append)
    view.setFocus()

    def press(key: Qt.Key, times: int = 1, ctrl: bool = False) -> str | None:
        modifier = Qt.KeyboardModifier.ControlModifier if ctrl else Qt.KeyboardModifier.NoModifier
        for _ in range(times):
            qtbot.keyClick(view, key, modifier)
        return view.selected

    view.selected = "1-01"
    assert press(Qt.Key.Key_Down, 4) == "rear 2-06"  # past the front's bottom row: the back
    assert scroll.verticalScrollBar().value() > 0, "the chosen rear bay scrolled into sight"
    press(Qt.Key.Key_Return)
    assert clicked == ["rear 2-06"]
    assert press(Qt.Key.Key_Down) == "rear 1-06"
    assert press(Qt.Key.Key_Down) == "rear 1-06"  # the last panel's bottom: stays
    assert press(Qt.Key.Key_Up, 2) == "4-01"  # back up to the front's bottom row
    assert press(Qt.Key.Key_End) == "4-06"  # the row's end
    assert press(Qt.Key.Key_Right) == "rear 2-06"  # on in reading order: the next panel
    assert press(Qt.Key.Key_Left) == "4-06"
    assert press(Qt.Key.Key_Home) == "4-01"
    assert press(Qt.Key.Key_End, ctrl=True) == "rear 1-01"  # the chassis's last bay
    assert press(Qt.Key.Key_Home, ctrl=True) == "1-01"
    assert press(Qt.Key.Key_PageDown) == "rear 2-06"  # the same place a panel down
    assert press(Qt.Key.Key_PageUp) == "1-01"

"""The Hardware page with 480 disks: ten X4500s' controllers, a card per disk, scrolling."""

from __future__ import annotations

from pathlib import Path

from stripewise.gui.hardware_page import HardwarePage
from tests.fixtures.machines import x4500_controllers, x4500_row
from tests.gui.test_hardware_page import snapshot

CHASSIS = 10


def test_480_cards_grouped_by_controller_in_a_map_that_scrolls(
    qtbot, make_window, tmp_path: Path
) -> None:
    path = snapshot(tmp_path, "x4500-row", x4500_row(CHASSIS).umockdev())
    page = make_window(view="hardware", inventory=path).page_widgets["hardware"]
    assert isinstance(page, HardwarePage)
    assert len(page.map.tiles) == 480
    assert {t.slot.disk.name for t in page.map.tiles if t.slot.disk} == {
        d.name for d in page.inventory.disks
    }
    expected = [address for n in range(CHASSIS) for address in x4500_controllers(n)]
    assert [box.controller.id for box in page.map.boxes] == expected
    assert all(len(box.tiles) == 8 for box in page.map.boxes)
    assert "480 disks" in page.caption.text()
    bar = page.map_scroll.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 3 * page.map_scroll.viewport().height())  # laid out
    last = page.map.tiles[-1]
    page.map_scroll.ensureWidgetVisible(last)
    qtbot.waitUntil(lambda: not last.visibleRegion().isEmpty())

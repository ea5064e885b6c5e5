"""Issue 28 point 12 in the window: a dump cut short says so above the map, in one line, and
opening a whole one takes the line away."""

from __future__ import annotations

from pathlib import Path

from stripewise.gui.hardware_page import HardwarePage
from tests.gui.conftest import WindowFactory

DGX = Path(__file__).parents[1] / "fixtures" / "udev" / "dgx_nvme_raid.txt"


def test_the_hardware_page_says_a_dump_is_cut_short(
    qtbot, make_window: WindowFactory, tmp_path: Path
) -> None:
    text = DGX.read_text()
    offset = text.index("E: ID_SERIAL=", text.index("nvme3/nvme3n1\n")) + 20
    cut = tmp_path / "dgx.txt"
    cut.write_text(text[:offset])
    line = text.count("\n", 0, offset) + 1
    said = f"{cut} looks cut short at line {line} (a line without its end)"

    page = make_window(view="hardware", inventory=cut).page_widgets["hardware"]
    assert isinstance(page, HardwarePage)
    qtbot.waitUntil(page.incomplete.isVisible)
    assert said in page.incomplete.text() and "disks listed after it are missing" in (
        page.incomplete.text()
    )
    assert page.incomplete.text().count("&#9888;") == 1, "one line"
    assert "looks cut" not in page.caption.text(), "said once, not again as a note"
    assert "2 disks" in page.caption.text()

    page.hardware.load_file(DGX)
    qtbot.waitUntil(lambda: "10 disks" in page.caption.text())
    assert not page.incomplete.isVisible()

"""A controller box's header, painted by hand: its title and facts wrap to the box, it is
never narrower than its longest word, and its text can be copied."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QGuiApplication

from stripewise.gui.hardware_map import ControllerBox, controller_header
from stripewise.model.topology import Controller, Slot


def _box(qtbot: Any) -> ControllerBox:
    controller = Controller(
        id="0000:01:01.0",
        kind="sata_mv",
        model="Marvell Technology Group Ltd. MV88SX6081 8-port SATA II PCI-X Controller",
        driver="sata_mv",
        port_count=8,
        slots=(Slot(0, "port 0", "0000:01:01.0/ata-1"),),
    )
    box = ControllerBox(controller)
    qtbot.addWidget(box)
    return box


def test_the_header_wraps_to_the_box_and_keeps_its_longest_word(qtbot: Any) -> None:
    box = _box(qtbot)
    header = box.header
    assert header.text() == controller_header(box.controller)
    title, facts = header.text().split("\n")
    assert title.startswith("Marvell") and facts.startswith("0000:01:01.0 · sata_mv · 0 of 8")
    wide, narrow = header.heightForWidth(2000), header.heightForWidth(150)
    assert narrow > wide > 0, "two lines when wide, more when narrow"
    assert header.heightForWidth(150) == narrow  # the same answer asked again
    least = header.minimumSizeHint().width()
    assert header.fontMetrics().horizontalAdvance("Technology") < least < 300
    assert header.sizeHint().width() >= header.fontMetrics().horizontalAdvance(title)
    box.resize(300, 400)
    box.show()
    qtbot.waitExposed(box)
    assert header.height() >= header.heightForWidth(header.width()), "nothing cut off"
    assert not header.grab().isNull()


def test_the_header_text_is_copied(qtbot: Any) -> None:
    header = _box(qtbot).header
    header.copy()
    assert QGuiApplication.clipboard().text() == header.text()

"""What the Tuning page shows, read as a user reads it at 1280x900: whole device labels, notes
wrapped in full and said once, values with units (bytes also in MiB/GiB), and geometry advice
that is true of the filesystem on the array."""

from __future__ import annotations

import subprocess
from typing import Any

from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication, QLabel

from stripewise.gui.tuning_notes import RestoredNote, geometry_text
from stripewise.gui.tuning_preview import COLUMNS, NEW, PreviewTable
from stripewise.model.presets import Preset, Wanted, resolve
from stripewise.model.tunables import Change, Setting
from stripewise.protocol.tuning_replies import PutBack
from stripewise.services.tuning import geometry_report
from tests.fixtures.loops import loop_device, needs_loop
from tests.gui.conftest import WindowFactory
from tests.gui.test_tuning_page import loop_at, preview_on, tuning_ready

NOTE = 5  # the preview's Note column
BYTES_IN_FORCE = {"vm.dirty_ratio": 0, "vm.dirty_bytes": 536870912}


def table_of(qtbot: Any, changes: list[Change], width: int = 760) -> PreviewTable:
    table = PreviewTable()
    qtbot.addWidget(table)
    table.resize(width, 400)
    table.show()
    qtbot.waitExposed(table)
    table.show_changes(changes)
    QApplication.processEvents()
    return table


@needs_loop
def test_device_labels_are_whole_at_1280x900(make_window: WindowFactory, qtbot: Any) -> None:
    with loop_at(128) as (loop, _queue):
        window, page = tuning_ready(make_window, qtbot, loop)
        window.resize(1280, 900)
        qtbot.waitUntil(lambda: window.size().toTuple() == (1280, 900), timeout=5_000)
        QApplication.processEvents()
        room = page.devices.viewport().width() - 30  # the check box beside the text
        metrics = page.devices.fontMetrics()
        for row in range(page.devices.count()):
            text = page.devices.item(row).text()
            assert metrics.horizontalAdvance(text) <= room, f"{text!r} cut at {room} px"
        window.resize(900, 900)  # narrower: a long label wraps, never scrolls out of sight
        qtbot.waitUntil(lambda: window.size().toTuple() == (900, 900), timeout=5_000)
        QApplication.processEvents()
        assert page.devices.horizontalScrollBar().maximum() == 0


@needs_loop
def test_the_preview_has_room_at_800x600(make_window: WindowFactory, qtbot: Any) -> None:
    """The field report: at 800x600 the preview was ~60 px tall (its header and one blank
    row), Current/New/Unit behind a scrollbar, while the device list kept ~300 px; the
    results heading wrapped onto five lines. The list gives way first."""
    with loop_at(192) as (loop, _queue):
        window, page = preview_on(make_window, qtbot, loop, device_only=False)
        window.resize(800, 600)
        qtbot.waitUntil(lambda: window.size().toTuple() == (800, 600), timeout=5_000)
        QApplication.processEvents()
        table = page.preview
        whole = [
            row
            for row in range(table.rowCount())
            if table.rowViewportPosition(row) + table.rowHeight(row) <= table.viewport().height()
        ]
        assert len(whole) >= 4, [table.rowHeight(row) for row in range(table.rowCount())]
        unit = COLUMNS.index("Unit")
        assert table.columnViewportPosition(unit) + table.columnWidth(unit) <= (
            table.viewport().width()
        )  # Current, New and Unit on screen, the Note wrapping in what is left
        assert page.devices.width() < page.preview.width()
        (heading,) = [
            label
            for label in page.findChildren(QLabel)
            if label.text().startswith("Filesystem geometry")
        ]
        assert heading.height() <= 2 * heading.fontMetrics().lineSpacing() + 4


def test_a_long_note_wraps_in_full_in_its_row(qtbot: Any) -> None:
    note = "; ".join(f"a reason a reader needs to see whole, number {n}" for n in range(6))
    change = Change(Setting("read_ahead_kb", 4096, "loop0"), 128, note)
    table = table_of(qtbot, [change])
    wanted = table.fontMetrics().boundingRect(
        QRect(0, 0, table.columnWidth(NOTE) - 8, 10_000), Qt.TextFlag.TextWordWrap, note
    )
    assert table.rowHeight(0) >= wanted.height()
    right = table.columnViewportPosition(NOTE) + table.columnWidth(NOTE)
    assert right <= table.viewport().width()  # the Note column ends within the table


def test_the_pair_zeroed_is_said_once(qtbot: Any) -> None:
    preset = Preset("ratios", "", "", {"vm.dirty_ratio": Wanted("vm.dirty_ratio", 10)})
    (change,) = resolve(preset, {}, BYTES_IN_FORCE)
    table = table_of(qtbot, [change])
    note = table.item(0, NOTE).text()
    assert note.count("vm.dirty_bytes to 0") + note.count("vm.dirty_bytes becomes 0") == 1, note
    assert "536870912 bytes (512 MiB)" in note


def test_the_pair_is_not_mentioned_when_its_other_half_is_already_0(qtbot: Any) -> None:
    """The field report: "vm.dirty_bytes becomes 0" beside vm.dirty_ratio with vm.dirty_bytes
    at 0 already (the ratio in force); `tune preview` said nothing of it."""
    preset = Preset("ratios", "", "", {"vm.dirty_ratio": Wanted("vm.dirty_ratio", 10)})
    (change,) = resolve(preset, {}, {"vm.dirty_ratio": 20, "vm.dirty_bytes": 0})
    table = table_of(qtbot, [change])
    assert table.item(0, NEW).text() == "10"
    assert "vm.dirty_bytes" not in table.item(0, NOTE).text()


def test_byte_values_say_what_they_come_to(qtbot: Any) -> None:
    change = Change(Setting("vm.dirty_bytes", 2**30), 536870912)
    table = table_of(qtbot, [change])
    cells = [table.item(0, column).text() for column in range(6)]
    assert cells[2:5] == ["536870912 (512 MiB)", "1073741824 (1 GiB)", "bytes"]
    assert table.item(0, NEW).data(Qt.ItemDataRole.UserRole) == "1073741824"  # to edit


def test_the_restored_note_gives_units(qtbot: Any) -> None:
    note = RestoredNote()
    qtbot.addWidget(note)
    note.tell(
        (
            PutBack("j1", "vm.dirty_bytes", None, 2**30, 536870912),
            PutBack("j1", "read_ahead_kb", "loop3", 4096, 128),
            PutBack("j1", "vm.dirty_expire_centisecs", None, 500, 3000),
        )
    )
    text = note.text()
    assert "vm.dirty_bytes 1073741824 (1 GiB) -> 536870912 bytes (512 MiB)" in text
    assert "loop3: read_ahead_kb 4096 -> 128 KiB" in text
    assert "vm.dirty_expire_centisecs 500 (5 s) -> 3000 centisecs (30 s)" in text


def test_geometry_says_below_only_with_advice_below() -> None:
    for level, members, chunk in (("raid1", 2, None), ("raid5", 2, 512), ("raid0", 4, None)):
        for filesystem in (None, "ext4", "btrfs"):
            report = geometry_report("md9", level, members, chunk, filesystem)
            text = geometry_text([report])
            assert report.advice is None and "below" not in text and "mkfs" not in text, text
    made = geometry_text([geometry_report("md9", "raid5", 4, 512, None)])
    assert "no filesystem yet" in made and "stride=128,stripe_width=384" in made


@needs_loop
def test_ext3_is_checked_for_the_stride_it_records() -> None:
    """mke2fs records stride and stripe_width on ext3 as on ext4, and tune2fs sets them; in
    the filesystem's own blocks (1 KiB on a small one): the fix is counted in those."""
    with loop_device(64 * 2**20, direct_io=False) as loop:
        subprocess.run(["mkfs.ext3", "-q", "-F", loop.device], check=True, capture_output=True)
        report = geometry_report(loop.name, "raid5", 4, 512, "ext3")
        assert report.note == "ext3 does not match the array" and len(report.problems) == 2
        fix = report.advice.fix_argv(loop.device) if report.advice else None
        assert fix is not None and fix[0] == "tune2fs"
        subprocess.run(fix, check=True, capture_output=True)
        again = geometry_report(loop.name, "raid5", 4, 512, "ext3")
        assert again.note == "ext3 matches the array" and not again.problems

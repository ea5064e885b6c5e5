"""What the Tuning page shows, read as a user reads it at 1280x900: whole device labels, notes
wrapped in full and said once, values with units (bytes also in MiB/GiB), and geometry advice
that is true of the filesystem on the array."""

from __future__ import annotations

import subprocess
from typing import Any

from PySide6.QtWidgets import QApplication

from stripewise.gui.tuning_notes import geometry_text
from stripewise.services.tuning import geometry_report
from tests.fixtures.loops import loop_device, needs_loop
from tests.gui.conftest import WindowFactory
from tests.gui.test_tuning_page import loop_at, tuning_ready

NOTE = 5  # the preview's Note column
BYTES_IN_FORCE = {"vm.dirty_ratio": 0, "vm.dirty_bytes": 536870912}


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

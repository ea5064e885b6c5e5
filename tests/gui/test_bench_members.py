"""The Benchmark page's members table on a real array: a btrfs raid0 over three loop devices,
one backed by a file a FUSE server paces slower, run through the page and the real helper.
Each member's live figures fill the table during the run; the paced one is marked, and the
page's warnings name it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from stripewise.gui.bench_members import COLUMNS, STAND_OUT_MARK, MembersTable
from tests.fixtures.loops import loop_device, needs_loop
from tests.fixtures.throttled_fuse import needs_fuse, throttled_disks
from tests.gui.conftest import WindowFactory
from tests.gui.test_bench_page import bench_page
from tests.helper.test_array_members import DEVICE_BYTES, SLOW_MB_S, btrfs_over, needs_btrfs


@needs_loop
@needs_fuse
@needs_btrfs
def test_each_member_live_and_the_slow_one_marked(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> None:
    window = make_window(view="benchmark")
    page = bench_page(window)
    table = page.findChild(MembersTable)
    assert table is not None and not table.isVisible()  # no array yet
    with (
        throttled_disks(1, DEVICE_BYTES, total_mb_s=SLOW_MB_S, disk_mb_s=SLOW_MB_S, slow={})
        as paced,
        loop_device(DEVICE_BYTES) as first,
        loop_device(DEVICE_BYTES) as last,
    ):  # fmt: skip
        slow = paced.names[0]
        members = {first.name, slow, last.name}
        with btrfs_over([first.device, f"/dev/{slow}", last.device], "raid0") as mountpoint:
            page.form.add_directory(mountpoint)
            page.form.engine.setCurrentIndex(page.form.engine.findData("builtin"))
            for phase, box in page.form.phase_boxes.items():
                box.setChecked(phase.value in ("seq_write", "seq_read"))
            page.form.file_size.setText("96M")
            page.form.block.setCurrentText("1M")
            page.form.rate.setValue(10)
            live: list[list[list[str]]] = []

            def seen() -> bool:  # the table's rows while the run still goes
                if page.cancel_button.isEnabled() and table.rowCount():
                    live.append(table.row_texts())
                return len(live) >= 3

            with qtbot.waitSignal(page.session.saved, timeout=180_000) as saved:
                qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
                qtbot.waitUntil(seen, timeout=60_000)
            assert saved.args[1] == "complete"

    assert table.isVisible() and table.rowCount() == 3
    assert [table.horizontalHeaderItem(c).text() for c in range(len(COLUMNS))] == list(COLUMNS)
    for rows in live:
        assert {row[0].removesuffix(f" {STAND_OUT_MARK}") for row in rows} == members
        for row in rows:  # figures or a dash (no I/O completed: no await), never blank
            assert all(cell for cell in row[1:])
    rows = {row[0].removesuffix(f" {STAND_OUT_MARK}"): row for row in table.row_texts()}
    assert rows[slow][0] == f"{slow} {STAND_OUT_MARK}"  # the read phase's stand-out, marked
    assert all(not rows[m][0].endswith(STAND_OUT_MARK) for m in members - {slow})
    marked = table.item(list(rows).index(slow), 0)
    assert marked.font().bold() and marked.toolTip().startswith(f"{slow}: ")
    assert "x the others' await" in marked.toolTip()
    # the page's warnings and results say it too, as the helper worded it
    assert f"{slow}: " in page.warnings.text() and "the others' await" in page.warnings.text()
    assert "member_stands_out" in page.results.flags("seq_read")

    # the History detail names it again, from the stored samples
    with qtbot.waitSignal(window.history.runsLoaded, timeout=10_000):
        qtbot.mouseClick(page.open_button, Qt.MouseButton.LeftButton)
        window.history.load_runs()
    history_page = window.page_widgets["history"]
    qtbot.waitUntil(lambda: history_page.shown_run is not None, timeout=10_000)  # type: ignore[attr-defined]
    named = history_page.detail.members  # type: ignore[attr-defined]
    assert named.isVisible()
    assert f"Sequential Input, Block, pass 1: {slow}: " in named.text()
    assert "x the others' await" in named.text()

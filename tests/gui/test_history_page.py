"""The History page on a real SQLite history: columns, sorting, renaming, tags, notes, the
baseline mark, delete with undo, the trash, and picking runs to compare."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox, QStyle

from stripewise.gui.history_detail import RunDetailPane
from stripewise.gui.history_model import COLUMNS
from stripewise.gui.history_page import HistoryPage
from stripewise.model.run import ResultValue
from tests.fixtures.background import wait_for_deliveries
from tests.fixtures.compared_runs import run
from tests.gui.conftest import WindowFactory


def history_page(make_window: WindowFactory, url: str) -> HistoryPage:
    page = make_window(url=url, view="history").page_widgets["history"]
    assert isinstance(page, HistoryPage)
    return page


def cell(page: HistoryPage, row: int, column: str) -> str:
    return str(page.proxy.index(row, COLUMNS.index(column)).data())


def listed_ids(page: HistoryPage) -> list[int]:
    return [int(cell(page, r, "ID")) for r in range(page.proxy.rowCount())]


def test_columns_show_what_was_measured_and_sort(
    make_window: WindowFactory, seeded_db_url: str
) -> None:
    page = history_page(make_window, seeded_db_url)
    assert listed_ids(page) == [3, 2, 1], "newest first"
    assert cell(page, 0, "Results") == "read 213 MB/s"
    assert cell(page, 0, "Engine") == "fio 3.33" and cell(page, 0, "Status") == "complete"
    page.table.sortByColumn(COLUMNS.index("Started"), Qt.SortOrder.AscendingOrder)
    assert listed_ids(page) == [1, 2, 3]
    page.table.sortByColumn(COLUMNS.index("ID"), Qt.SortOrder.DescendingOrder)
    assert listed_ids(page) == [3, 2, 1]


def test_rename_tag_annotate_and_baseline_reach_the_database(
    make_window: WindowFactory, seeded_db_url: str, qtbot: Any
) -> None:
    page = history_page(make_window, seeded_db_url)
    page.rename(2, "chunk 256K")
    page.set_tags(2, ["chunk", "xfs"])
    page.set_notes(2, "Second controller.\nMembers in slots 3 and 6.")
    qtbot.waitUntil(lambda: "chunk 256K" in cell(page, 1, "Name"), timeout=5_000)
    qtbot.waitUntil(lambda: cell(page, 1, "Notes") == "Second controller.", timeout=5_000)
    qtbot.waitUntil(lambda: cell(page, 1, "Tags") == "chunk, xfs", timeout=5_000)
    page.select_runs([2])
    assert page.actions_by_name["Mark as Baseline"].isEnabled()
    page.toggle_baseline()
    qtbot.waitUntil(lambda: cell(page, 1, "Name") == "\u2605 chunk 256K", timeout=5_000)
    assert page.actions_by_name["Mark as Baseline"].text() == "Unmark as Baseline"
    page.filter.setText("slots")  # notes are searched too
    qtbot.waitUntil(lambda: listed_ids(page) == [2], timeout=5_000)
    page.filter.setText("")
    page.scope.setCurrentIndex(page.scope.findData("baselines"))
    qtbot.waitUntil(lambda: listed_ids(page) == [2], timeout=5_000)
    page.rename(2, "   ")  # refused, said, nothing changed
    qtbot.waitUntil(lambda: "not changed" in page.caption.text(), timeout=5_000)


def test_delete_asks_then_undo_and_the_trash_bring_runs_back(
    make_window: WindowFactory, seeded_db_url: str, qtbot: Any
) -> None:
    page = history_page(make_window, seeded_db_url)
    page.select_runs([3, 1])
    assert page.selected_ids() == [3, 1]

    def answer(button: QMessageBox.StandardButton) -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox) and "Delete 2 runs (3, 1)" in box.text()
        box.button(button).click()

    QTimer.singleShot(100, lambda: answer(QMessageBox.StandardButton.Cancel))
    page.delete_selected()
    # a delete is a background task whose delivery lists the runs again: none is left to come
    wait_for_deliveries(qtbot)
    assert listed_ids(page) == [3, 2, 1], "cancelled: nothing deleted"

    QTimer.singleShot(100, lambda: answer(QMessageBox.StandardButton.Yes))
    page.delete_selected()
    qtbot.waitUntil(lambda: listed_ids(page) == [2], timeout=5_000)
    assert page.undo_bar.isVisibleTo(page) and "Deleted 2 runs" in page.undo_label.text()
    page.undo_button.click()
    qtbot.waitUntil(lambda: listed_ids(page) == [3, 2, 1], timeout=5_000)

    page.select_runs([2])
    page.delete_selected(confirm=False)
    qtbot.waitUntil(lambda: listed_ids(page) == [3, 1], timeout=5_000)
    page.scope.setCurrentIndex(page.scope.findData("trash"))
    qtbot.waitUntil(lambda: listed_ids(page) == [2], timeout=5_000)
    assert page.caption.text() == "1 deleted run, kept 30 days: Restore brings it back"
    assert page.restore_button.isVisibleTo(page) and not page.compare_button.isEnabled()
    page.select_runs([2])
    page.restore_button.click()
    qtbot.waitUntil(lambda: listed_ids(page) == [], timeout=5_000)
    page.scope.setCurrentIndex(page.scope.findData("all"))
    qtbot.waitUntil(lambda: listed_ids(page) == [3, 2, 1], timeout=5_000)


def test_compare_takes_two_to_eight_selected_runs(
    make_window: WindowFactory, seeded_db_url: str, qtbot: Any
) -> None:
    page = history_page(make_window, seeded_db_url)
    page.select_runs([1])
    assert not page.compare_button.isEnabled()
    page.select_runs([1, 3])
    assert page.compare_button.isEnabled() and page.compare_button.text() == "Compare 2"
    with qtbot.waitSignal(page.compareRequested) as asked:
        page.compare_button.click()
    assert asked.args == [[1, 3]], "oldest first: the first is the baseline"


FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports"


def test_import_from_the_gui_lists_the_runs_and_refuses_the_same_file_twice(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    from stripewise.gui.history_io import import_path

    window = make_window(url=db_url, view="history")
    page = window.page_widgets["history"]
    assert isinstance(page, HistoryPage)
    imported: list[list[int]] = []
    source = FIXTURES / "bonnie200a_direct.csv"
    import_path(window, window.history, source, imported.append)
    qtbot.waitUntil(lambda: bool(imported) and page.proxy.rowCount() > 0, timeout=10_000)
    assert len(imported[0]) == page.proxy.rowCount()
    assert "(imported)" in cell(page, 0, "Engine")
    assert cell(page, 0, "Results") == "write 592 MB/s, rand read 12,806 IOPS, rewrite 442 MB/s"
    # bonnie++'s CSV says nothing of the array or the tuning: unknown, not "none"
    assert (cell(page, 0, "Array"), cell(page, 0, "Tuning")) == ("not recorded", "not recorded")
    tuning = page.proxy.index(0, COLUMNS.index("Tuning"))
    assert "does not say what was in force" in tuning.data(Qt.ItemDataRole.ToolTipRole)
    page.scope.setCurrentIndex(page.scope.findData("imported"))
    qtbot.waitUntil(lambda: page.proxy.rowCount() == len(imported[0]), timeout=5_000)

    said: list[str] = []

    def close_warning() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        said.append(box.text())
        box.button(QMessageBox.StandardButton.Ok).click()

    QTimer.singleShot(300, close_warning)
    import_path(window, window.history, source, imported.append)
    qtbot.waitUntil(lambda: bool(said), timeout=10_000)
    assert "Nothing was imported" in said[0] and "already imported" in said[0]
    assert len(imported) == 1


def test_an_import_that_skipped_part_of_the_file_says_what_it_skipped(
    make_window: WindowFactory, db_url: str, qtbot: Any, tmp_path: Path
) -> None:
    from stripewise.gui.history_io import import_path

    window = make_window(url=db_url, view="history")
    lines = (FIXTURES / "bonnie200a_x2_header.csv").read_text().splitlines()
    partly = tmp_path / "results.csv"
    partly.write_text("\n".join([*lines[:2], ",".join(lines[2].split(",")[:12])]))
    imported: list[list[int]] = []
    said: list[str] = []

    def close_notice() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(100, close_notice)
            return
        said.append(box.text())
        box.button(QMessageBox.StandardButton.Ok).click()

    QTimer.singleShot(100, close_notice)
    import_path(window, window.history, partly, imported.append)
    qtbot.waitUntil(lambda: bool(said), timeout=10_000)
    assert len(imported) == 1 and len(imported[0]) == 1
    assert said[0].startswith("Imported 1 run; parts of results.csv could not be read")
    assert "line 3" in said[0]


def test_an_import_fills_the_detail_pane_in_the_units_the_toggle_picks(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    from stripewise.history.database import open_database
    from stripewise.history.imports import import_file

    db = open_database(db_url)
    try:
        (bonnie,) = import_file(db, FIXTURES / "bonnie200a_direct.csv")
        fio = import_file(db, FIXTURES / "fio_randrw.json")[0]
    finally:
        db.close()
    page = history_page(make_window, db_url)
    page.show_run(bonnie)
    qtbot.waitUntil(lambda: page.shown_run is not None, timeout=5_000)
    table = page.detail_results
    # bonnie++'s Block output is the measured seq_write: 577865 K/s = 591.7 MB/s
    assert table.cell_text("seq_write", 1) == "592"
    assert table.cell_text("random_read", 3) == "12,806"
    assert table.cell_text("rewrite", 4) == "86.0"
    with pytest.raises(KeyError):  # `-f`: bonnie++ skipped the per-char tests, no empty rows
        table.cell_text("seq_write_per_char", 0)
    assert "imported from bonnie200a_direct.csv (/s as IOPS, KiB/s as MB/s)" in (
        page.detail_title.text()
    )
    # what the table has no cell for: bonnie++'s slowest operation, as it printed it
    other = page.other_figures
    assert other.isVisibleTo(page)
    rows = {
        (other.item(r, 0).text(), other.item(r, 1).text()): other.item(r, 2).text()
        for r in range(other.rowCount())
    }
    assert rows["seq_write", "Latency max"] == "4,181"

    page.mib_toggle.setChecked(True)
    assert table.cell_text("seq_write", 1) == "564"  # bonnie++'s own table printed `564m`
    assert cell(page, 0, "Results").startswith("write 564 MiB/s")
    assert page.model.binary_units
    page.set_binary_units(False)
    assert not page.mib_toggle.isChecked() and "MB/s" in cell(page, 0, "Results")

    page.shown_run = None
    page.show_run(fio)
    qtbot.waitUntil(lambda: page.shown_run is not None, timeout=5_000)
    assert page.detail_results.phases_shown() == ["mixed"]  # fio's randrw job
    assert page.detail_results.cell_text("mixed", 1) == "224"  # reads plus writes, MB/s


FULL_RUN = ("seq_write", "rewrite", "seq_read", "random_read", "random_write", "mixed")


def rows_in_view(table: Any) -> int:
    """Rows wholly inside the table's viewport as it is scrolled now."""
    height = table.viewport().height()
    return sum(
        table.rowViewportPosition(r) >= 0
        and table.rowViewportPosition(r) + table.rowHeight(r) <= height
        for r in range(table.model().rowCount())
    )


def store_full_run(url: str) -> int:
    """A measured run with all six phases (bonnie++'s layout: 3 headings + 6 rows), a note
    and tags, among 40 others: the title wraps and the list has more rows than fit."""
    from tests.seed import record_run, seed_runs

    seed_runs(url, count=40, samples_per_run=1)
    figures = tuple(
        ResultValue(phase, metric, unit, value)
        for phase in FULL_RUN
        for metric, unit, value in (("throughput", "MB/s", 512.0), ("iops", "IOPS", 900.0))
    )
    context = {"filesystem": "xfs", "mount_options": "rw,noatime,sunit=1024,swidth=3072"}
    return record_run(
        url, "md0 raid5 of 4, chunk 512K, after the firmware update", context, results=figures
    )


@pytest.mark.parametrize("size", [QSize(1280, 1024), QSize(1024, 768)], ids=str)
def test_the_detail_pane_shows_a_whole_run_without_scrolling(
    make_window: WindowFactory, db_url: str, qtbot: Any, size: QSize
) -> None:
    """The field report: two rows of results before scrolling. A whole run is nine rows (three
    of bonnie++'s headings, six phases): all of them show, with a title, tags and a note, at
    the smallest supported window and at the test screen's size; the list keeps five rows."""
    run_id = store_full_run(db_url)
    window = make_window(url=db_url, view="history")
    page = window.page_widgets["history"]
    assert isinstance(page, HistoryPage)
    page.set_tags(run_id, ["raid5", "firmware-2.1"])
    page.set_notes(run_id, "Members moved to the second controller before this run.")

    def annotated() -> bool:
        row = page.model.row_of(run_id)
        return row is not None and bool(
            page.model.run_at(row).notes and page.model.run_at(row).tags
        )

    qtbot.waitUntil(annotated, timeout=5_000)
    window.resize(size)
    page.show_run(run_id)
    qtbot.waitUntil(lambda: page.shown_run is not None, timeout=5_000)
    qtbot.waitUntil(lambda: "firmware-2.1" in page.detail_title.text(), timeout=5_000)
    results = page.detail_results
    assert results.rowCount() == 9
    qtbot.waitUntil(lambda: rows_in_view(results) == 9, timeout=2_000)
    assert results.verticalScrollBar().maximum() == 0
    assert rows_in_view(page.table) >= 5


def test_double_click_and_enter_open_the_run_and_f2_renames_it(
    make_window: WindowFactory, seeded_db_url: str, qtbot: Any
) -> None:
    """The field report: double-clicking a run opened Rename."""
    page = history_page(make_window, seeded_db_url)
    dialogs: list[str] = []

    def close_dialogs() -> None:
        box = QApplication.activeModalWidget()
        if box is not None:
            dialogs.append(box.windowTitle())
            box.close()

    timer = QTimer(page)
    timer.timeout.connect(close_dialogs)
    timer.start(50)
    page.select_runs([3, 1])
    page.split.setSizes([sum(page.split.sizes()), 0])  # the divider dragged over the detail
    page.split.splitterMoved.emit(sum(page.split.sizes()), 1)
    second = page.table.visualRect(page.proxy.index(1, 0)).center()
    # what a double-click delivers: press and release, then the double-click and release
    qtbot.mouseClick(page.table.viewport(), Qt.MouseButton.LeftButton, pos=second)
    qtbot.mouseDClick(page.table.viewport(), Qt.MouseButton.LeftButton, pos=second)
    qtbot.waitUntil(
        lambda: page.shown_run is not None and page.shown_run.summary.id == 2, timeout=5_000
    )
    qtbot.wait(200)  # the timer would have closed a dialog by now
    assert dialogs == [], "opening a run asks nothing"
    assert page.selected_ids() == [2]
    assert "Run 2" in page.detail_title.text()
    assert page.split.sizes()[1] >= page.detail.wanted_height(), "opened in full view"

    page.table.setFocus()
    page.table.setCurrentIndex(page.proxy.index(0, 0))
    qtbot.keyClick(page.table, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: page.shown_run is not None and page.shown_run.summary.id == 3, timeout=5_000
    )
    qtbot.wait(200)  # the timer would have closed a dialog by now
    assert dialogs == [], "opening a run asks nothing"

    qtbot.keyClick(page.table, Qt.Key.Key_F2)
    qtbot.waitUntil(lambda: bool(dialogs), timeout=5_000)
    timer.stop()
    assert [title.lower() for title in dialogs] == ["rename run"]


@pytest.mark.parametrize(
    ("typed", "picked", "written", "starts"),
    [
        ("run.csv", "HTML report (*.html)", "run.csv", "run_id,run_name,phase"),
        ("run.json", "CSV (*.csv)", "run.json", "{"),
        ("run.htm", "JSON (*.json)", "run.htm", "<!DOCTYPE html>"),
        ("run", "JSON (*.json)", "run.json", "{"),
    ],
)
def test_export_writes_what_the_typed_name_asks_for(
    make_window: WindowFactory,
    seeded_db_url: str,
    qtbot: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    typed: str,
    picked: str,
    written: str,
    starts: str,
) -> None:
    """The file name's suffix decides the format, as `history export -o` does (Qt always hands
    back a filter: the default one is HTML's); a name without one takes the filter's."""
    window = make_window(url=seeded_db_url, view="history")
    folder = tmp_path / "exports"
    folder.mkdir()
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *_a, **_k: (str(folder / typed), picked)
    )
    said: list[str] = []
    monkeypatch.setattr(window.statusBar(), "showMessage", lambda text, *_a: said.append(text))
    window.export_runs([1])
    qtbot.waitUntil(lambda: bool(said), timeout=10_000)
    assert [path.name for path in folder.iterdir()] == [written], said
    assert (folder / written).read_text(encoding="utf-8").startswith(starts)


def test_the_baselines_bold_row_fits_its_columns(
    make_window: WindowFactory, seeded_db_url: str, qtbot: Any
) -> None:
    """The starred baseline is drawn bold: its Started cell read `2026-11-29 16:…` while the
    same text in the other rows fitted."""
    page = history_page(make_window, seeded_db_url)
    page.select_runs([2])
    page.toggle_baseline()
    qtbot.waitUntil(lambda: cell(page, 1, "Name").startswith("\u2605"), timeout=5_000)
    page._fit_columns()
    row = 1
    font = page.proxy.index(row, 0).data(Qt.ItemDataRole.FontRole)
    assert font is not None and font.bold()
    metrics = QFontMetrics(font)
    header = page.table.horizontalHeader()
    for column in ("ID", "Started", "Status", "Engine"):
        text = cell(page, row, column)
        margin = page.table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1
        room = header.sectionSize(COLUMNS.index(column)) - 2 * margin  # as the delegate draws
        assert metrics.horizontalAdvance(text) <= room, (column, text)


def test_an_import_with_only_other_figures_gives_them_the_width(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    """iozone's -a cells are all other figures: they had 330 px, Value and Unit cut, beside
    730 px of an empty results table. A bonnie++ run's results keep their own columns'
    width, its other figures the rest."""
    from stripewise.history.database import open_database
    from stripewise.history.imports import import_file

    db = open_database(db_url)
    try:
        iozone = import_file(db, FIXTURES / "iozone_auto_selected.txt")[0]
        (bonnie,) = import_file(db, FIXTURES / "bonnie200a_direct.csv")
    finally:
        db.close()
    window = make_window(url=db_url, view="history")
    window.resize(1280, 900)
    page = window.page_widgets["history"]
    assert isinstance(page, HistoryPage)
    page.show_run(iozone)
    qtbot.waitUntil(lambda: page.shown_run is not None, timeout=5_000)
    other = page.other_figures
    qtbot.waitUntil(lambda: other.isVisible(), timeout=2_000)
    assert not page.detail_results.isVisibleTo(page), "nothing of iozone's in the table"
    qtbot.waitUntil(  # every column whole, once laid out
        lambda: 0 < other.horizontalHeader().length() <= other.viewport().width(), timeout=2_000
    )

    page.shown_run = None
    page.show_run(bonnie)
    qtbot.waitUntil(lambda: page.shown_run is not None, timeout=5_000)
    results = page.detail_results
    assert results.isVisibleTo(page) and other.isVisibleTo(page)
    least = results.minimumSizeHint().width()  # its columns', and its scroll bar's if shown
    assert least <= results.width() <= least + 4, "the table its columns' width"


def test_a_partial_group_run_is_marked_in_the_list_as_history_list_marks_it(qapp: Any) -> None:
    """A total of 1 of 2 hosts read `complete (partial)` in `history list`, `complete` here."""
    from datetime import UTC, datetime

    from stripewise.gui.history_model import RunTableModel
    from stripewise.model.run import RunStatus, RunSummary

    started = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    runs = [
        RunSummary(2, "fio on lab", RunStatus.COMPLETE, "vm", "/d", "fio", "3.33", started,
                   started, partial=True),
        RunSummary(1, "fio on lab", RunStatus.COMPLETE, "vm", "/d", "fio", "3.33", started,
                   started),
    ]  # fmt: skip
    model = RunTableModel()
    model.set_runs(runs)
    status = COLUMNS.index("Status")
    assert [model.index(r, status).data() for r in range(2)] == ["complete (partial)", "complete"]


def test_the_detail_names_the_filesystems_own_options(qtbot: Any) -> None:
    """A data=writeback run read "ext4 rw,relatime" like a data=ordered one: the journal mode
    is the filesystem's option, recorded apart from the mount point's."""
    pane = RunDetailPane()
    qtbot.addWidget(pane)
    context = {
        "filesystem": "ext4",
        "mount_options": "rw,relatime",
        "superblock_options": "rw,data=writeback",
    }
    pane.show_detail(run(2, ctx=context))
    assert "ext4 rw,relatime,data=writeback &middot;" in pane.title.text()
    pane.show_detail(run(1, ctx={"filesystem": "ext4", "mount_options": "rw,relatime"}))
    assert "ext4 rw,relatime &middot;" in pane.title.text()  # a run of before: as recorded


def test_a_run_s_results_keep_every_column_whole_beside_their_scroll_bar(qtbot: Any) -> None:
    """A bonnie++ run's rows (3 headings, 8 phases) taller than the detail pane: the vertical
    scroll bar took its width from the columns and cut the last, KB/s per CPU %."""
    per_char = ("seq_write_per_char", "seq_read_per_char")
    figures = tuple(
        ResultValue(phase, metric, unit, value)
        for phase in (*FULL_RUN, *per_char)
        for metric, unit, value in (
            ("throughput", "MB/s", 512.0),
            ("efficiency", "KB/s", 9e5),
            ("latency_max", "us", 18_422.0),  # beside the table, in the other figures
        )
    )
    pane = RunDetailPane()
    qtbot.addWidget(pane)
    pane.resize(1200, 220)
    pane.show()
    pane.show_detail(run(5, figures))
    table = pane.results
    assert pane.other_figures.isVisible()
    qtbot.waitUntil(lambda: table.verticalScrollBar().maximum() > 0)
    qtbot.wait(50)  # the splitter takes the table's new width
    assert table.horizontalHeader().length() <= table.viewport().width()
    assert table.horizontalScrollBar().maximum() == 0

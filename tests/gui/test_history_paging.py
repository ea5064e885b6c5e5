"""The History page on a history longer than a page: it opens on the newest page, fetches
the next as the table scrolls to its end, keeps what it fetched across a reload, filters and
orders by ID in the query (the whole history, not the rows fetched so far)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from stripewise.gui.history_page import HistoryPage
from stripewise.history.database import open_database
from stripewise.history.run_pages import PAGE_SIZE
from stripewise.history.store import HistoryStore
from stripewise.model.run import RunStatus
from stripewise.system.hostinfo import HostInfo
from tests.gui.conftest import WindowFactory
from tests.gui.test_history_page import cell, listed_ids

RUNS = PAGE_SIZE * 2 + 50


def _seed(url: str) -> list[int]:
    with open_database(url) as db:
        store = HistoryStore(db)
        host = store.ensure_host(HostInfo("node", "a" * 32, "6.1", "cpu", 2, 2**30))
        ids = []
        for number in range(RUNS):
            run_id = store.create_run(
                host,
                name=f"run {number}",
                target=f"/srv/array{number % 3}",
                engine="fio",
                engine_version="3.33",
                started_at=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=number),
                tags=("even",) if number % 2 == 0 else (),
                status=RunStatus.COMPLETE,
            )
            ids.append(run_id)
    return ids


def _scroll_to_end(page: HistoryPage, qtbot: Any, rows: int) -> None:
    page.table.scrollToBottom()
    qtbot.waitUntil(lambda: page.model.rowCount() == rows, timeout=10_000)


def test_a_long_history_is_listed_a_page_at_a_time(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    ids = _seed(db_url)
    newest_first = ids[::-1]
    window = make_window(url=db_url, view="history")
    page = window.page_widgets["history"]
    assert isinstance(page, HistoryPage)
    assert listed_ids(page) == newest_first[:PAGE_SIZE], "the newest page only"
    # a full page is shown first, every run counted after it
    qtbot.waitUntil(lambda: page.caption.text().startswith(f"{RUNS} runs in "), timeout=5_000)
    qtbot.waitUntil(lambda: window.database_label.text() == f"History: {RUNS} runs", timeout=5_000)
    _scroll_to_end(page, qtbot, PAGE_SIZE * 2)
    _scroll_to_end(page, qtbot, RUNS)
    assert listed_ids(page) == newest_first and page.model.complete
    assert not page.model.canFetchMore()

    page.rename(ids[10], "run 10, renamed far down the list")  # the reload keeps every row fetched
    qtbot.waitUntil(lambda: "renamed far" in cell(page, RUNS - 11, "Name"), timeout=10_000)
    assert page.model.rowCount() == RUNS

    page.filter.setText("tag=even target=/srv/array1")  # in the query, counted there
    expected = [i for n, i in enumerate(ids) if n % 2 == 0 and n % 3 == 1][::-1]
    qtbot.waitUntil(lambda: listed_ids(page) == expected, timeout=10_000)
    assert page.caption.text().startswith(f"{len(expected)} of {RUNS} runs match")

    page.filter.setText("run")  # every run's name: matched page by page
    qtbot.waitUntil(lambda: page.model.rowCount() == PAGE_SIZE, timeout=10_000)
    assert page.caption.text().startswith(f"{PAGE_SIZE}+ of {RUNS} runs match")
    _scroll_to_end(page, qtbot, PAGE_SIZE * 2)
    _scroll_to_end(page, qtbot, RUNS)
    qtbot.waitUntil(lambda: page.caption.text().startswith(f"{RUNS} of {RUNS}"), timeout=5_000)


def test_ordered_by_id_from_the_oldest_run_not_the_rows_fetched(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    ids = _seed(db_url)
    page = make_window(url=db_url, view="history").page_widgets["history"]
    assert isinstance(page, HistoryPage)
    from PySide6.QtCore import Qt

    from stripewise.gui.history_model import COLUMNS

    page.table.sortByColumn(COLUMNS.index("ID"), Qt.SortOrder.AscendingOrder)
    qtbot.waitUntil(lambda: listed_ids(page)[:3] == ids[:3], timeout=10_000)
    assert listed_ids(page) == ids[:PAGE_SIZE]
    _scroll_to_end(page, qtbot, PAGE_SIZE * 2)
    assert listed_ids(page) == ids[: PAGE_SIZE * 2]


def test_a_text_column_orders_the_whole_history_in_the_query(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    from PySide6.QtCore import Qt

    from stripewise.gui.history_model import COLUMNS

    ids = _seed(db_url)
    page = make_window(url=db_url, view="history").page_widgets["history"]
    assert isinstance(page, HistoryPage)
    by_name = sorted(ids, key=lambda run_id: f"run {ids.index(run_id)}")
    page.table.sortByColumn(COLUMNS.index("Name"), Qt.SortOrder.AscendingOrder)
    qtbot.waitUntil(lambda: listed_ids(page) == by_name[:PAGE_SIZE], timeout=10_000)
    _scroll_to_end(page, qtbot, PAGE_SIZE * 2)
    assert listed_ids(page) == by_name[: PAGE_SIZE * 2]
    # by target, newest first within one: the filter's index read in that order
    page.table.sortByColumn(COLUMNS.index("Target"), Qt.SortOrder.DescendingOrder)
    by_target = sorted(ids, key=lambda run_id: (ids.index(run_id) % 3, run_id), reverse=True)
    qtbot.waitUntil(lambda: listed_ids(page)[:3] == by_target[:3], timeout=10_000)
    assert listed_ids(page) == by_target[: PAGE_SIZE * 2]  # as many as were shown


def test_a_figure_column_sorts_the_whole_list_once_it_is_read(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    """Sorting the rows fetched so far by their notes would pass for the whole list's order:
    a click on such a column keeps the query's order, reads the rest of the list (progress in
    the caption), then sorts every row; another order meanwhile stops the reading."""
    from PySide6.QtCore import Qt

    from stripewise.gui.history_model import COLUMNS, UNSORTABLE_PARTIAL

    ids = _seed(db_url)
    with open_database(db_url) as db:  # notes in the opposite order of the runs
        store = HistoryStore(db)
        for number, run_id in enumerate(ids):
            store.set_notes(run_id, f"note {RUNS - number:04d}")
    window = make_window(url=db_url, view="history")
    page = window.page_widgets["history"]
    assert isinstance(page, HistoryPage)
    header = page.table.horizontalHeader()
    notes = COLUMNS.index("Notes")
    tip = Qt.ItemDataRole.ToolTipRole
    assert page.model.headerData(notes, Qt.Orientation.Horizontal, tip) == UNSORTABLE_PARTIAL
    for title in ("ID", "Name", "Host", "Target", "Engine", "Status"):  # in the query
        assert page.model.headerData(COLUMNS.index(title), Qt.Orientation.Horizontal, tip) is None

    # another order at once stops the reading: the query's first page, in its order
    page.table.sortByColumn(notes, Qt.SortOrder.AscendingOrder)
    assert header.sortIndicatorSection() == COLUMNS.index("Started"), "not sorted yet"
    assert page.caption.text().startswith("Reading every run to sort by Notes: 200 of")
    page.table.sortByColumn(COLUMNS.index("ID"), Qt.SortOrder.AscendingOrder)
    qtbot.waitUntil(lambda: listed_ids(page)[:3] == ids[:3], timeout=10_000)
    qtbot.wait(300)  # a page already asked for may land: none is asked after it
    assert not page.model.complete and listed_ids(page) == ids[: page.model.rowCount()]
    assert header.sortIndicatorSection() == COLUMNS.index("ID")

    page.table.sortByColumn(notes, Qt.SortOrder.AscendingOrder)
    qtbot.waitUntil(lambda: header.sortIndicatorSection() == notes, timeout=10_000)
    assert page.model.complete and page.model.rowCount() == RUNS
    assert listed_ids(page) == ids[::-1], "every run, by its note"
    assert page.model.headerData(notes, Qt.Orientation.Horizontal, tip) is None
    qtbot.waitUntil(lambda: page.caption.text().startswith(f"{RUNS} runs in "), timeout=5_000)

    page.filter.setText("run")  # matched page by page: a part again, the query's order back
    qtbot.waitUntil(lambda: page.model.rowCount() == PAGE_SIZE, timeout=10_000)
    assert header.sortIndicatorSection() == COLUMNS.index("ID")
    assert listed_ids(page) == ids[:PAGE_SIZE]

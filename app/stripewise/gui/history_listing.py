"""What the History page lists: its scope, typed filter and order as one query
(history.run_pages), read a page at a time off the GUI thread as the table scrolls, whatever
the history's length. The list opens on the page the history service read (its newest runs);
a filter, a scope or a reload after an edit reads the query's first pages again (as many rows
as were shown, so a reload does not scroll the list back).

Sorting: by ID, by start time, or by name, host, target, engine or status (either way) in the
query, with its own keyset, so a long list is fetched in that order (history.run_pages). A
figure column (results, array, tuning, tags, notes) sorts only a list read whole: sorting the
rows fetched so far would pass for the whole list's order. So a click on one while the list is
read a page at a time keeps the query's order (`orderReset`), reads the rest of the list page
after page off the GUI thread, its progress in the caption, and sorts once every row is here;
another order, a filter or a reload stops it (the column's tooltip says so:
gui.history_model.UNSORTABLE_PARTIAL)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal

from stripewise.gui.history_model import COLUMNS, SORTED_TEXT, RunTableModel
from stripewise.model.run import RunSummary
from stripewise.model.run_filter import Term
from stripewise.model.wording import count_noun, noun_for
from stripewise.services.history import (
    PAGE_SIZE,
    Cursor,
    HistoryService,
    RunPage,
    RunQuery,
    parse_query,
)

SCOPES = {
    "all": "All runs",
    "baselines": "Baselines",
    "imported": "Imported",
    "trash": "Trash (deleted runs)",
}
# column -> how the query orders it: by id, by start time (None), or by a text column
_ORDERED_IN_QUERY: dict[int, tuple[bool, str | None]] = {
    COLUMNS.index("ID"): (True, None),
    COLUMNS.index("Started"): (False, None),
    **{COLUMNS.index(title): (False, title.lower()) for title in SORTED_TEXT},
}


_UNORDERED = {"by_id": False, "sort": None, "ascending": False}


class RunListing(QObject):
    """Fills `model` with the runs its query lists; `listed` says a new listing is shown
    (the page restores its selection), `captionChanged` what it shows."""

    listed = Signal()
    captionChanged = Signal(str)
    orderReset = Signal(int, Qt.SortOrder)  # the table shows the query's order again

    def __init__(self, history: HistoryService, model: RunTableModel, parent: QObject) -> None:
        super().__init__(parent)
        self._history = history
        self._model = model
        self.scope = "all"
        self.text = ""
        self._query = RunQuery()
        self._terms: list[Term] = []
        self._count: int | None = None  # how many the query lists, once known
        self._asked = 0  # listings asked for: a slower earlier one must not win
        self._column = COLUMNS.index("Started")  # the column the table is sorted by
        # a figure column clicked on a list not here whole: sorted by once every row is read
        self._sorting_by: tuple[int, Qt.SortOrder] | None = None
        self.shown = 0  # the number of the listing shown (see `asked`)

    @property
    def asked(self) -> int:
        """Listings asked for so far: one asked after a message was shown says more."""
        return self._asked

    @property
    def filtered(self) -> bool:
        return bool(self.text) or self.scope != "all"

    def show_newest(self, newest: list[RunSummary]) -> None:
        """The history was listed again (start, edit, a run saved elsewhere): the newest page
        serves as it is when that is what is shown, else the query is read again."""
        default = RunQuery()
        if self._query == default and not self._terms and self._model.rowCount() <= len(newest):
            self._asked += 1
            self.shown = self._asked
            self._count = len(newest) if len(newest) < PAGE_SIZE else None  # see `counted`
            self._show(
                newest, len(newest) == PAGE_SIZE, Cursor.after(newest[-1]) if newest else None
            )
            self.listed.emit()
        else:
            self.relist(max(PAGE_SIZE, self._model.rowCount()))

    def counted(self, count: int) -> None:
        """Every listed run, counted after the newest page was shown."""
        unordered = RunQuery(**{**self._query.__dict__, **_UNORDERED})
        if unordered == RunQuery() and not self._terms:
            self._count = count
            self._say()

    def set_filter(self, scope: str, text: str) -> None:
        try:
            query, terms = parse_query(text, scope)
        except ValueError as exc:
            self.captionChanged.emit(f"{text!r}: {exc} (a date is 2026-03-01 or an ISO time)")
            return
        query = RunQuery(**{**query.__dict__, **self._order()})
        if (query, terms) == (self._query, self._terms):
            return  # typed and erased, or the scope picked again: the listing stands
        self.scope, self.text = scope, text
        self._query, self._terms = query, terms
        self.relist(PAGE_SIZE)

    def set_order(self, column: int, order: Qt.SortOrder) -> None:
        """A header click: ID, Started and the text columns are ordered in the query (read
        again when not every row is here); the figure columns sort a list here whole only."""
        ordered = _ORDERED_IN_QUERY.get(column)
        if ordered is None:
            if self._model.complete:
                self._column, self._sorting_by = column, None
            else:  # the query's order until the rest is read (the reset comes back here)
                self._reset_order()
                self._sorting_by = (column, order)
                self._model.fetchMore()  # or the page on its way asks for the next
                self._say()
            return
        self._sorting_by = None  # another order: no longer read the whole list for one
        self._column = column
        by_id, sort = ordered
        ascending = order == Qt.SortOrder.AscendingOrder
        query = self._query
        if (by_id, sort, ascending) == (query.by_id, query.sort, query.ascending):
            return
        fields = {"by_id": by_id, "sort": sort, "ascending": ascending}
        self._query = RunQuery(**{**self._query.__dict__, **fields})
        if not self._model.complete:
            self.relist(max(PAGE_SIZE, self._model.rowCount()))

    def _reset_order(self) -> None:
        """Back to the query's order: the list is not here whole."""
        query = self._query
        title = query.sort.title() if query.sort else "ID" if query.by_id else "Started"
        self._column = COLUMNS.index(title)
        ascending = self._query.ascending
        order = Qt.SortOrder.AscendingOrder if ascending else Qt.SortOrder.DescendingOrder
        self.orderReset.emit(self._column, order)

    def _order(self) -> dict[str, bool | str | None]:
        query = self._query
        return {"by_id": query.by_id, "sort": query.sort, "ascending": query.ascending}

    def relist(self, rows: int) -> None:
        """The query's first `rows` rows, in place of what is shown."""
        self._sorting_by = None
        self._asked += 1
        asked = self._asked
        self._history.list_page(
            self._query, self._terms, None, rows, lambda page: self._on_first(asked, rows, page)
        )

    def _on_first(self, asked: int, rows: int, page: RunPage) -> None:
        if asked != self._asked:
            return  # overtaken by a newer listing
        self._count, self.shown = page.count, asked
        self._show(page.runs, page.next is not None and len(page.runs) == rows, page.next)
        self.listed.emit()

    def _show(self, runs: list[RunSummary], more: bool, after: Cursor | None) -> None:
        self._model.set_runs(runs, self._fetcher(after) if more and after else None)
        if self._column not in _ORDERED_IN_QUERY and not self._model.complete:
            self._reset_order()  # sorted by a column while whole, now listing only a part
        self._say()

    def _fetcher(self, after: Cursor) -> Callable[[], None]:
        asked = self._asked

        def fetch() -> None:
            self._history.list_page(
                self._query, self._terms, after, PAGE_SIZE, lambda page: self._on_next(asked, page)
            )

        return fetch

    def _on_next(self, asked: int, page: RunPage) -> None:
        if asked != self._asked:
            return
        after = page.next
        self._model.add_runs(page.runs, self._fetcher(after) if after is not None else None)
        if self._sorting_by is not None:  # reading the whole list for a figure column
            if self._model.complete:
                column, order = self._sorting_by
                self._sorting_by = None
                self.orderReset.emit(column, order)  # the table sorts every row by it
            else:
                self._model.fetchMore()
        self._say()

    def _say(self) -> None:
        shown = self._model.rowCount()
        if self._model.complete:
            self._count = shown
        count = self._count
        matched = str(count) if count is not None else f"{shown}+"
        total = count_noun(self._history.run_count, "run")
        if self._sorting_by is not None:
            title = COLUMNS[self._sorting_by[0]]
            caption = f"Reading every run to sort by {title}: {shown} of {matched} read"
            self.captionChanged.emit(f"{caption} (another order or a filter stops it)")
            return
        if self.scope == "trash":
            deleted = count_noun(count, "deleted run") if count is not None else f"{shown}+"
            them = noun_for(count, "it", "them") if count is not None else "them"
            caption = f"{deleted}, kept 30 days: Restore brings {them} back"
        elif self.text:
            caption = f"{matched} of {total} match {self.text!r}"
        elif self.scope != "all":
            caption = f"{matched} of {total} ({SCOPES[self.scope].lower()})"
        else:
            listed = count_noun(count, "run") if count is not None else f"{shown}+ runs"
            caption = f"{listed} in {self._history.display_url}"
        self.captionChanged.emit(caption)

"""The History page's detail pane: the selected run's facts, its notes, its results laid out as
bonnie++'s report, and the figures that layout has no cell for beside them."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QSplitter,
    QTableView,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui.bench_results import GROUPS, ResultsTable
from stripewise.gui.run_charts import RunCharts
from stripewise.gui.tables import Table
from stripewise.model.metric_words import metric_words
from stripewise.model.run import ResultValue
from stripewise.model.run_detail import RunDetail
from stripewise.model.units import MIB_PER_MB
from stripewise.model.vocabulary import BONNIE_TESTS, MEASURED, THROUGHPUT, from_stored
from stripewise.model.wording import count_noun

# A measured run with every phase: bonnie++'s three headings and its six rows. The pane is
# given the height to show them all without scrolling (plus a two-line title and a note).
FULL_RUN_ROWS = 3 + 6
_TITLE_LINES = 3  # the facts wrap to two lines at 1024 px; one more for a one-line note
_TOP_MARGIN = 6

# what the results table has a cell for; every other figure goes to the second table
_TABLED_PHASES = frozenset(phase for _, phases in GROUPS for phase, _ in phases)
_TABLED_METRICS = frozenset(q.metric for q in MEASURED)
_FIGURE = 1  # the other figures' column of a figure's words


def _number(value: float | None) -> str:
    if value is None:
        return "-"  # the tool printed no figure (bonnie++'s +++++)
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.4g}"


class OtherFigures(Table):
    """A run's figures the results table has no cell for: bonnie++'s file tests, iozone's
    cells, fio jobs told apart, tools' own figures; each also as the tool printed it."""

    HEADERS = ("Phase", "Figure", "Value", "Unit", "As imported")

    def __init__(self) -> None:
        super().__init__(0, len(self.HEADERS))
        self.setAccessibleName("Other figures")
        self.setHorizontalHeaderLabels(self.HEADERS)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.verticalHeader().hide()
        # the words of a figure never cut, and the room left theirs: the last column shown
        # took it, the Unit one when "As imported" is hidden, its units far from their values
        self.fill_with(_FIGURE)
        self._values: list[ResultValue] = []
        self._mib = False

    def show_values(self, values: Sequence[ResultValue]) -> None:
        self._values = [
            v for v in values if v.phase not in _TABLED_PHASES or v.metric not in _TABLED_METRICS
        ]
        self._render()
        self.setVisible(bool(self._values))

    def set_binary_units(self, mib: bool) -> None:
        self._mib = mib
        self._render()

    def _render(self) -> None:
        self.setRowCount(len(self._values))
        printed_any = False
        for row, v in enumerate(self._values):
            value, unit = v.value, v.unit
            if self._mib and unit == THROUGHPUT.unit and value is not None:
                value, unit = value * MIB_PER_MB, "MiB/s"
            printed = ""
            if v.source_unit and v.value is not None:
                printed = f"{_number(from_stored(v.value, v.source_unit))} {v.source_unit}"
                printed_any = True
            unit = "\u00b5s" if unit == "us" else unit  # as every other table says it
            texts = (v.phase, metric_words(v.metric), _number(value), unit, printed)
            for column, text in enumerate(texts):
                item = QTableWidgetItem(text)
                if column in (2, 4):
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.setItem(row, column, item)
        self.setColumnHidden(len(self.HEADERS) - 1, not printed_any)
        self.refill()


def table_height(table: QTableView, rows: int) -> int:
    """Pixels a table needs to show `rows` rows without scrolling: header, rows, frame and the
    horizontal scroll bar a narrow window gives it."""
    return (
        table.horizontalHeader().sizeHint().height()
        + rows * table.verticalHeader().defaultSectionSize()
        + 2 * table.frameWidth()
        + table.horizontalScrollBar().sizeHint().height()
    )


class RunDetailPane(QWidget):
    """What the History page shows of the run picked in its list."""

    def __init__(self) -> None:
        super().__init__()
        self.title = QLabel(
            "Select a run to see its results; select 2 to 8 (Ctrl+click) to compare them."
        )
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notes.hide()
        self.members = QLabel()  # the array members that stood out, named
        self.members.setObjectName("memberStandOuts")
        self.members.setWordWrap(True)
        self.members.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.members.hide()
        self.results = ResultsTable(whole_columns=True)  # beside the charts, which take the rest
        self.results.hide()  # until a run is picked: an empty table says nothing
        self.other_figures = OtherFigures()
        self.other_figures.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, _TOP_MARGIN, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.notes)
        layout.addWidget(self.members)
        self.figures = figures = QSplitter()  # bonnie++'s layout beside what it has no cell for
        figures.addWidget(self.results)
        figures.addWidget(self.other_figures)
        figures.setStretchFactor(0, 0)  # the results their columns' width, the others the rest
        figures.setStretchFactor(1, 1)
        figures.setChildrenCollapsible(False)
        # beside the figures, not under them: the table keeps every row in the pane's height,
        # and the charts get the width its fixed columns leave (two thirds of the window)
        self.charts = RunCharts()
        self.steady_rounds, self.latency_map = self.charts.steady_rounds, self.charts.latency_map
        body = QSplitter()
        body.addWidget(figures)
        body.addWidget(self.charts)
        body.setStretchFactor(0, 0)
        body.setStretchFactor(1, 1)
        body.setChildrenCollapsible(False)
        layout.addWidget(body, 1)

    def wanted_height(self) -> int:
        """Room for a full run's figures, FULL_RUN_ROWS rows, or its charts with their axes
        whole, whichever is taller, under a title of _TITLE_LINES."""
        lines = _TITLE_LINES * self.title.fontMetrics().lineSpacing()
        layout = self.layout()
        spacing = 2 * max(0, layout.spacing() if layout is not None else 0)
        body = max(table_height(self.results, FULL_RUN_ROWS), self.charts.least_height())
        return _TOP_MARGIN + lines + spacing + body

    def show_detail(self, detail: RunDetail) -> None:
        run, context = detail.summary, detail.context
        facts = [
            f"<b>Run {run.id}</b>: {run.name}, {run.status.value}",
            "baseline" if run.baseline else "",
            f"{context.filesystem or ''} {_options(detail)}".strip(),
            ", ".join(d.name or "" for d in context.disks or ()),
            count_noun(detail.sample_count, "sample"),
            _imported_from(detail),
            f"tags: {', '.join(run.tags)}" if run.tags else "",
        ]
        self.title.setText(" &middot; ".join(f for f in facts if f))
        self.notes.setText(detail.notes)
        self.notes.setVisible(bool(detail.notes))
        self.members.setText("\n".join(f"\u26a0 {line}" for line in detail.member_stand_outs))
        self.members.setVisible(bool(detail.member_stand_outs))
        skipped = _not_run(detail)
        ran = [v for v in detail.results if v.phase not in skipped]
        self.results.show_stored(ran)
        self.other_figures.show_values(ran)
        self._share_figures(tabled=self.results.rowCount() > 0)
        self.charts.show_run(detail.rounds, detail.latency)

    def _share_figures(self, tabled: bool) -> None:
        """An empty results table is not shown beside other figures (iozone's cells, all of
        them other figures, had 330 px and their values cut beside 730 px of empty table);
        shown with them, the splitter's stretch gives it its columns' width, them the rest."""
        self.results.setVisible(tabled or self.other_figures.isHidden())

    def set_binary_units(self, mib: bool) -> None:
        self.results.set_binary_units(mib)
        self.other_figures.set_binary_units(mib)


def _options(detail: RunDetail) -> str:
    """The mount point's options, then the filesystem's own beyond them, as /proc/mounts
    lists them: rw,relatime,data=writeback (the journal mode is the filesystem's)."""
    own = [o for o in (detail.context.mount_options or "").split(",") if o]
    sb = (detail.context.superblock_options or "").split(",")
    return ",".join(own + [o for o in sb if o and o not in own])


def _not_run(detail: RunDetail) -> set[str]:
    """Phases of tests a bonnie++ import says did not run (`-f` skips per-char): no rows."""
    skipped = detail.context.not_run if detail.source == "imported" else None
    if skipped is None:
        return set()
    return {BONNIE_TESTS[name][0] for name in skipped if name in BONNIE_TESTS}


def _imported_from(detail: RunDetail) -> str:
    """Where an import came from, and the units its tool printed (shown converted)."""
    record = detail.context.import_record
    if detail.source != "imported" or record is None:
        return ""
    units = {r.source_unit: r.unit for r in detail.results if r.source_unit}
    shown = ", ".join(f"{tool} as {stored}" for tool, stored in sorted(units.items()))
    return f"imported from {record.file or '?'}" + (f" ({shown})" if shown else "")

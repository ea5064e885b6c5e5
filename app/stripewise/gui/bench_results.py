"""The results table, laid out like bonnie++'s report: output, input, random, each with CPU %.

Rows fill in as phases finish (the median so far over repetitions), and are replaced by the
helper's own summary at the end. The same table shows a stored run from the history.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QFont, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidgetItem

from stripewise.gui.tables import Table
from stripewise.model.bench import summarize
from stripewise.model.guards import describe
from stripewise.model.phase_stop import stopped
from stripewise.model.run import ResultValue
from stripewise.model.units import MIB_PER_MB
from stripewise.protocol.events import PhaseFinished, RunResult

GROUPS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    # per-char rows only for a bonnie++ import: Stripewise measures blocks
    (
        "Sequential Output",
        (("seq_write_per_char", "Per Chr"), ("seq_write", "Block"), ("rewrite", "Rewrite")),
    ),
    ("Sequential Input", (("seq_read_per_char", "Per Chr"), ("seq_read", "Block"))),
    (
        "Random",
        (("random_read", "Seeks"), ("random_write", "Writes"), ("mixed", "Mixed")),
    ),
)
FULL_NAMES = {"random_read": "Random seeks (reads)", "mixed": "Mixed 70/30 read/write"}
# a phase as its row reads, heading and all: "Sequential Input Block"
_ROW_NAMES = {phase: f"{group} {label}" for group, rows in GROUPS for phase, label in rows}
# two-line headers: the columns are as narrow as their figures, so the table fits the page's
# right half at 1024x768
COLUMNS = (
    "",
    "{rate}",
    "min \u2013 max{passes}",
    "IOPS",
    "CPU\n%",
    "p50\nlatency",
    "p99\nlatency",
    "KB/s per\nCPU %",
)
LATENCY_HEADERS = {
    COLUMNS.index("p50\nlatency"): "median completion latency, each figure with its unit (µs, ms)",
    COLUMNS.index(
        "p99\nlatency"
    ): "99th percentile completion latency, each figure with its unit (µs, ms)",
}
ROW_PADDING_PX = 4  # above and below a row's text: rows as compact as a report's lines
SPREAD_WARNING = 0.10  # (max - min) / median over repetitions above this is called out
GUARD_MARK = "\u26a0"  # after the phase's name when a guard tripped; its tooltip says which


def rows_for(phases: Iterable[str]) -> int:
    """How many rows the table has for `phases`: each, under its group's heading."""
    wanted = set(phases)
    present = [[p for p, _label in rows if p in wanted] for _group, rows in GROUPS]
    return sum(len(found) + 1 for found in present if found)


@dataclass
class PhaseRow:
    """One phase's row: its figures by metric, summarised as the helper summarises them
    (`model.bench.summarize`) over the repetitions finished so far, then replaced by the run's
    own summary once it ends (`final`), or a stored run's."""

    events: list[PhaseFinished] = field(default_factory=list)
    summary: dict[str, ResultValue] = field(default_factory=dict)
    final: bool = False
    errors: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)  # guards tripped, in the order first seen

    def add_flags(self, flags: Sequence[str]) -> None:
        self.flags.extend(f for f in flags if f not in self.flags)

    def spread(self) -> tuple[float, float, float, int] | None:
        """median, low, high, n of MB/s."""
        mb = self.summary.get("throughput")
        if mb is None or mb.value is None:
            return None
        low = mb.min_value if mb.min_value is not None else mb.value
        high = mb.max_value if mb.max_value is not None else mb.value
        return mb.value, low, high, mb.repetitions

    def figure(self, metric: str) -> float | None:
        found = self.summary.get(metric)
        return found.value if found is not None else None

    def ended(self) -> str:
        """What the figure's cell says when there is none: a phase the admin stopped was
        cancelled, not failed (the helper files the run as cancelled too)."""
        return stopped(self.errors)


class ResultsTable(Table):
    def __init__(self, whole_columns: bool = False) -> None:
        """`whole_columns`: never narrower than its columns (beside the History page's charts,
        which take the rest); on the Benchmark page it shares an 800 px window's width."""
        super().__init__(0, len(COLUMNS))
        self._whole_columns = whole_columns
        self.setObjectName("benchResults")
        self.setAccessibleName("Benchmark results")
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.verticalHeader().hide()
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        # no stretched last column: it kept a width from a wider moment and cut its figures
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self._figures: dict[str, PhaseRow] = {}
        self._mib = False
        self._reserved_rows = 0
        self._narrow = False  # narrower than its columns: a scroll bar under the rows
        self._passes: int | None = None  # what the min-max column's header names
        # rows taller than the table: the scroll bar beside them takes width from the columns
        self.verticalScrollBar().rangeChanged.connect(lambda *_range: self.updateGeometry())
        self._fit_rows()
        self._render()

    # --- size ------------------------------------------------------------------------------
    def _fit_rows(self) -> None:
        self.verticalHeader().setDefaultSectionSize(
            self.fontMetrics().height() + 2 * ROW_PADDING_PX
        )

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._fit_rows()
            self.updateGeometry()
        super().changeEvent(event)

    def reserve_rows(self, rows: int) -> None:
        """Ask for room for `rows` rows (a run's planned phases and their group headings), so
        the page does not change its layout as phases finish."""
        self._reserved_rows = rows
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        """Every row shown or reserved, and every column; a narrower table than its columns
        scrolls sideways, and the scroll bar gets room below the rows."""
        frame = 2 * self.frameWidth()
        rows = max(self.rowCount(), self._reserved_rows)
        height = self.horizontalHeader().sizeHint().height() + frame
        height += rows * self.verticalHeader().defaultSectionSize()
        if self._narrow:
            height += self.horizontalScrollBar().sizeHint().height()
        return QSize(self._columns_width() + frame + self._scroll_bar_width(), height)

    def minimumSizeHint(self) -> QSize:
        least = super().minimumSizeHint()
        if self._whole_columns:
            least.setWidth(self.sizeHint().width())
        return least

    def _scroll_bar_width(self) -> int:
        """The vertical scroll bar's, when its rows are taller than the table: uncounted, it
        cut the last column (KB/s per CPU %) in the History page's detail."""
        bar = self.verticalScrollBar()
        return bar.sizeHint().width() if bar.maximum() > 0 else 0

    def _columns_width(self) -> int:
        header = self.horizontalHeader()
        return sum(
            max(self.sizeHintForColumn(c), header.sectionSizeHint(c))
            for c in range(self.columnCount())
        )

    def _too_narrow(self) -> bool:
        return (
            self._columns_width() + 2 * self.frameWidth() + self._scroll_bar_width() > self.width()
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._check_width()

    def _check_width(self) -> None:
        if self._narrow != self._too_narrow():
            self._narrow = not self._narrow
            self.updateGeometry()  # the scroll bar came or went: the height hint with it

    # --- feeding ---------------------------------------------------------------------------
    def clear_results(self) -> None:
        self._figures = {}
        self._render()

    def add_phase_result(self, event: PhaseFinished) -> None:
        figures = self._figures.setdefault(event.phase.value, PhaseRow())
        figures.add_flags(event.flags)
        figures.events.append(event)
        if event.error:
            figures.errors.append(event.error)
        if not figures.final:
            so_far = summarize(event.phase, figures.events)
            figures.summary = {value.metric: value for value in so_far.values()}
        self._render()

    def set_run_result(self, result: RunResult) -> None:
        """The run's summary replaces the figures per repetition (an unfinished run's keeps
        the rows of phases it has no summary for)."""
        self._show_values(result.values())

    def show_stored(self, values: Sequence[ResultValue]) -> None:
        """A run from the history: its stored figures, in the same layout."""
        self._figures = {}
        self._show_values(values)

    def _show_values(self, values: Sequence[ResultValue]) -> None:
        for value in values:
            figures = self._figures.setdefault(value.phase, PhaseRow())
            if not figures.final:  # the repetitions so far give way to the summary
                figures.summary, figures.final = {}, True
            figures.summary[value.metric] = value
            figures.add_flags(value.flags)
            if value.errors:  # the run's word on its repetitions that did not end well
                figures.errors = list(value.errors)
        self._render()

    def set_binary_units(self, mib: bool) -> None:
        self._mib = mib
        self._render()

    # --- reading ---------------------------------------------------------------------------
    def phases_shown(self) -> list[str]:
        return [p for p, f in self._figures.items() if f.spread() is not None or f.errors]

    def cell_text(self, phase: str, column: int) -> str:
        for row in range(self.rowCount()):
            item = self.item(row, 0)
            if item is not None and item.data(Qt.ItemDataRole.UserRole) == phase:
                cell = self.item(row, column)
                return cell.text() if cell is not None else ""
        raise KeyError(phase)

    def flags(self, phase: str) -> list[str]:
        """The guards the phase's figures tripped (model.guards names)."""
        figures = self._figures.get(phase)
        return list(figures.flags) if figures is not None else []

    def cell_tooltip(self, phase: str, column: int) -> str:
        for row in range(self.rowCount()):
            item = self.item(row, 0)
            if item is not None and item.data(Qt.ItemDataRole.UserRole) == phase:
                cell = self.item(row, column)
                return cell.toolTip() if cell is not None else ""
        raise KeyError(phase)

    def spread_warnings(self) -> list[str]:
        """One line naming every phase whose repetitions differ by more than SPREAD_WARNING."""
        found = []
        for phase, figures in self._figures.items():
            spread = figures.spread()
            if spread is None:
                continue
            median, low, high, n = spread
            if n > 1 and median > 0 and (high - low) / median > SPREAD_WARNING:
                found.append(f"{_ROW_NAMES.get(phase, phase)} {100 * (high - low) / median:.0f} %")
        if not found:
            return []
        return [
            f"Passes differ by more than {SPREAD_WARNING * 100:g} % "
            "(max \u2212 min, over the median): "
            + ", ".join(found)
            + "; a comparison judges runs of 3 passes or more"
        ]

    # --- drawing ---------------------------------------------------------------------------
    def _render(self) -> None:
        unit = "MiB/s" if self._mib else "MB/s"
        self._passes = self._common_passes()
        passes = f"\nof {self._passes} passes" if self._passes else ""
        self.setHorizontalHeaderLabels([c.format(rate=unit, passes=passes) for c in COLUMNS])
        for column, said in LATENCY_HEADERS.items():  # the header is narrow: its tooltip names it
            header = self.horizontalHeaderItem(column)
            if header is not None:
                header.setToolTip(said)
        rows: list[tuple[str, str | None]] = []  # (text, phase or None for a group heading)
        for group, phases in GROUPS:
            present = [(p, label) for p, label in phases if p in self._figures]
            if present:
                rows.append((group, None))
                rows.extend((label, phase) for phase, label in present)
        self.clearSpans()
        if len(rows) != self.rowCount():
            self.updateGeometry()
        self.setRowCount(len(rows))
        for row, (text, phase) in enumerate(rows):
            if phase is None:
                self._heading(row, text)
            else:
                self._phase_row(row, text, phase)
        self._check_width()

    def _common_passes(self) -> int | None:
        """The number of passes most rows' ranges are of: said once, in the header."""
        counts = Counter(s[3] for f in self._figures.values() if (s := f.spread()) and s[3] > 1)
        return counts.most_common(1)[0][0] if counts else None

    def _heading(self, row: int, text: str) -> None:
        item = QTableWidgetItem(text)
        font = QFont(item.font())
        font.setBold(True)
        item.setFont(font)
        self.setItem(row, 0, item)
        for column in range(1, self.columnCount()):
            self.setItem(row, column, QTableWidgetItem(""))
        self.setSpan(row, 0, 1, self.columnCount())

    def _phase_row(self, row: int, label: str, phase: str) -> None:
        figures = self._figures[phase]
        scale = MIB_PER_MB if self._mib else 1.0
        spread = figures.spread()
        iops, cpu = figures.figure("iops"), figures.figure("cpu")
        p50, p99 = figures.figure("latency_p50"), figures.figure("latency_p99")
        eff = figures.figure("efficiency")  # KB/s per CPU %, as the RAID notes compute it
        cells = [
            f"  {label} {GUARD_MARK}" if figures.flags else f"  {label}",
            _rate(spread[0] * scale) if spread else figures.ended(),
            _range(spread[1] * scale, spread[2] * scale, spread[3], self._passes)
            if spread and spread[3] > 1
            else _lone_pass(spread, self._passes),
            f"{iops:,.0f}" if iops is not None else "",
            f"{cpu:.1f}" if cpu is not None else "",
            _latency(p50),
            _latency(p99),
            f"{eff:,.0f}" if eff is not None else "",
        ]
        for column, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if column:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if column == 0:
                item.setData(Qt.ItemDataRole.UserRole, phase)
            if column in (0, 1):  # the name and the figure the guards speak of
                item.setToolTip(_tooltip(figures))
            if column == 0 and phase in FULL_NAMES:  # short names keep the column narrow
                item.setToolTip("\n".join(filter(None, (FULL_NAMES[phase], item.toolTip()))))
            self.setItem(row, column, item)


def _tooltip(figures: PhaseRow) -> str:
    """Errors, then each tripped guard in words (the figure-invalidating ones first)."""
    lines = ["; ".join(figures.errors)] if figures.errors else []
    if figures.flags:
        lines.append(f"{GUARD_MARK} Guards tripped:")
        lines += [f"\u2022 {line}" for line in describe(figures.flags)]
    return "\n".join(lines)


def _range(low: float, high: float, passes: int, common: int | None) -> str:
    """min-max; the number of passes only where it differs from the header's."""
    text = f"{_rate(low)}\u2013{_rate(high)}"
    return text if passes == common else f"{text} (n={passes})"


def _lone_pass(spread: tuple[float, float, float, int] | None, common: int | None) -> str:
    """A phase measured once beside others of `common` passes: said, not left blank under a
    header of "min – max of 2 passes" (a pass cancelled or failed left it one)."""
    return "1 pass" if spread and spread[3] == 1 and common else ""


def _rate(value: float) -> str:
    """Three significant digits at least, no false precision on large figures."""
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def _latency(microseconds: float | None) -> str:
    if microseconds is None:
        return ""
    if microseconds >= 1000:
        return f"{microseconds / 1000:,.2f} ms"
    return f"{microseconds:,.0f} µs"

"""The results table, laid out like bonnie++'s report: output, input, random, each with CPU %.

Rows fill in as phases finish (the median so far over repetitions), and are replaced by the
helper's own summary at the end. The same table shows a stored run from the history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from stripewise.model.bench import summarize
from stripewise.model.guards import describe
from stripewise.model.run import ResultValue, RunStatus
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
        (("random_read", "Seeks (reads)"), ("random_write", "Writes"), ("mixed", "Mixed 70/30")),
    ),
)
COLUMNS = ("", "{rate}", "min - max", "IOPS", "CPU %", "p50 lat", "p99 lat", "KB/s per CPU %")
SPREAD_WARNING = 0.10  # (max - min) / median over repetitions above this is called out
GUARD_MARK = "\u26a0"  # after the phase's name when a guard tripped; its tooltip says which


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
        if not self.errors:
            return ""
        if all(error == RunStatus.CANCELLED.value for error in self.errors):
            return RunStatus.CANCELLED.value
        return RunStatus.FAILED.value


class ResultsTable(QTableWidget):
    def __init__(self) -> None:
        super().__init__(0, len(COLUMNS))
        self.setObjectName("benchResults")
        self.setAccessibleName("Benchmark results")
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.verticalHeader().hide()
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)
        self._figures: dict[str, PhaseRow] = {}
        self._mib = False
        self._render()

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
                found.append(f"{phase} {100 * (high - low) / median:.0f} %")
        if not found:
            return []
        return [
            "High spread between repetitions (max - min of the median): "
            + ", ".join(found)
            + ". A comparison calls a change real only when the passes of both runs show it (3"
            " passes each at least)."
        ]

    # --- drawing ---------------------------------------------------------------------------
    def _render(self) -> None:
        unit = "MiB/s" if self._mib else "MB/s"
        self.setHorizontalHeaderLabels([c.format(rate=unit) for c in COLUMNS])
        rows: list[tuple[str, str | None]] = []  # (text, phase or None for a group heading)
        for group, phases in GROUPS:
            present = [(p, label) for p, label in phases if p in self._figures]
            if present:
                rows.append((group, None))
                rows.extend((label, phase) for phase, label in present)
        self.clearSpans()
        self.setRowCount(len(rows))
        for row, (text, phase) in enumerate(rows):
            if phase is None:
                self._heading(row, text)
            else:
                self._phase_row(row, text, phase)

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
            f"{_rate(spread[1] * scale)} - {_rate(spread[2] * scale)} (n={spread[3]})"
            if spread and spread[3] > 1
            else "",
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
            self.setItem(row, column, item)


def _tooltip(figures: PhaseRow) -> str:
    """Errors, then each tripped guard in words (the figure-invalidating ones first)."""
    lines = ["; ".join(figures.errors)] if figures.errors else []
    if figures.flags:
        lines.append(f"{GUARD_MARK} Guards tripped:")
        lines += [f"\u2022 {line}" for line in describe(figures.flags)]
    return "\n".join(lines)


def _rate(value: float) -> str:
    """Three significant digits at least, no false precision on large figures."""
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def _latency(microseconds: float | None) -> str:
    if microseconds is None:
        return ""
    if microseconds >= 1000:
        return f"{microseconds / 1000:,.2f} ms"
    return f"{microseconds:,.0f} µs"

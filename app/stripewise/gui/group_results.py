"""A group run's results: per phase, a row per host and the total, the sum of the hosts.

The total is computed here from the hosts' own phase results, never taken from fio's "All
clients" entry (it is known to be wrong, fio issues 1918 and 1881). A host that failed is
named in its row and the totals it is missing from say they are partial.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidgetItem

from stripewise.gui.tables import Table
from stripewise.model.bench import BONNIE_NAMES, Phase
from stripewise.model.units import MIB_PER_MB
from stripewise.protocol.events import PhaseFinished

TOTAL = "total"
HEADERS = ("Phase", "Host", "MB/s", "IOPS", "Note")


@dataclass(frozen=True)
class GroupTotal:
    """The sum over the hosts that finished a phase's pass; partial when one is missing."""

    mb_s: float
    iops: float
    hosts: int
    missing: tuple[str, ...]

    @property
    def partial(self) -> bool:
        return bool(self.missing)


class GroupResults(Table):
    def __init__(self) -> None:
        super().__init__(0, len(HEADERS))
        self.setHorizontalHeaderLabels(HEADERS)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.verticalHeader().hide()
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self._hosts: list[str] = []
        self._results: dict[tuple[Phase, int], dict[str, PhaseFinished]] = {}
        self._failed: dict[str, str] = {}  # host -> why
        self._mib = False
        self._ended = False
        self._stale = False
        self._redraw = QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(0)
        self._redraw.timeout.connect(self._render_now)

    def set_hosts(self, labels: list[str]) -> None:
        """A new run: the hosts in order; earlier results are forgotten."""
        self._hosts = list(labels)
        self._results, self._failed, self._ended = {}, {}, False
        self._render()

    def set_ended(self) -> None:
        """The run is over: a host without a phase's result has none, it is not running."""
        self._ended = True
        self._render()

    def add_phase_result(self, event: PhaseFinished) -> None:
        host = event.host or TOTAL
        if host == TOTAL:
            return  # the driver's own sum: the table adds the hosts up itself
        self._results.setdefault((event.phase, event.repetition), {})[host] = event
        self._render()

    def set_failed(self, host: str, message: str) -> None:
        if host in self._failed:
            return
        self._failed[host] = message or "failed"
        self._render()

    @property
    def failed_hosts(self) -> dict[str, str]:
        return dict(self._failed)

    def total(self, phase: Phase, repetition: int = 1) -> GroupTotal | None:
        rows = self._results.get((phase, repetition))
        if not rows:
            return None
        good = [r for r in rows.values() if not r.error]
        missing = tuple(h for h in self._hosts if h not in rows or rows[h].error)
        return GroupTotal(sum(r.mb_s for r in good), sum(r.iops for r in good), len(good), missing)

    def set_binary_units(self, mib: bool) -> None:
        self._mib = mib
        self.setHorizontalHeaderItem(2, QTableWidgetItem("MiB/s" if mib else "MB/s"))
        self._render()

    def rows_text(self) -> list[tuple[str, ...]]:
        """Every row as shown, cell by cell."""
        self._render_now()
        return [
            tuple(_text(self.item(r, c)) for c in range(len(HEADERS)))
            for r in range(self.rowCount())
        ]

    def _render(self) -> None:
        """Redrawn once per turn of the event loop: a batch of events and a run's end change
        many rows at once, and the table is rebuilt whole."""
        self._stale = True
        if not self._redraw.isActive():
            self._redraw.start()

    def _render_now(self) -> None:
        if not self._stale:
            return
        self._stale = False
        rows: list[tuple[tuple[str, ...], bool]] = []
        for (phase, repetition), by_host in self._results.items():
            name = f"{BONNIE_NAMES[phase]}, pass {repetition}"
            for host in self._hosts:
                rows.append((self._host_row(name, host, by_host.get(host)), False))
            total = self.total(phase, repetition)
            if total is not None:
                rows.append((self._total_row(name, total), True))
        if not self._results:  # no phase has ended yet: every host, as it stands
            for host in self._hosts:
                why = self._failed.get(host)
                state = f"failed: {why}" if why else ("no result" if self._ended else "running")
                rows.append((("", host, "", "", state), False))
        # cells are changed in place, and only those whose text changed: a new item per cell
        # (90 for 8 hosts and 2 phases) cost the GUI thread ~25 ms at a run's end
        plain, bold = QFont(self.font()), QFont(self.font())
        bold.setBold(True)
        self.setUpdatesEnabled(False)
        try:
            if self.rowCount() != len(rows):
                self.setRowCount(len(rows))
            for row, (cells, is_total) in enumerate(rows):
                for column, text in enumerate(cells):
                    self._set_cell(row, column, text, bold if is_total else plain)
        finally:
            self.setUpdatesEnabled(True)

    def _set_cell(self, row: int, column: int, text: str, font: QFont) -> None:
        item = self.item(row, column)
        if item is None:
            item = QTableWidgetItem()
            self.setItem(row, column, item)
        if item.text() != text:
            item.setText(text)
        if item.font().bold() != font.bold():
            item.setFont(font)
        tip = text if column == 4 else ""
        if item.toolTip() != tip:
            item.setToolTip(tip)

    def _host_row(self, phase: str, host: str, result: PhaseFinished | None) -> tuple[str, ...]:
        if result is None or result.error:
            why = result.error if result is not None and result.error else None
            why = why or self._failed.get(host)
            state = f"failed: {why}" if why else ("no result" if self._ended else "running")
            return (phase, host, "", "", state)
        return (phase, host, self._rate(result.mb_s), f"{result.iops:,.0f}", "")

    def _total_row(self, phase: str, total: GroupTotal) -> tuple[str, ...]:
        failed = [h for h in total.missing if h in self._failed]
        if failed:
            note = f"partial: without {', '.join(failed)} (failed)"
        elif total.missing:
            still = "without a result" if self._ended else "still running"
            note = f"partial: {len(total.missing)} {still}"
        else:
            note = f"sum of {total.hosts} hosts"
        return (phase, TOTAL, self._rate(total.mb_s), f"{total.iops:,.0f}", note)

    def _rate(self, mb_s: float) -> str:
        return f"{mb_s * MIB_PER_MB if self._mib else mb_s:,.1f}"


def _text(item: QTableWidgetItem | None) -> str:
    return item.text() if item is not None else ""

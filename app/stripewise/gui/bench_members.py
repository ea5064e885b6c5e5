"""The Benchmark page's members table: while a run on an array goes (md, dm over several
disks, a multipath map, a multi-device btrfs), each member's MB/s, IOPS, await, queue size
and utilisation over the last sample's interval, from the kernel's counters, with the phase's
stand-out member (`model.members`, the helper's guard `member_stands_out`) marked.

Off the GUI thread's hot path: a sample only adds to the phase's tally and keeps the latest
figures; the rows are written when the page's redraw timer fires (the plots' batching) and
once more as the run ends. Hidden for a target that is no array.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidgetItem

from stripewise.gui.tables import Table
from stripewise.model.members import MemberTally, StandOut
from stripewise.protocol.events import DiskRates, PhaseStarted, Sample
from stripewise.services.bench_session import BenchSession

COLUMNS = ("Member", "MB/s", "IOPS", "await\nms", "queue", "util\n%")
STAND_OUT_MARK = "\u26a0"  # after the member's name; its tooltip says why
STAND_OUT_COLOUR = QColor(230, 140, 20, 90)  # amber, light enough for either theme's text


def _figure(value: float | None, digits: int) -> str:
    return "\u2013" if value is None else f"{value:,.{digits}f}"


class MembersTable(Table):
    """Each array member's latest figures; rows in the order the helper listed the disks."""

    def __init__(self, session: BenchSession, redraw: QTimer) -> None:
        super().__init__(0, len(COLUMNS))
        self.setObjectName("membersTable")
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.setToolTip(
            "Each array member over the last second or so, from the kernel's counters: "
            "await is the mean ms a read or write took from submission to completion, queue "
            "the mean requests in flight, util the share of time the disk was busy. A member "
            "with more than twice the others' await or utilisation over the phase is marked."
        )
        self.verticalHeader().hide()
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)
        self.tally = MemberTally()
        self.latest: dict[str, DiskRates] = {}
        self._dirty = False
        self.hide()
        session.started.connect(self.clear_members)
        session.phaseStarted.connect(self.begin_phase)
        session.sampleArrived.connect(self.add_sample)
        session.finished.connect(self.refresh)
        redraw.timeout.connect(self.refresh)

    # --- fed by the run (cheap: the GUI thread's hot path) --------------------------------
    def clear_members(self, *_started: object) -> None:
        self.tally, self.latest, self._dirty = MemberTally(), {}, False
        self.setRowCount(0)
        self.hide()

    def begin_phase(self, _event: PhaseStarted | None = None) -> None:
        """Each phase is judged on its own, as the helper judges it."""
        self.tally = MemberTally()

    def add_sample(self, sample: Sample) -> None:
        if sample.host is not None:  # a group run's hosts have views of their own
            return
        self.tally.add(sample.disks)
        if self.tally.members:
            self.latest = {n: r for n, r in sample.disks.items() if n in self.tally.members}
            self._dirty = True

    # --- drawn on the redraw timer ------------------------------------------------------
    def refresh(self, *_finished: object) -> None:
        if not self._dirty:
            return
        self._dirty = False
        standing = self.standing_out()
        self.setRowCount(len(self.latest))
        for row, (name, rates) in enumerate(self.latest.items()):
            self._write_row(row, name, rates, standing.get(name, []))
        self.show()
        self._fit_height()

    def standing_out(self) -> Mapping[str, list[StandOut]]:
        """The members standing out over the phase so far."""
        found: dict[str, list[StandOut]] = {}
        for stand_out in self.tally.stand_outs():
            found.setdefault(stand_out.member, []).append(stand_out)
        return found

    def _write_row(self, row: int, name: str, rates: DiskRates, why: list[StandOut]) -> None:
        cells = (
            f"{name} {STAND_OUT_MARK}" if why else name,
            _figure(rates.mb_s, 1),
            _figure(rates.iops, 0),
            _figure(rates.await_ms, 2),
            _figure(rates.queue_size, 2),
            _figure(rates.busy_pct, 0),
        )
        tooltip = "; ".join(s.describe() for s in why)
        for column, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if column:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if why:
                item.setBackground(QBrush(STAND_OUT_COLOUR))
                item.setToolTip(tooltip)
                if column == 0:
                    font = QFont(item.font())
                    font.setBold(True)
                    item.setFont(font)
            self.setItem(row, column, item)

    def _fit_height(self) -> None:
        """As tall as its rows: an array has a few members, the plots keep the rest."""
        height = self.horizontalHeader().height() + 2 * self.frameWidth()
        height += sum(self.rowHeight(row) for row in range(self.rowCount()))
        self.setFixedHeight(height)

    def row_texts(self) -> list[list[str]]:
        """The cells as shown, row by row (what a reader of the page sees)."""
        return [
            [(item.text() if (item := self.item(r, c)) else "") for c in range(self.columnCount())]
            for r in range(self.rowCount())
        ]

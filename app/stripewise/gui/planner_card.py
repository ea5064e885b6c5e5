"""One proposed array: its settings, its members (a drop target) and its live figures."""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDragLeaveEvent, QDropEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui.flow_layout import FlowLayout
from stripewise.gui.planner_chips import DiskChip, accept_disks, start_drag, take_disks
from stripewise.model import arrays
from stripewise.model.ceilings import Basis, PredictionBasis
from stripewise.model.evaluate import ArrayReport
from stripewise.model.plan import (
    BLOCK_CHOICES_KIB,
    CHUNK_CHOICES_KIB,
    Filesystem,
    Plan,
    RaidLevel,
)
from stripewise.model.predict import why_unpredicted
from stripewise.model.units import human_size
from stripewise.model.wording import count_noun
from stripewise.planner.sizes import members_of_unknown_size, unknown_capacity_text


class MeasuredRun(Protocol):
    """An array's newest benchmark as a card shows it (the history's MeasuredArray)."""

    @property
    def run_id(self) -> int: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def read_mb_s(self) -> float | None: ...
    @property
    def write_mb_s(self) -> float | None: ...


# the model's names, with what the two plainest levels do for a level picker
LEVEL_NAMES = {
    **arrays.LEVEL_NAMES,
    RaidLevel.RAID0: "RAID 0 (stripe)",
    RaidLevel.RAID1: "RAID 1 (mirror)",
}


def _chunk_label(kib: int) -> str:
    return f"{kib // 1024} MiB" if kib >= 1024 else f"{kib} KiB"


def _controller_name(plan: Plan, controller_id: str) -> str:
    """Its label where it has one ("LSI SAS 9300-8i #2"), else its id (a PCI address): short
    enough to list six in a card."""
    controller = plan.controller(controller_id)
    return controller.label if controller is not None and controller.label else controller_id


def _capacity(report: ArrayReport, plan: Plan) -> str:
    """Usable of raw, or why it is unknown: never a figure counting an unknown size as 0."""
    unknown = members_of_unknown_size(plan, report)
    if unknown:
        return unknown_capacity_text(unknown)
    g = report.geometry
    return (
        f"{human_size(g.usable_bytes)} usable of {human_size(g.raw_bytes)} raw ({g.efficiency:.0%})"
    )


def figures_html(report: ArrayReport, plan: Plan) -> str:
    g = report.geometry
    rows = [
        ("Capacity", _capacity(report, plan)),
        (
            "Data disks",
            f"{g.data_disks} of {g.members}"
            + (f" in {count_noun(g.groups, 'group')} of {g.group_size}" if g.groups > 1 else ""),
        ),
        (
            "Tolerates",
            count_noun(g.fault_tolerance, "failed disk")
            + (f" ({g.failures_per_group} per group)" if g.groups > 1 else ""),
        ),
    ]
    prediction = report.prediction
    if prediction is None:
        why = why_unpredicted(report.array, plan, g, report.problems)
        rows.append(("Predicted", f"unknown: {why}"))
    else:
        read, write = prediction.read_mb_s, prediction.write_mb_s
        rows.append(
            (
                "Read",
                f"{read.span(' – ')} MB/s "
                f"(inner to outer tracks; limited by {prediction.read_bottleneck})",
            )
        )
        rows.append(
            (
                "Write",
                f"{write.span(' – ')} MB/s (limited by {prediction.write_bottleneck})",
            )
        )
        rows.append(("Ceilings", _basis_words(prediction.basis)))
    per_controller = ", ".join(
        f"{count} on {_controller_name(plan, cid)}"
        for cid, count in report.spread.per_controller.items()
    )
    rows.append(("Controllers", per_controller or "no members yet"))
    if report.fs is not None:
        rows.append(("mkfs", " ".join(report.fs.mkfs_args()) or "no stripe options"))
    if report.cost:  # 0: the machine's own disks, nothing to buy
        rows.append(("Cost", f"{report.cost:,.0f} {plan.currency}"))
    cells = "".join(
        f"<tr><td style='padding-right:8px' valign='top'><b>{escape(k)}</b></td>"
        f"<td>{escape(v)}</td></tr>"
        for k, v in rows
    )
    return f"<table cellspacing='0'>{cells}</table>"


def _basis_words(basis: PredictionBasis) -> str:
    """What the controller and bus ceilings rest on: a measured one cites its run, and a
    prediction with no ceiling known at all says it rests on a guess only."""
    if basis.basis is Basis.GUESS:
        return "guess only: no controller or bus ceiling known (measured or in the catalog)"
    return basis.text.removeprefix("basis: ")


def problems_html(report: ArrayReport) -> str:
    items = "".join(
        f"<li style='color:{'#d64541' if p.error else '#c27c0e'}'>{escape(p.message)}</li>"
        for p in report.problems
    )
    return f"<ul style='margin-left:-20px'>{items}</ul>" if items else ""


class SparesZone(QLabel):
    """A drop target for hot spares inside the card."""

    dropped = Signal(tuple)

    def __init__(self) -> None:
        super().__init__("Hot spares: drag disks here")
        self.setAcceptDrops(True)
        self.setWordWrap(True)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMinimumHeight(30)
        self.setAccessibleName("Hot spares")

    def show_spares(self, spares: tuple[str, ...]) -> None:
        self.setText(
            f"Hot spares: {', '.join(spares)}" if spares else "Hot spares: drag disks here"
        )

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        accept_disks(event)

    def dropEvent(self, event: QDropEvent) -> None:
        if ids := take_disks(event):
            self.dropped.emit(ids)


class ArrayCard(QFrame):
    renamed = Signal(str, str)
    changed = Signal(str, dict)  # array name, field changes
    disksDropped = Signal(str, tuple)  # array name, disk ids
    sparesDropped = Signal(str, tuple)  # array name, disk ids
    hovered = Signal(object)  # array name while a drag is over it, None when it leaves
    spreadRequested = Signal(str)
    commandsRequested = Signal(str)
    deleteRequested = Signal(str)

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.setAcceptDrops(True)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("arrayCard")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 10)

        top = QHBoxLayout()
        self.name_edit = QLineEdit(name)
        self.name_edit.setAccessibleName("Array name")
        self.name_edit.editingFinished.connect(self._rename)
        self.level = QComboBox()
        for level, text in LEVEL_NAMES.items():
            self.level.addItem(text, level)
        self.level.currentIndexChanged.connect(
            lambda: self.changed.emit(self.name, {"level": self.level.currentData()})
        )
        self.delete = QPushButton("Delete")
        self.delete.clicked.connect(lambda: self.deleteRequested.emit(self.name))
        top.addWidget(self.name_edit, 1)
        top.addWidget(self.level)
        top.addWidget(self.delete)
        layout.addLayout(top)

        # wraps: at 800x600 one row of these was 41 px wider than the card ("4 KiB blocks"
        # cut, the Delete button read "Delet"); a row ahead of its width scrolled sideways
        row = FlowLayout()
        self.chunk = QComboBox()
        for kib in CHUNK_CHOICES_KIB:
            self.chunk.addItem(_chunk_label(kib), kib)
        self.chunk.currentIndexChanged.connect(
            lambda: self.changed.emit(self.name, {"chunk_kib": self.chunk.currentData()})
        )
        self.group = QSpinBox()
        self.group.setRange(3, 32)
        self.group.setPrefix("groups of ")
        self.group.valueChanged.connect(
            lambda value: self.changed.emit(self.name, {"group_size": value})
        )
        self.filesystem = QComboBox()
        self.filesystem.addItem("no filesystem", None)
        for fs in Filesystem:
            self.filesystem.addItem(fs.value, fs)
        self.filesystem.currentIndexChanged.connect(
            lambda: self.changed.emit(self.name, {"filesystem": self.filesystem.currentData()})
        )
        self.block = QComboBox()
        for kib in BLOCK_CHOICES_KIB:
            self.block.addItem(f"{kib} KiB blocks", kib)
        self.block.currentIndexChanged.connect(
            lambda: self.changed.emit(self.name, {"block_kib": self.block.currentData()})
        )
        self.chunk_label = QLabel("Chunk")
        chunk_box = QWidget()  # the label stays beside its box when the row wraps
        chunk_row = QHBoxLayout(chunk_box)
        chunk_row.setContentsMargins(0, 0, 0, 0)
        chunk_row.addWidget(self.chunk_label)
        chunk_row.addWidget(self.chunk)
        for widget in (chunk_box, self.group, self.filesystem, self.block):
            row.addWidget(widget)
        layout.addLayout(row)

        self.members = QWidget()
        self.members.setMinimumHeight(58)
        self.member_flow = FlowLayout(self.members, spacing=5)
        self.members_hint = QLabel("Drag disks here")
        self.members_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(self.members_hint)
        layout.addWidget(self.members)
        self.spares = SparesZone()
        self.spares.dropped.connect(lambda ids: self.sparesDropped.emit(self.name, ids))
        layout.addWidget(self.spares)
        self.chips: list[DiskChip] = []

        spread_row = FlowLayout()  # the buttons go under the score where the card is narrow
        self.score = QProgressBar()
        self.score.setRange(0, 100)
        self.score.setFormat("spread %v / 100")
        self.spread_button = QPushButton("Spread…")
        self.spread_button.setToolTip("Swap members for free disks on other controllers")
        self.spread_button.clicked.connect(lambda: self.spreadRequested.emit(self.name))
        self.commands_button = QPushButton("Commands…")
        self.commands_button.clicked.connect(lambda: self.commandsRequested.emit(self.name))
        spread_row.addWidget(self.score)
        spread_row.addWidget(self.spread_button)
        spread_row.addWidget(self.commands_button)
        layout.addLayout(spread_row)
        self.spread_text = QLabel()
        self.spread_text.setWordWrap(True)
        layout.addWidget(self.spread_text)
        self.figures = QLabel()
        self.figures.setTextFormat(Qt.TextFormat.RichText)
        self.figures.setWordWrap(True)
        self.figures.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.figures)
        self.measured = QLabel()
        self.measured.setWordWrap(True)
        self.measured.setVisible(False)
        layout.addWidget(self.measured)
        self.problems = QLabel()
        self.problems.setTextFormat(Qt.TextFormat.RichText)
        self.problems.setWordWrap(True)
        layout.addWidget(self.problems)

    # --- showing -------------------------------------------------------------------------------
    def show_report(self, report: ArrayReport, plan: Plan) -> None:
        array = report.array
        self.name = array.name
        for widget, value in (
            (self.level, array.level),
            (self.chunk, array.chunk_kib),
            (self.filesystem, array.filesystem),
            (self.block, array.block_kib),
        ):
            widget.blockSignals(True)
            widget.setCurrentIndex(max(0, widget.findData(value)))
            widget.blockSignals(False)
        if not self.name_edit.hasFocus():
            self.name_edit.setText(array.name)
        striped = array.level not in arrays.UNSTRIPED  # mirrors and JBOD: mdadm takes no chunk
        self.chunk_label.setVisible(striped)
        self.chunk.setVisible(striped)
        self.group.blockSignals(True)
        self.group.setVisible(array.level.nested)
        self.group.setValue(array.group_size or (4 if array.level == RaidLevel.RAID50 else 6))
        self.group.blockSignals(False)
        self._show_members(plan, array.members)
        self.spares.show_spares(array.spares)
        self.score.setValue(report.spread.score if report.spread.scored else 0)
        headline = report.spread.headline(short=True)  # "no members yet" too
        self.score.setFormat(headline)
        self.score.setToolTip(report.spread.headline())
        # a bar narrower than its text wraps it onto two lines and clips both: ask for room
        metrics = self.score.fontMetrics()
        self.score.setMinimumWidth(metrics.horizontalAdvance(headline) + 2 * metrics.height())
        self.spread_text.setText(" ".join(report.spread.explanation))
        self.spread_button.setEnabled(len(array.members) > 1)
        self.commands_button.setEnabled(report.ok and bool(array.members))
        self.commands_button.setToolTip("" if report.ok else "Fix the problems listed first")
        self.figures.setText(figures_html(report, plan))
        self.problems.setText(problems_html(report))

    def show_measured(self, measured: MeasuredRun | None, report: ArrayReport) -> None:
        """The newest benchmark of the built array against what the plan predicted."""
        self.measured.setVisible(measured is not None)
        if measured is None:
            return
        parts = []
        prediction = report.prediction
        for label, value, predicted in (
            ("read", measured.read_mb_s, prediction.read_mb_s if prediction else None),
            ("write", measured.write_mb_s, prediction.write_mb_s if prediction else None),
        ):
            if value is None:
                continue
            verdict = ""
            if predicted is not None:
                verdict = (
                    " (inside the predicted range)"
                    if predicted.low <= value <= predicted.high
                    else f" (outside the predicted {predicted.low:,.0f} – {predicted.high:,.0f})"
                )
            parts.append(f"{label} {value:,.0f} MB/s{verdict}")
        when = measured.started_at.astimezone().strftime("%Y-%m-%d")
        self.measured.setText(f"Measured in run {measured.run_id} ({when}): " + ", ".join(parts))

    def _show_members(self, plan: Plan, members: tuple[str, ...]) -> None:
        while (item := self.member_flow.takeAt(0)) is not None:
            if (widget := item.widget()) is not None:
                widget.deleteLater()
        self.chips = []
        for disk_id in members:
            disk = plan.disk(disk_id)
            if disk is None:
                continue
            chip = DiskChip(disk, self.name)
            chip.dragRequested.connect(lambda c: start_drag(c, [c.disk.id]))
            self.chips.append(chip)
            self.member_flow.addWidget(chip)
        self.members_hint.setVisible(not members)
        self.members.updateGeometry()

    def _rename(self) -> None:
        text = self.name_edit.text().strip()
        if text != self.name:
            self.renamed.emit(self.name, text)

    # --- drops ---------------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if accept_disks(event):
            self.hovered.emit(self.name)

    def dragLeaveEvent(self, _event: QDragLeaveEvent) -> None:
        self.hovered.emit(None)

    def dropEvent(self, event: QDropEvent) -> None:
        self.hovered.emit(None)
        if ids := take_disks(event):
            self.disksDropped.emit(self.name, ids)

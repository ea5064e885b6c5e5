"""Measure Ceiling: the scaling test of a controller's disks (or disks picked by hand) from the
Hardware page. Non-modal: the window stays usable while it reads, each pass is shown as it
ends, Cancel stops it through the helper, and the answer is filed in the history as
`stripewise bench scaling --save` files it, where the Planner finds the measured ceiling."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui.help_dialogs import purpose_label
from stripewise.gui.scaling_result_view import result_html
from stripewise.gui.screen_fit import resize_within_screen
from stripewise.model.bench import SpecError, parse_size
from stripewise.model.scaling import MAX_REPEAT
from stripewise.model.scaling_set import DiskSet, subset
from stripewise.model.units import binary_size, human_size
from stripewise.model.wording import count_noun
from stripewise.protocol.scaling import ScalingResult, ScalingStarted
from stripewise.services.helper_client import HelperClient
from stripewise.services.history import HistoryService
from stripewise.services.scaling_session import ScalingProgress, ScalingRequest, ScalingSession

DEFAULT_SIZE = "1G"
DEFAULT_REPEAT = 3
VISIBLE_DISKS = 8  # rows of the disk list before it scrolls
ENDED = {"complete": "Completed in", "cancelled": "Cancelled after", "failed": "Failed after"}
READ_ONLY_NOTE = (
    "Read-only: each disk is read from its first byte, nothing is written, so no serial "
    "number is asked for. The disks stay usable, but their own traffic skews the figures."
)


def eta_text(seconds: float) -> str:
    """`about 2 min 5 s left`."""
    whole = round(seconds)
    minutes, rest = divmod(whole, 60)
    return f"about {minutes} min {rest} s left" if minutes else f"about {rest} s left"


class ScalingDialog(QDialog):
    """One test of one set of disks; the dialog stays for the answer until closed."""

    def __init__(
        self,
        chosen: DiskSet,
        title: str,
        helper: HelperClient,
        history: HistoryService,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.chosen = chosen
        self.setWindowTitle(f"Measure Ceiling: {title}")
        self.setModal(False)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.session = ScalingSession(helper, history, self)
        self.run_id: int | None = None  # the history's, once saved
        self.answered: ScalingResult | None = None
        self._close_when_ended = False
        self._refusal_shown = ""
        layout = QVBoxLayout(self)
        if chosen.controller is not None or chosen.bus is not None:
            purpose = (
                f"Reads {title}'s disks alone, then 1, 2, 4 ... of them at once, to find "
                "where their sum stops growing: the measured ceiling the Planner then cites."
            )
        else:  # disks picked by hand measure no link: nothing for the Planner to cite
            purpose = (
                "Reads these disks alone, then 1, 2, 4 ... of them at once, to find where "
                "their sum stops growing, and which disk lags its peers."
            )
        layout.addWidget(purpose_label(purpose))
        self.disks = QListWidget()
        self.disks.setAccessibleName("Disks to read")
        for name in chosen.disks:
            identity = chosen.identities.get(name)
            size = identity.size_bytes if identity else None
            # as sold, and as the per-pass size reads (1G is 1 GiB): "67.1 MB = 64.0 MiB"
            facts = (
                [f"{human_size(size)} = {binary_size(size)}"]
                if size is not None
                else ["size unknown"]
            )
            if identity and identity.model:
                facts.append(identity.model)
            if identity and identity.slot:
                facts.append(identity.slot)
            item = QListWidgetItem(f"{name}  ({', '.join(facts)})")
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.disks.addItem(item)
        self.disks.itemChanged.connect(lambda _item: self._check())
        shown_rows = min(max(len(chosen.disks), 2), VISIBLE_DISKS)  # more: it scrolls
        frame = 2 * self.disks.frameWidth() + 12  # and its margins: no row cut off
        self.disks.setMaximumHeight(shown_rows * self.disks.sizeHintForRow(0) + frame)
        form = QFormLayout()
        disks_label = QLabel("&Disks:")
        disks_label.setBuddy(self.disks)
        form.addRow(disks_label, self.disks)
        self.pass_size = QLineEdit(DEFAULT_SIZE)
        self.pass_size.setToolTip("Read from each disk per pass, from its first byte (1G, 512M)")
        self.pass_size.textChanged.connect(lambda _text: self._check())
        form.addRow("Per-pass &size:", self.pass_size)
        self.repeat = QSpinBox()
        self.repeat.setRange(1, MAX_REPEAT)
        self.repeat.setValue(DEFAULT_REPEAT)
        self.repeat.setToolTip("Passes per step: more passes, a narrower 95 % interval")
        self.repeat.valueChanged.connect(lambda _value: self._check())
        form.addRow("&Passes per step:", self.repeat)
        layout.addLayout(form)
        self.note = QLabel(READ_ONLY_NOTE)
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        self.problem = QLabel()  # why Start is greyed, or how the test failed: one line
        self.problem.setObjectName("scalingProblem")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #c0392b")
        layout.addWidget(self.problem)
        self.progress_line = QLabel()
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.eta = QLabel()
        for widget in (self.progress_line, self.progress, self.eta):
            widget.hide()
            layout.addWidget(widget)
        self.answer = QTextBrowser()
        self.answer.setAccessibleName("The scaling test's answer")
        self.answer.hide()
        layout.addWidget(self.answer, 100)
        layout.addStretch(1)  # the room the answer takes once shown; before, the form's own
        buttons = QDialogButtonBox()
        self.start = QPushButton("S&tart")
        self.start.setDefault(True)
        self.start.clicked.connect(self._start)
        self.cancel = QPushButton("&Cancel Test")
        self.cancel.setEnabled(False)
        self.cancel.clicked.connect(self._cancel)
        self.close_button = QPushButton("C&lose")
        self.close_button.clicked.connect(self.close)
        for button in (self.start, self.cancel, self.close_button):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        layout.addWidget(buttons)
        self.session.started.connect(self._on_started)
        self.session.progressed.connect(self._on_progress)
        self.session.finished.connect(self._on_finished)
        self.session.refused.connect(self._on_refused)
        self.session.failed.connect(self._say_problem)
        self.session.saved.connect(self._on_saved)
        self.session.saveFailed.connect(self._on_save_failed)
        resize_within_screen(self, QSize(620, 560))
        self._check()

    # --- the form ------------------------------------------------------------------------------
    def checked_disks(self) -> tuple[str, ...]:
        items = (self.disks.item(row) for row in range(self.disks.count()))
        return tuple(
            str(item.data(Qt.ItemDataRole.UserRole))
            for item in items
            if item.checkState() == Qt.CheckState.Checked
        )

    def refusal(self) -> str:
        """Why the test cannot start as filled in, in one line ("" when it can)."""
        disks = self.checked_disks()
        if not disks:
            return "Tick one disk at least."
        try:
            size = parse_size(self.pass_size.text())
        except SpecError as exc:
            return f"Per-pass size: {exc}."
        if size < 2**20:
            return "Per-pass size: at least 1M (one read of 1 MiB)."
        for name in disks:
            identity = self.chosen.identities.get(name)
            held = identity.size_bytes if identity else None
            if held is not None and held < size:
                return (
                    f"{name} holds {binary_size(held)}, less than the {binary_size(size)} "
                    "to read per pass: take a smaller size."
                )
        return ""

    def _check(self) -> None:
        if self.session.busy:
            return
        why = self.refusal()
        self.start.setEnabled(not why)
        self.start.setToolTip(why)
        if why or self.problem.text() == self._refusal_shown:  # a failure's line stays
            self.problem.setText(why)
        self._refusal_shown = why

    def _set_form_enabled(self, enabled: bool) -> None:
        for widget in (self.disks, self.pass_size, self.repeat):
            widget.setEnabled(enabled)

    # --- running -------------------------------------------------------------------------------
    def _start(self) -> None:
        if self.refusal() or self.session.busy:
            return
        chosen = subset(self.chosen, self.checked_disks())
        request = ScalingRequest(chosen, parse_size(self.pass_size.text()), self.repeat.value())
        self.answered, self.run_id = None, None
        self.problem.clear()
        self.answer.hide()
        self.start.setEnabled(False)
        self._set_form_enabled(False)
        self.progress_line.setText("Starting the helper...")
        self.progress_line.show()
        self.session.start(request)

    def _cancel(self) -> None:
        self.cancel.setEnabled(False)
        self.progress_line.setText("Cancelling...")
        self.session.cancel()

    def _on_started(self, started: ScalingStarted) -> None:
        if self._close_when_ended:  # closed while the helper was being asked
            self.session.cancel()
        self.cancel.setEnabled(not self._close_when_ended)
        self.progress.setRange(0, started.visits)
        self.progress.setValue(0)
        self.progress.setFormat(f"%v of {started.visits} passes")
        self.progress.show()
        self.eta.setText("")
        self.eta.show()
        disks = count_noun(len(started.devices), "disk")
        self.progress_line.setText(
            f"Reading {disks}, {binary_size(started.size)} from each per pass: "
            f"{started.visits} passes..."
        )

    def _on_progress(self, progress: ScalingProgress) -> None:
        last = progress.last
        if len(last.disks) == 1:
            what = f"{last.disks[0]} alone"
        else:
            what = f"{len(last.disks)} disks at once ({', '.join(last.disks)})"
        figure = last.error if last.error is not None else f"{last.mb_s:,.1f} MB/s"
        self.progress_line.setText(f"Pass {progress.done} of {progress.visits}: {what}: {figure}")
        self.progress.setValue(progress.done)
        self.eta.setText(eta_text(progress.eta_s))

    def _on_refused(self, message: str) -> None:
        self._say_problem(f"Not started: {message}")
        self._settle()

    def _say_problem(self, message: str) -> None:
        self.problem.setText(message.strip().splitlines()[0] if message.strip() else message)

    def _on_finished(self, result: ScalingResult) -> None:
        self.answered = result
        self._settle()
        self.eta.setText("")
        if result.elapsed_s:
            ended = f"{ENDED.get(result.status, result.status)} {result.elapsed_s:,.1f} s."
        else:  # ended here, the helper lost or deaf: it said no time
            ended = f"{result.status.capitalize()}."
        self.progress_line.setText(ended)
        self.answer.setHtml(result_html(result, None, of_a_link=self._of_a_link))
        self.answer.show()

    def _on_saved(self, run_id: int) -> None:
        self.run_id = run_id
        if self.answered is not None:
            self.answer.setHtml(result_html(self.answered, run_id, of_a_link=self._of_a_link))
        self._check()
        if self._close_when_ended:
            self.close()

    def _on_save_failed(self, message: str) -> None:
        self._say_problem(message)
        self._check()
        if self._close_when_ended:
            self.close()

    @property
    def _of_a_link(self) -> bool:
        return self.chosen.controller is not None or self.chosen.bus is not None

    def _settle(self) -> None:
        """Ready for another test: the form back, Cancel off."""
        self.cancel.setEnabled(False)
        self._set_form_enabled(True)
        self.disks.scrollToTop()
        self._check()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing a running test cancels it; the dialog goes once the helper has ended it
        (within seconds) and the run is filed."""
        if self.session.busy:
            self._close_when_ended = True
            if self.session.running:
                self._cancel()
            event.ignore()
            return
        super().closeEvent(event)

"""The Experiment page's answer: the recommendation card (verdict, values, change with its
interval, the evidence) and "Apply this", which previews, applies and (when asked) makes
persistent the recommended tunables through the Tuning page's path: the helper's journaled
`tuning.apply`, then `tuning.persist` shown before anything is written (`PersistDialogs`).

Apply is offered only for a verdict "better" that sets a tunable: a workload parameter (block
size, queue depth) is the application's to choose, not the machine's.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui.tuning_persist import PersistDialogs
from stripewise.model.experiment import label
from stripewise.model.experiment_result import ExperimentResult, Verdict
from stripewise.protocol.tuning import ApplyArgs, TuningSetting
from stripewise.protocol.tuning_replies import ApplyReply
from stripewise.services.experiment_setup import Prepared, tunable_settings
from stripewise.services.tuning import TuningService, summary_of

VERDICT_TITLES = {
    Verdict.BETTER: "Better: {values}",
    Verdict.NO_BETTER: "No value beats what you have ({values})",
    Verdict.CANT_TELL: "Can't tell: keep what you have ({values})",
}
VERDICT_COLOURS = {
    Verdict.BETTER: "#009e73",
    Verdict.NO_BETTER: "#0072b2",
    Verdict.CANT_TELL: "#e69f00",
}
WAITING = "The recommendation appears here when the experiment ends."


def change_text(result: ExperimentResult) -> str:
    rec = result.recommendation
    if rec.change_pct is None:
        return ""
    what = "this" if rec.verdict is Verdict.BETTER else "the best value"
    if rec.verdict is not Verdict.BETTER and rec.change_of is not None:
        what = f"the best value, {label(rec.change_of)},"
    interval = ""
    if rec.ci95_pct is not None:
        low, high = rec.ci95_pct
        interval = f" (95 % interval {low:+.1f} to {high:+.1f} %)"
    return f"{result.objective.words}: {what} {rec.change_pct:+.1f} %{interval} against the start"


class RecommendationCard(QFrame):
    """What the experiment found, in words; Apply this beside it when it can be applied."""

    applyRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("recommendationCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Recommendation")
        self.title = QLabel(WAITING)
        self.title.setWordWrap(True)
        font = self.title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.title.setFont(font)
        self.change = QLabel()
        self.change.setWordWrap(True)
        self.reason = QLabel()
        self.reason.setWordWrap(True)
        self.reason.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.apply_button = QPushButton("Apply This\u2026")
        self.apply_button.setToolTip(
            "Preview the recommended values, then write them through the helper, which "
            "journals the current values first so the Tuning page's Revert can put them back"
        )
        self.apply_button.clicked.connect(self.applyRequested)
        self.persist = QCheckBox("and make persistent")
        self.persist.setToolTip("Then write them to the boot-time files (shown first)")
        buttons = QHBoxLayout()
        buttons.addWidget(self.apply_button)
        buttons.addWidget(self.persist)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.change)
        layout.addWidget(self.reason)
        layout.addLayout(buttons)
        self.verdict: Verdict | None = None
        self.show_waiting()

    def show_waiting(self, text: str = WAITING) -> None:
        self.verdict = None
        self.title.setText(text)
        self.title.setStyleSheet("")
        self.change.clear()
        self.change.hide()
        self.reason.clear()
        self.offer_apply(False)

    def show_result(self, result: ExperimentResult, applicable: bool) -> None:
        rec = result.recommendation
        self.verdict = rec.verdict
        self.title.setText(VERDICT_TITLES[rec.verdict].format(values=label(rec.values)))
        self.title.setStyleSheet(f"color: {VERDICT_COLOURS[rec.verdict]};")
        self.change.setText(change_text(result))
        self.change.setVisible(bool(self.change.text()))
        lines = [rec.reason]
        if not result.restored:
            lines.append("Not every value could be put back: see the Tuning page's Revert.")
        self.reason.setText("\n".join(lines))
        self.offer_apply(applicable)

    def offer_apply(self, offered: bool) -> None:
        self.apply_button.setVisible(offered)
        self.persist.setVisible(offered)


class ApplyRecommendation(PersistDialogs):
    """Preview -> apply -> (persist): each step shown before it writes."""

    applied = Signal(str)  # one line: what the helper did

    def __init__(self, service: TuningService, parent: QWidget) -> None:
        super().__init__(service, parent)
        self.box_up: QMessageBox | None = None  # the preview on show, for tests

    @staticmethod
    def settings_for(setup: Prepared | None, result: ExperimentResult) -> tuple[TuningSetting, ...]:
        """What Apply would write: the recommended tunables that differ from the start."""
        if setup is None or result.recommendation.verdict is not Verdict.BETTER:
            return ()
        return tunable_settings(setup, result.recommendation.values)

    def ask(self, setup: Prepared, result: ExperimentResult, persist: bool) -> None:
        settings = self.settings_for(setup, result)
        if not settings:
            return
        starting = dict(setup.baseline)
        lines = [
            f"{s.device or 'global'}  {s.key}: {starting.get(s.key, '?')} \u2192 {s.value}"
            for s in settings
        ]
        box = QMessageBox(self.window)
        box.setWindowTitle("Apply the recommendation")
        box.setText(
            "Write these values through the helper? It journals the current values first, "
            "so the Tuning page's Revert puts them back.\n\n" + "\n".join(lines)
        )
        box.setStandardButtons(QMessageBox.StandardButton.Apply | QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        what = f"Experiment {result.experiment or ''}: {label(result.recommendation.values)}"

        def answered(_code: int) -> None:
            clicked = box.clickedButton()
            self.box_up = None
            box.deleteLater()
            if (
                clicked is not None
                and box.standardButton(clicked) == QMessageBox.StandardButton.Apply
            ):
                self.service.call(
                    ApplyArgs(settings, what.replace(" :", ":")),
                    lambda reply: self._applied(reply, settings, persist),
                    self.refused.emit,
                )

        box.finished.connect(answered)
        self.box_up = box
        box.open()

    def _applied(
        self, reply: ApplyReply, settings: tuple[TuningSetting, ...], persist: bool
    ) -> None:
        self.applied.emit(summary_of("Applied", reply))
        if persist:
            self.make_persistent(settings)

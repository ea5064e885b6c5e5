"""The Benchmark page's left column while an experiment runs.

The experiment starts each of its passes on this page's session, so the plots and results beside
the form are a pass's; the form is the admin's own next run and says nothing about them. While an
experiment runs the form is put away, kept as it was, and this panel says what the pass on show
runs: its name (the experiment and the point) and the spec as the helper normalised it.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtWidgets import QFormLayout, QLabel, QVBoxLayout, QWidget

from stripewise.gui.steady_state_row import SteadyStateRow, round_text
from stripewise.model.bench import BenchSpec
from stripewise.model.compare_context import spec_settings
from stripewise.model.setting_labels import setting_label, setting_text
from stripewise.protocol.events import SteadyRound
from stripewise.services.experiment_runner import EXPERIMENT_TAG

EXPERIMENT_CANCEL = (  # Cancel's tooltip meanwhile
    "Cancels the experiment, as its page's Cancel does: the pass stops and every value it "
    "applied is put back"
)
EXPERIMENT_RUNNING = (  # Start's tooltip meanwhile
    "An experiment is running on the Experiment page: it starts each of its passes here "
    "itself. Start is back when it ends (or Cancel it there)."
)
WAITING = (
    "An experiment is running on the Experiment page. Each of its passes runs here, and what "
    "it runs is listed here. Your form comes back as you left it when the experiment ends."
)
ON_SHOW = "What this pass runs (your form comes back when the experiment ends):"
NOT_A_PASS = (  # a run started elsewhere meanwhile (the Tuning page's A/B)
    "Not one of the experiment's passes; what it runs (your form comes back when the "
    "experiment ends):"
)


class ExperimentPassNote(QWidget):
    """Hidden until an experiment runs; `wait()` before its first pass, `show_run()` each."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("experimentPassNote")
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self._form_row: SteadyStateRow | None = None
        self.round_line = QLabel()  # a steady-state pass's live round, as the form's row says it
        self.round_line.setWordWrap(True)
        self.round_line.hide()
        self.rows = QFormLayout()
        self.rows.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addLayout(self.rows)
        layout.addWidget(self.round_line)
        self.hide()

    def wait(self) -> None:
        self.heading.setText(escape(WAITING, quote=False))
        self._clear_rows()
        self.round_line.hide()

    def show_run(
        self, name: str, tags: Sequence[str], spec: BenchSpec, hosts: Sequence[str] = ()
    ) -> None:
        """The run now on show: a pass (tagged `experiment`) or another; on this machine, or
        on `hosts` (its target the directory on each)."""
        said = ON_SHOW if EXPERIMENT_TAG in tags else NOT_A_PASS
        self.heading.setText(f"<b>{escape(name, quote=False)}</b><br>{escape(said, quote=False)}")
        self._clear_rows()
        self.round_line.hide()
        if hosts:
            self._add_row("Hosts", ", ".join(hosts))
        for key, value in spec_settings(spec).items():
            self._add_row(setting_label(f"spec.{key}"), setting_text(f"spec.{key}", value))
        if spec.steady_state:
            rounds = f"until steady, {spec.max_rounds} rounds at most"
            first = ", preconditioned" if spec.precondition else ""
            self._add_row("Steady state", rounds + first)

    def route_rounds(self, rounds: SignalInstance, form_row: SteadyStateRow) -> None:
        """A steady-state round's line goes to the form's row, or here while the form is put
        away (the form keeps its own line as it was)."""
        self._form_row = form_row
        rounds.connect(self._on_round)

    def _on_round(self, event: SteadyRound) -> None:
        if self.isHidden() and self._form_row is not None:
            self._form_row.show_round(event)
            return
        self.round_line.setText(round_text(event))
        self.round_line.setVisible(True)

    def settings(self) -> dict[str, str]:
        """What the panel lists, by label: for the page's readers and its tests."""
        listed = {}
        for row in range(self.rows.rowCount()):
            label = self.rows.itemAt(row, QFormLayout.ItemRole.LabelRole)
            field = self.rows.itemAt(row, QFormLayout.ItemRole.FieldRole)
            if label is not None and field is not None:
                label_widget, field_widget = label.widget(), field.widget()
                if isinstance(label_widget, QLabel) and isinstance(field_widget, QLabel):
                    listed[label_widget.text()] = field_widget.text()
        return listed

    def _add_row(self, label: str, text: str) -> None:
        value = QLabel(text)
        value.setTextFormat(Qt.TextFormat.PlainText)  # a path or a name, never markup
        value.setWordWrap(True)
        value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.rows.addRow(QLabel(label), value)

    def _clear_rows(self) -> None:
        while self.rows.rowCount():
            self.rows.removeRow(0)

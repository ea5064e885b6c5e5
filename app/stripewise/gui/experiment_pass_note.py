"""The Benchmark page's left column while an experiment runs.

The experiment starts each of its passes on this page's session, so the plots and results beside
the form are a pass's; the form is the admin's own next run and says nothing about them. While an
experiment runs the form is put away, kept as it was, and this panel says what the pass on show
runs: its name (the experiment and the point) and the spec as the helper normalised it.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QVBoxLayout, QWidget

from stripewise.model.bench import BenchSpec
from stripewise.model.compare_context import spec_settings
from stripewise.model.setting_labels import setting_label, setting_text

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
EXPERIMENT_TAG = "experiment"  # on each of an experiment's runs (services/experiment_runner.py)


class ExperimentPassNote(QWidget):
    """Hidden until an experiment runs; `wait()` before its first pass, `show_run()` each."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("experimentPassNote")
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.rows = QFormLayout()
        self.rows.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addLayout(self.rows)
        self.hide()

    def wait(self) -> None:
        self.heading.setText(escape(WAITING, quote=False))
        self._clear_rows()

    def show_run(
        self, name: str, tags: Sequence[str], spec: BenchSpec, hosts: Sequence[str] = ()
    ) -> None:
        """The run now on show: a pass (tagged `experiment`) or another; on this machine, or
        on `hosts` (its target the directory on each)."""
        said = ON_SHOW if EXPERIMENT_TAG in tags else NOT_A_PASS
        self.heading.setText(f"<b>{escape(name, quote=False)}</b><br>{escape(said, quote=False)}")
        self._clear_rows()
        if hosts:
            self._add_row("Hosts", ", ".join(hosts))
        for key, value in spec_settings(spec).items():
            self._add_row(setting_label(f"spec.{key}"), setting_text(f"spec.{key}", value))
        if spec.steady_state:
            rounds = f"until steady, {spec.max_rounds} rounds at most"
            first = ", preconditioned" if spec.precondition else ""
            self._add_row("Steady state", rounds + first)

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

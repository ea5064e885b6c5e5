"""The Benchmark form's steady-state row: a box to run the write phases in rounds until their
rate is steady (SNIA PTS: model/steady_state.py), with preconditioning and the most rounds,
editable only while the box is ticked and the form takes edits (not mid-run); under them, the
running phase's last round in words ("round 7: not steady, excursion 34 %")."""

from __future__ import annotations

from typing import TypedDict

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QSpinBox, QVBoxLayout, QWidget

from stripewise.model.bench import BONNIE_NAMES
from stripewise.model.steady_state import (
    DEFAULT_MAX_ROUNDS,
    MAX_ROUNDS,
    WINDOW,
    Window,
    round_words,
)
from stripewise.protocol.events import SteadyRound


class SteadyFields(TypedDict):
    steady_state: bool
    precondition: bool
    max_rounds: int


class SteadyStateRow(QWidget):
    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.steady = QCheckBox("Until steady")
        self.steady.setToolTip(
            "Sequential and random writes run in rounds of the file size until the last "
            f"{WINDOW} rounds are steady (SNIA PTS: their range within 20 % of their mean, "
            "their trend within 10 %); the figure is theirs, not the first minute's burst into a "
            "cache. A run that never settles is flagged."
        )
        self.precondition = QCheckBox("precondition")
        self.precondition.setToolTip("Write the whole target sequentially once first")
        self.max_rounds = QSpinBox()
        self.max_rounds.setRange(WINDOW, MAX_ROUNDS)
        self.max_rounds.setValue(DEFAULT_MAX_ROUNDS)
        self.max_rounds.setPrefix("at most ")
        self.max_rounds.setSuffix(" rounds")
        self.max_rounds.setToolTip("Stop at this many rounds, steady or not")
        self.max_rounds.setAccessibleName("Most rounds")
        for box in (self.steady, self.precondition):
            box.toggled.connect(self.edited)
        self.steady.toggled.connect(self.sync)
        self.max_rounds.valueChanged.connect(self.edited)
        self.rounds = QLabel()  # the live rounds line, empty until a round ends
        self.rounds.setObjectName("steadyRounds")
        self.rounds.setVisible(False)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()  # two lines: one would make the Benchmark form too wide at 800 px
        row.addWidget(self.steady)
        row.addWidget(self.precondition, 1)
        column.addLayout(row)
        column.addWidget(self.max_rounds)
        column.addWidget(self.rounds)
        self.sync()

    def sync(self) -> None:
        on = self.steady.isChecked() and self.steady.isEnabled()
        self.precondition.setEnabled(on)
        self.max_rounds.setEnabled(on)
        if not self.steady.isChecked():  # a run without rounds: the last run's line is done
            self.rounds.clear()
            self.rounds.setVisible(False)

    def show_round(self, event: SteadyRound) -> None:
        """A round of the running phase ended: said under the row until the next one."""
        self.rounds.setText(round_text(event))
        self.rounds.setVisible(True)

    def spec_fields(self) -> SteadyFields:
        """BenchSpec's steady_state, precondition and max_rounds as the row has them."""
        steady = self.steady.isChecked()
        return SteadyFields(
            steady_state=steady,
            precondition=steady and self.precondition.isChecked(),
            max_rounds=self.max_rounds.value(),
        )

    def show_spec(self, steady_state: bool, precondition: bool, max_rounds: int) -> None:
        """A stored run's choices back in the row."""
        self.steady.setChecked(steady_state)
        self.precondition.setChecked(precondition)
        self.max_rounds.setValue(max_rounds)
        self.sync()


def round_text(event: SteadyRound) -> str:
    """A steady-state round as its live line says it: the phase, the round, the window."""
    window = Window(event.figure, event.excursion_pct, event.slope_pct)
    return f"{BONNIE_NAMES[event.phase]}: {round_words(event.round, window)}"

"""The Benchmark page's pass note: a steady-state round's live line goes to the form's row, or
to the note while an experiment has put the form away, and the form's own line is then kept as
it was."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from stripewise.gui.experiment_pass_note import ExperimentPassNote
from stripewise.gui.steady_state_row import SteadyStateRow
from stripewise.model.bench import Phase
from stripewise.protocol.events import SteadyRound


class Rounds(QObject):
    ended = Signal(object)


def test_a_round_goes_to_the_form_or_while_it_is_put_away_to_the_note(qtbot: Any) -> None:
    row, note, rounds = SteadyStateRow(), ExperimentPassNote(), Rounds()
    qtbot.addWidget(row)
    qtbot.addWidget(note)
    note.route_rounds(rounds.ended, row)
    rounds.ended.emit(SteadyRound("r", Phase.SEQ_WRITE, 1, 3, 812.5, None, None, False))
    own = row.rounds.text()
    assert "3" in own and note.round_line.isHidden()

    note.show()  # an experiment runs: the form is put away
    rounds.ended.emit(SteadyRound("r", Phase.SEQ_WRITE, 1, 7, 640.0, 4.0, 2.0, True))
    assert not note.round_line.isHidden() and "7" in note.round_line.text()
    assert row.rounds.text() == own  # the form's line as it was
    note.wait()  # the next pass: no round yet
    assert note.round_line.isHidden()

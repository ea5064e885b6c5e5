"""A steady-state run's rounds in the History detail (issue 33): one bar per round of a phase's
repetition, the window's bars coloured and the rest grey, the window's mean and its lowest and
highest round drawn across the window (PTS: that range at most 20 % of the mean), and the
verdict above in words ("steady after 7 rounds" /
"not steady in 25 rounds, excursion 34 %"). A chooser picks the phase and repetition when the
run kept several; the plot's tooltip lists every round's figure, for reading them exactly."""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from stripewise.gui.theme import style_axes
from stripewise.model.rounds_kept import PhaseRounds
from stripewise.model.steady_state import MAX_EXCURSION_PCT

WINDOW_COLOUR = "#4c9be8"
BEFORE_COLOUR = "#8c8c8c"  # grey: shows on light and dark backgrounds alike
MEAN_COLOUR = "#ffb000"
_BAR_WIDTH = 0.7


def _figure(value: float) -> str:
    return f"{value:,.1f}"


def window_words(found: PhaseRounds) -> str:
    """'rounds 3-7, 100.0 MB/s (excursion 4.0 %, slope 1.2 %)'."""
    kept, window = found.kept, found.kept.window
    said = f"rounds {kept.window_start}-{len(kept.rounds)}, {_figure(window.mean)} {found.unit}"
    judged = [
        f"{name} {percent:.1f} %"
        for name, percent in (("excursion", window.excursion_pct), ("slope", window.slope_pct))
        if percent is not None
    ]
    return f"{said} ({', '.join(judged)})" if judged else said


def rounds_text(found: PhaseRounds) -> str:
    """Every round's figure, one a line, the window's marked: the plot's tooltip."""
    kept = found.kept
    return "\n".join(
        f"round {number}: {_figure(figure)} {found.unit}"
        + (" (window)" if number >= kept.window_start else "")
        for number, figure in enumerate(kept.rounds, start=1)
    )


def _label(found: PhaseRounds) -> str:
    return f"{found.phase.replace('_', ' ')}, pass {found.kept.repetition}"


class SteadyRoundsView(QWidget):
    """The rounds of one phase's repetition at a time, with a chooser of those the run kept."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rounds: list[PhaseRounds] = []
        self._shown: PhaseRounds | None = None
        self.chooser = QComboBox()
        self.chooser.setAccessibleName("Steady-state rounds of")
        self.chooser.activated.connect(lambda index: self.show_rounds(index))
        self.verdict = QLabel()
        self.verdict.setObjectName("steadyVerdict")
        self.verdict.setWordWrap(True)
        self.plot = pg.PlotWidget()
        self.plot.setAccessibleName("Steady-state rounds")
        item = self.plot.getPlotItem()
        item.setMenuEnabled(False)
        item.setMouseEnabled(x=False, y=False)
        item.hideButtons()
        item.setLabel("bottom", "round")
        self.before_bars = pg.BarGraphItem(x=[], height=[], width=_BAR_WIDTH, brush=BEFORE_COLOUR)
        self.window_bars = pg.BarGraphItem(x=[], height=[], width=_BAR_WIDTH, brush=WINDOW_COLOUR)
        item.addItem(self.before_bars)
        item.addItem(self.window_bars)
        self.mean_line = item.plot([], [], pen=pg.mkPen(MEAN_COLOUR, width=2))
        band = pg.mkPen(MEAN_COLOUR, width=1, style=Qt.PenStyle.DashLine)
        self.band_lines = (item.plot([], [], pen=band), item.plot([], [], pen=band))
        top = QHBoxLayout()
        top.addWidget(QLabel("Steady state:"))
        top.addWidget(self.chooser, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.verdict)
        layout.addWidget(self.plot, 1)
        self.restyle()

    # --- data -------------------------------------------------------------------------------
    def set_rounds(self, rounds: Sequence[PhaseRounds]) -> None:
        """A stored run's rounds (RunDetail.rounds): the first phase and repetition shown."""
        self._rounds = list(rounds)
        self.chooser.clear()
        self.chooser.addItems([_label(found) for found in self._rounds])
        self.chooser.setVisible(len(self._rounds) > 1)
        self.show_rounds(0)

    @property
    def keys(self) -> list[tuple[str, int]]:
        """(phase, repetition) of every kept set of rounds, in the chooser's order."""
        return [(found.phase, found.kept.repetition) for found in self._rounds]

    def shown(self) -> PhaseRounds | None:
        return self._shown

    def show_rounds(self, index: int) -> None:
        self._shown = self._rounds[index] if 0 <= index < len(self._rounds) else None
        if self._shown is not None:
            self.chooser.setCurrentIndex(index)
        self._draw(self._shown)

    # --- drawing ----------------------------------------------------------------------------
    def _draw(self, found: PhaseRounds | None) -> None:
        if found is None:
            self.verdict.setText("")
            self.plot.setToolTip("")
            self.before_bars.setOpts(x=[], height=[])
            self.window_bars.setOpts(x=[], height=[])
            for line in (self.mean_line, *self.band_lines):
                line.setData([], [])
            return
        kept = found.kept
        start = kept.window_start
        numbers = list(range(1, len(kept.rounds) + 1))
        before = [(n, f) for n, f in zip(numbers, kept.rounds, strict=True) if n < start]
        inside = [(n, f) for n, f in zip(numbers, kept.rounds, strict=True) if n >= start]
        self.before_bars.setOpts(x=[n for n, _ in before], height=[f for _, f in before])
        self.window_bars.setOpts(x=[n for n, _ in inside], height=[f for _, f in inside])
        span = [start - _BAR_WIDTH / 2, len(kept.rounds) + _BAR_WIDTH / 2]
        mean = kept.window.mean
        self.mean_line.setData(span, [mean, mean])
        window = kept.rounds[start - 1 :]
        for line, level in zip(self.band_lines, (min(window), max(window)), strict=True):
            line.setData(span, [level, level])
        self.plot.getPlotItem().setLabel("left", found.unit)
        self.plot.getPlotItem().setXRange(0.4, len(kept.rounds) + 0.6, padding=0)
        self.verdict.setText(
            f"<b>{kept.verdict().capitalize()}</b>; the figure is the mean of {window_words(found)}"
            f" (dashed: the window's lowest and highest; steady needs them within"
            f" {MAX_EXCURSION_PCT:.0f} % of the mean)."
        )
        self.plot.setToolTip(rounds_text(found))

    def restyle(self) -> None:
        palette = self.palette()
        self.plot.setBackground(palette.color(QPalette.ColorRole.Base))
        style_axes([self.plot.getPlotItem()], palette)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.restyle()  # light <-> dark: the axes follow the text colour
        super().changeEvent(event)

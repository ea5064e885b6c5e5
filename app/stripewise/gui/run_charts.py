"""A stored run's charts beside its results on the History page: its steady-state rounds and
its latency over time, one at a time under a tab for each when the run has both.

Side by side at 1024x768 each chart had about 200 px beside the results' fixed columns: the
steady-state verdict wrapped a word a line and its bars had no room. One at a time, each has
the whole width the results leave, and each keeps the least height that shows its axes.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QTabBar, QVBoxLayout, QWidget

from stripewise.gui.latency_map import LatencyMap
from stripewise.gui.steady_rounds_view import SteadyRoundsView
from stripewise.model.latency import LatencyInterval
from stripewise.model.rounds_kept import PhaseRounds

ROUNDS_MIN_PX = 150  # the rounds' bars and both axes, as the heat map has MAP_MIN_PX
_VERDICT_LINES = 3  # "Not steady in 10 rounds, excursion 67 %; the figure is the mean..."
STEADY_TAB, LATENCY_TAB = 0, 1


class RunCharts(QWidget):
    """The charts a run has; hidden when it has none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.steady_rounds = SteadyRoundsView()  # a steady-state run's rounds
        self.steady_rounds.plot.setMinimumHeight(ROUNDS_MIN_PX)
        self.steady_rounds.hide()
        self.latency_map = LatencyMap()  # a run whose samples carry their latency
        self.latency_map.hide()
        self.tabs = QTabBar()
        self.tabs.setAccessibleName("Charts of the run")
        self.tabs.addTab("Steady state")
        self.tabs.addTab("Latency over time")
        self.tabs.setExpanding(False)
        self.tabs.currentChanged.connect(self._show_tab)
        self.tabs.hide()  # only when the run has both
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        layout.addWidget(self.steady_rounds, 1)
        layout.addWidget(self.latency_map, 1)
        self.hide()

    def show_run(self, rounds: Sequence[PhaseRounds], latency: Sequence[LatencyInterval]) -> None:
        self.steady_rounds.set_rounds(rounds)
        self.latency_map.show_intervals(latency)
        self.tabs.setVisible(bool(rounds) and bool(latency))
        self.setVisible(bool(rounds or latency))
        if rounds and latency:
            self._show_tab(self.tabs.currentIndex())
        else:
            self.steady_rounds.setVisible(bool(rounds))
            self.latency_map.setVisible(bool(latency))

    def least_height(self) -> int:
        """What the taller chart needs to show its axes whole, with the tabs over it."""
        verdict = _VERDICT_LINES * self.steady_rounds.verdict.fontMetrics().lineSpacing()
        steady = self.steady_rounds.chooser.sizeHint().height() + verdict + ROUNDS_MIN_PX
        spacing = 2 * self.steady_rounds.layout().spacing()  # type: ignore[union-attr]
        latency = self.latency_map.minimumSizeHint().height()
        return self.tabs.sizeHint().height() + max(steady + spacing, latency)

    def sizeHint(self) -> QSize:
        """No taller than the least that shows the axes: the plots' own hints (a graphics
        view's) made the History page taller than the window, which then scrolled the pane
        the History page fits to the window (its splitter gives the pane its height)."""
        return QSize(super().sizeHint().width(), self.least_height())

    def _show_tab(self, index: int) -> None:
        self.steady_rounds.setVisible(index == STEADY_TAB)
        self.latency_map.setVisible(index == LATENCY_TAB)

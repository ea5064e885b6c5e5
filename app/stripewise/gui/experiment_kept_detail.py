"""One kept experiment, opened: its chart (a line, or heat maps for a grid), its points table
and its recommendation card, drawn from the stored result with the Experiment page's own
widgets, read-only; "Apply this" for a better verdict, as the page offers after a run."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QScrollArea, QSplitter, QVBoxLayout, QWidget

from stripewise.gui.experiment_card import ApplyRecommendation, RecommendationCard
from stripewise.gui.experiment_chart import METRIC_FIGURES, ExperimentChart, objective_text
from stripewise.gui.experiment_points import PointsTable
from stripewise.model.experiment import Design, Value, Values
from stripewise.services.experiment_history import KeptExperiment
from stripewise.services.tuning import TuningService

CHART_SHARE = (1, 2)  # of the width, when the points table has room beside it
CHART_LEAST_PX = 200  # narrower, its three ticks and legend run together
NOTHING_OPEN = "Select an experiment above to see its chart, points and recommendation."


def chart_parameters(
    design: Design, starting: Values, searched: str | None
) -> list[tuple[str, list[Value]]]:
    """The chart's parameters with their values: a search's bounds; one parameter's values
    with the starting one among them (drawn beside the others); a grid's values as listed (a
    starting point outside it is in the table)."""
    if searched is not None and design.search is not None:
        return [(searched, list(design.search))]
    start = dict(starting)
    grid = len(design.parameters) == 2
    return [
        (
            p.name,
            list(p.values)
            if grid or p.name not in start
            else sorted_values([*p.values, start[p.name]], p.values),
        )
        for p in design.parameters
    ]


def sorted_values(values: list[Value], listed: tuple[Value, ...]) -> list[Value]:
    """The listed values and the starting one, once each: numbers in order, names as listed
    with the starting one first."""
    unique = list(dict.fromkeys(values))
    if all(isinstance(v, int) for v in unique):
        return sorted(unique, key=int)
    extra = [v for v in unique if v not in listed]
    return [*extra, *listed]


def searched_name(design: Design, values: Sequence[Values]) -> str | None:
    """A latency target's parameter: its design lists none, its points name it."""
    if design.search is None:
        return None
    return next((name for point in values for name, _value in point), "queue_depth")


class KeptDetail(QWidget):
    """The opened experiment; `told` says what Apply did, in one line."""

    told = Signal(str)

    def __init__(self, tuning: TuningService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kept: KeptExperiment | None = None
        self.title = QLabel(NOTHING_OPEN)
        self.title.setObjectName("keptTitle")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.chart = ExperimentChart()
        self.points = PointsTable()  # narrower than even its two-line headings, it scrolls
        self.card = RecommendationCard()
        self.card.show_waiting("")
        self.apply = ApplyRecommendation(tuning, self)
        self.card.applyRequested.connect(self._ask_apply)
        self.apply.applied.connect(self.told)
        self.apply.done.connect(lambda what, _reply: self.told.emit(f"{what}."))
        self.apply.refused.connect(lambda message: self.told.emit(f"Not done: {message}"))

        right = QWidget()
        self.right_layout = right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(8, 0, 0, 0)
        right_layout.addWidget(self.card)  # the answer first, its points under it
        right_layout.addWidget(self.points, 1)
        # scrolled up and down when the window is short (800x600): the card's wrapped lines
        # are never squeezed over each other
        self.side = scroll = QScrollArea()
        scroll.setWidget(right)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.addWidget(self.chart)
        self.split.addWidget(scroll)
        self.split.setChildrenCollapsible(False)
        self._dragged = False  # the admin's split kept once they move it
        self.split.splitterMoved.connect(lambda *_args: setattr(self, "_dragged", True))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.split, 1)
        self.split.hide()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._share()

    def _share(self) -> None:
        """The chart half the width, the card and the points table (whole) the rest, until
        the admin drags the split: a heat map's size hint would take most otherwise. When
        half is too narrow for the table's columns (800x600), the chart gives way."""
        if not self._dragged and self.width() > 0:
            chart = self.width() * CHART_SHARE[0] // CHART_SHARE[1]
            margins = self.right_layout.contentsMargins()
            bar = self.side.verticalScrollBar().sizeHint().width()  # shown when short
            room = self.width() - chart - self.split.handleWidth() - bar
            room -= margins.left() + margins.right()
            self.points.set_compact(False)
            if self.points.whole_width() > room:  # two-line headings, then a narrower chart
                self.points.set_compact(True)
                chart = max(CHART_LEAST_PX, chart - (self.points.whole_width() - room))
            self.split.setSizes([chart, self.width() - chart])

    def show_experiment(self, kept: KeptExperiment) -> None:
        self.kept = kept
        stored = kept.stored
        summary, design, result = stored.summary, stored.design, stored.result
        when = summary.created_at.astimezone().strftime("%Y-%m-%d %H:%M")
        metric = design.objective
        self.title.setText(
            f"#{summary.id} {summary.name}: {summary.target} on {summary.host}, {when}; "
            f"{objective_text(metric)}; {summary.status.value}, "
            f"{summary.runs} runs"
        )
        self.split.show()
        points = result.points if result is not None else ()
        starting = next((p.values for p in points if p.baseline), ())
        searched = searched_name(design, [p.values for p in points])
        parameters = chart_parameters(design, starting, searched)
        self.chart.set_design(parameters, objective_text(metric), baseline=searched is None)
        self.points.set_names([name for name, _values in parameters])
        self.points.set_figure(METRIC_FIGURES[metric.metric])
        self.points.set_points(points)
        self._share()  # once the table holds its points: their widths count
        if result is None:
            self.chart.clear_points()
            self.card.show_waiting(
                f"No result kept: the experiment ended {summary.status.value} before it had one."
            )
            return
        self.chart.show_points(result.points)
        self.card.show_result(result, bool(ApplyRecommendation.settings_for(kept.setup, result)))

    def show_nothing(self, text: str = NOTHING_OPEN) -> None:
        self.kept = None
        self.title.setText(text)
        self.split.hide()

    def _ask_apply(self) -> None:
        kept = self.kept
        if kept is not None and kept.setup is not None and kept.stored.result is not None:
            self.apply.ask(kept.setup, kept.stored.result, self.card.persist.isChecked())

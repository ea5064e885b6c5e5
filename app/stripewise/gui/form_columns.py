"""The Benchmark page's two columns: its form, scrolled up and down only, and the plots and
results beside it, the form at its width and the plots the rest."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QScrollArea, QSplitter, QStyle, QWidget

PLOTS_COMFORT_PX = 470  # below this the plots' legends and the results table are cut
FORM_EXTRA_PX = 60  # what the form gets beyond its minimum when the window has room


class FormScroll(QScrollArea):
    """Scrolls the form up and down only, and is never narrower than the form with room for
    the vertical scroll bar: nothing is cut at its right edge, at any window size."""

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        inner = self.widget()
        if inner is None:
            return hint
        bar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)
        return QSize(inner.minimumSizeHint().width() + bar, hint.height())


class FormColumns(QSplitter):
    """The form at its width (and a little more when the window has room), the plots the
    rest; until the admin drags the splitter, then theirs."""

    def __init__(self, form: QWidget, plots: QWidget) -> None:
        super().__init__()
        self.form_scroll = FormScroll()
        self.form_scroll.setWidget(form)
        self.form_scroll.setWidgetResizable(True)
        self.form_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.form_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.addWidget(self.form_scroll)
        self.addWidget(plots)
        self.setStretchFactor(0, 0)  # the form keeps its width, the plots take the rest
        self.setStretchFactor(1, 1)
        self.setChildrenCollapsible(False)
        self.setSizes([self.form_scroll.minimumSizeHint().width(), PLOTS_COMFORT_PX])
        self._moved = False  # the admin dragged the splitter: their widths stay
        self.splitterMoved.connect(self._on_moved)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.isVisible():  # a window made smaller takes the form's extra room back first:
            self.fit()  # the plots and results need it more at 1024 px

    def fit(self) -> None:
        if self._moved:
            return
        form = self.form_scroll.minimumSizeHint().width()
        total = self.width()
        spare = total - self.handleWidth() - form - PLOTS_COMFORT_PX
        left = form + max(0, min(FORM_EXTRA_PX, spare))
        self.setSizes([left, total - self.handleWidth() - left])

    def _on_moved(self, *_args: object) -> None:
        self._moved = True

"""The Benchmark page's plot area: this machine's live plots or a group run's, one at a time."""

from __future__ import annotations

from PySide6.QtCore import QSize

from stripewise.gui.page_stack import PageStack

PLOTS_MIN_PX = 240  # the plots' least height (legible axes): below it the table scrolls


class PlotStack(PageStack):
    """The Benchmark page's plots (this machine's or a group's), asking for no more height
    than the page on show needs at least (PageStack's minimum): the results table below keeps
    its rows and the plots take what is left. Asking for pyqtgraph's hint (and, through the
    latency map's wrapping legend, a height for their width), they took the table's room at
    1280x900 (its header and half a row) and the map took the plots' (about 40 px for all
    three)."""

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.minimumSizeHint().height())

    def hasHeightForWidth(self) -> bool:
        return False

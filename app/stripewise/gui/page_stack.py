"""The pages' stack, in a scroll area: on a small screen (an 800x600 console) a page that needs
more room than the window has scrolls instead of having its controls squeezed until clipped.

QStackedWidget asks for the largest minimum of all its pages; this stack asks for the page on
show only, so a wide page makes only itself scroll.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QStackedWidget, QWidget


class PageStack(QStackedWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.currentChanged.connect(lambda _index: self.updateGeometry())

    def minimumSizeHint(self) -> QSize:
        page = self.currentWidget()
        if page is None:
            return super().minimumSizeHint()
        return page.minimumSizeHint().expandedTo(page.minimumSize())

    def sizeHint(self) -> QSize:
        page = self.currentWidget()
        return super().sizeHint() if page is None else page.sizeHint()


def scrolling(stack: PageStack) -> QScrollArea:
    """`stack` filling a frameless scroll area that scrolls only below the page's minimum."""
    area = QScrollArea()
    area.setObjectName("pageScroll")
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidgetResizable(True)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    area.setWidget(stack)
    return area

"""Help > Stripewise Help (F1): the manual page of the page on show, in a small window;
Help > Keyboard Shortcuts: the page of keys, which every page's links line also offers.

The pages are Markdown files shipped inside the package (`stripewise.resources`, folder
`manual`), read through importlib.resources, so an installed wheel finds them as the checkout
does. Links between pages are relative (`planner.md`): the browser resolves them against the
page on show and asks `loadResource` for the text, which keeps its Back history too.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRect, QSize, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QKeySequence, QShortcut, QTextDocument
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from stripewise.gui import MANUAL_PAGES
from stripewise.gui.screen_fit import resize_within_screen
from stripewise.resources import resource

MANUAL_FOLDER = "manual"
SCHEME = "manual"  # manual:planner.md; relative links resolve to manual:NAME.md
WINDOW_SIZE = (600, 620)  # beside a page at 1024x768, not over all of it


def manual_title(page: str) -> str:
    """The page's own title, as its heading on screen says it."""
    return page.capitalize()


def manual_text(page: str) -> str:
    """A manual page (a view's, or the keys'), as shipped; KeyError for another name."""
    if page not in MANUAL_PAGES:
        raise KeyError(f"no manual page {page!r}; there are {', '.join(MANUAL_PAGES)}")
    return resource(MANUAL_FOLDER, f"{page}.md").read_text(encoding="utf-8")


def page_url(page: str) -> QUrl:
    return QUrl(f"{SCHEME}:{page}.md")


def page_of(url: QUrl) -> str | None:
    """The manual page a link names (`manual:tuning.md` -> "tuning"), else None."""
    if url.scheme() != SCHEME:
        return None
    name = url.path().removesuffix(".md")
    return name if name in MANUAL_PAGES else None


def with_contents_line(page: str, text: str) -> str:
    """Every page opens with links to the others, the one on show in bold."""
    links = " · ".join(
        f"**{manual_title(name)}**" if name == page else f"[{manual_title(name)}]({name}.md)"
        for name in MANUAL_PAGES
    )
    return f"{links}\n\n{text}"


class ManualBrowser(QTextBrowser):
    """A QTextBrowser whose `manual:` pages come from the package, not the file system."""

    def loadResource(self, kind: int, name: QUrl | str) -> Any:
        page = page_of(QUrl(name))
        if page is not None:
            return with_contents_line(page, manual_text(page))
        return super().loadResource(kind, name)


class HelpWindow(QWidget):
    """A small window beside the main one; not modal, closed with Esc, reused for every F1."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("helpWindow")
        self.setWindowTitle("Stripewise Help")
        resize_within_screen(self, QSize(*WINDOW_SIZE))
        self.browser = ManualBrowser()
        self.browser.setAccessibleName("Manual page")
        # links are followed here: QTextBrowser would take manual: for an external scheme
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._follow)
        self.browser.document().setDocumentMargin(14)
        self.browser.sourceChanged.connect(self._on_source)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.close)
        QShortcut(QKeySequence(QKeySequence.StandardKey.Back), self, self.browser.backward)
        QShortcut(QKeySequence(QKeySequence.StandardKey.Forward), self, self.browser.forward)
        self._placed = False

    @property
    def page(self) -> str | None:
        """The manual page on show: a view's name, or KEYBOARD_PAGE."""
        return page_of(self.browser.source())

    def show_page(self, page: str) -> None:
        """Show a manual page (a view's name, or KEYBOARD_PAGE) and bring the window up."""
        if page not in MANUAL_PAGES:
            raise KeyError(f"no manual page {page!r}")
        if self.page != page:
            self.browser.setSource(page_url(page), QTextDocument.ResourceType.MarkdownResource)
        if not self._placed:
            self._placed = True
            self._place_beside_parent()
        self.show()
        self.raise_()
        self.activateWindow()

    def _follow(self, link: QUrl) -> None:
        """Another manual page in this window; a web address in the desktop's browser."""
        url = self.browser.source().resolved(link)
        if page_of(url) is not None:
            self.browser.setSource(url, QTextDocument.ResourceType.MarkdownResource)
        elif url.scheme() in ("http", "https", "mailto"):
            QDesktopServices.openUrl(url)

    def _on_source(self, url: QUrl) -> None:
        page = page_of(url)
        title = f"{manual_title(page)}: Stripewise Help" if page else "Stripewise Help"
        self.setWindowTitle(title)

    def _place_beside_parent(self) -> None:
        """Over the right-hand part of the main window, so the page it explains stays in
        view on the left; kept on the parent's screen."""
        parent = self.parentWidget()
        if parent is None:
            return
        outer: QRect = parent.frameGeometry()
        screen = parent.screen().availableGeometry()
        width = min(self.width(), screen.width())
        height = min(self.height(), screen.height())
        x = max(screen.left(), min(outer.right() - width - 24, screen.right() - width))
        y = max(screen.top(), min(outer.top() + 60, screen.bottom() - height))
        self.setGeometry(x, y, width, height)

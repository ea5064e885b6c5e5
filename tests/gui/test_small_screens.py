"""The console's usual modes, 800x600 and 1024x768: every page fits the window without a
control squeezed below the size its text needs (a page that cannot fit scrolls, it is never
cut), and the keyboard reaches every control: Tab visits each one, buttons and form labels
carry their Alt+letter, and the shortcuts the manual lists are the window's own."""

from __future__ import annotations

import re
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractScrollArea,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QScrollArea,
    QTabBar,
    QTextEdit,
    QWidget,
)

from stripewise.gui import VIEW_NAMES
from stripewise.gui.main_window import MainWindow
from stripewise.resources import resource
from tests.gui.conftest import WindowFactory

SIZES = [(800, 600), (1024, 768)]
CONTROLS = (
    QAbstractButton, QLineEdit, QComboBox, QAbstractSpinBox, QAbstractItemView,
    QPlainTextEdit, QTextEdit, QTabBar,
)  # fmt: skip
MAX_TABS = 400


def controls_on_show(page: QWidget) -> list[QWidget]:
    """The page's controls a person sees and can use now (a spin box's or combo box's own
    line edit is part of it, not a control of its own)."""
    found = []
    for widget in page.findChildren(QWidget):
        if not isinstance(widget, CONTROLS) or not widget.isVisible() or not widget.isEnabled():
            continue
        if isinstance(widget.parentWidget(), (QAbstractSpinBox, QComboBox)):
            continue
        if (
            isinstance(widget, QAbstractScrollArea)
            and widget.focusPolicy() == Qt.FocusPolicy.NoFocus
        ):
            continue
        found.append(widget)
    return found


def page_scroll(window: MainWindow) -> QScrollArea:
    area = window.findChild(QScrollArea, "pageScroll")
    assert area is not None
    return area


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_page_fits_without_a_squeezed_control(
    make_window: WindowFactory, qtbot: Any, size: tuple[int, int]
) -> None:
    window = make_window()
    window.resize(*size)
    for view in VIEW_NAMES:
        window.show_view(view)
        qtbot.waitUntil(lambda: window.size().toTuple() == size, timeout=5_000)
        QApplication.processEvents()
        page = window.page_widgets[view]
        area = page_scroll(window)
        assert not area.horizontalScrollBar().isVisible(), f"{view} scrolls sideways at {size}"
        for control in controls_on_show(page):
            if isinstance(control, QAbstractButton) and control.text():
                needed = control.sizeHint().width()
                assert control.width() >= needed, (
                    f"{view} at {size}: {control.text()!r} is {control.width()} px, "
                    f"its text needs {needed}"
                )
            elif isinstance(control, (QLineEdit, QComboBox)):
                assert control.width() >= min(80, control.sizeHint().width()), (
                    f"{view} at {size}: {control.accessibleName() or control} is "
                    f"{control.width()} px wide"
                )


def tab_round(window: MainWindow, qtbot: Any) -> list[QWidget]:
    """Focus on the navigation, then Tab until it comes back: what Tab visits, in order."""
    window.nav.setFocus(Qt.FocusReason.ShortcutFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.nav, timeout=5_000)
    visited: list[QWidget] = []
    for _ in range(MAX_TABS):
        focused = QApplication.focusWidget()
        assert focused is not None
        qtbot.keyClick(focused, Qt.Key.Key_Tab)
        now = QApplication.focusWidget()
        if now is window.nav or now is None:
            break
        visited.append(now)
    return visited


def test_tab_reaches_every_control_of_every_page(make_window: WindowFactory, qtbot: Any) -> None:
    window = make_window()
    window.resize(800, 600)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5_000)
    for view in VIEW_NAMES:
        window.show_view(view)
        QApplication.processEvents()
        visited = tab_round(window, qtbot)
        controls = controls_on_show(window.page_widgets[view])
        assert controls, view
        missed = [
            f"{type(c).__name__} {c.accessibleName() or getattr(c, 'text', lambda: '')()!r}"
            for c in controls
            if c not in visited
        ]
        assert not missed, f"{view}: Tab never reaches {missed}"
        # the page scrolls to what Tab reaches: the last control of a page is on screen
        page_controls = [c for c in visited if c in controls]
        assert not page_controls[-1].visibleRegion().isEmpty(), f"{view}: focus off screen"


# Every button of these pages has its Alt+letter; on every page none is given twice or is a
# menu's (Alt+F, V, H): Qt would then move the focus between them instead of pressing one.
MNEMONIC_PAGES = ("planner", "tuning", "history", "hardware")


def mnemonic(text: str) -> str | None:
    letters = re.findall(r"&([^&\s])", text)
    return letters[0].lower() if letters else None


@pytest.mark.parametrize("view", VIEW_NAMES)
def test_every_button_has_its_own_alt_letter(make_window: WindowFactory, view: str) -> None:
    window = make_window(view=view)
    window.resize(800, 600)
    QApplication.processEvents()
    page = window.page_widgets[view]
    taken = {mnemonic(menu.title()) for menu in window.menuBar().findChildren(QMenu)} - {None}
    assert taken == {"f", "v", "h"}
    letters: dict[str, str] = {}
    texts = [c.text() for c in controls_on_show(page) if isinstance(c, QAbstractButton)]
    texts += [label.text() for label in page.findChildren(QLabel) if label.buddy() is not None]
    wrong = []
    for text in filter(None, texts):
        letter = mnemonic(text)
        if text.startswith("Compare"):  # "Compare 2": its text counts the runs picked
            continue
        if letter is None:
            if view in MNEMONIC_PAGES:
                wrong.append(f"{text!r} has no Alt+letter")
        elif letter in taken:
            wrong.append(f"{text!r} takes Alt+{letter}, a menu's")
        elif letter in letters:
            wrong.append(f"{text!r}, {letters[letter]!r}: Alt+{letter}")
        else:
            letters[letter] = text
    assert not wrong, f"{view}: {wrong}; taken: {letters}"


def test_the_shortcuts_the_manual_lists_are_the_windows(main_window: MainWindow) -> None:
    manual = resource("manual", "keyboard.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"\b(?:Ctrl\+\w+|F\d+)\b", manual)) | {"Ctrl+2", "Ctrl+5"}
    bound = {
        sequence.toString()
        for holder in [*main_window.findChildren(QAction), *main_window.findChildren(QShortcut)]
        for sequence in (holder.shortcuts() if isinstance(holder, QAction) else [holder.key()])
    }
    assert listed - {"Ctrl+F"} <= bound, f"listed but bound to nothing: {listed - bound}"
    assert QKeySequence(QKeySequence.StandardKey.Find).toString() == "Ctrl+F"
    assert "Ctrl+F" in bound

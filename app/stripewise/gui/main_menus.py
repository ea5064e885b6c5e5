"""The main window's menus: File, View (a page per Ctrl+number), Help. The window hands in what
each entry does, so this module knows nothing of the window."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QApplication, QMainWindow

from stripewise.gui import KEYBOARD_PAGE, VIEW_NAMES


@dataclass(frozen=True)
class MenuHandlers:
    import_results: Callable[[], object]
    edit_host_groups: Callable[[], object]
    show_view: Callable[[str], object]
    refresh: Callable[[], object]  # the page on show read again
    focus_navigation: Callable[[], object]
    show_help: Callable[[str | None], object]  # a manual page; None: the page on show's
    show_about: Callable[[], object]


@dataclass(frozen=True)
class Menus:
    view_actions: dict[str, QAction]  # by page name, checkable
    refresh_action: QAction
    help_action: QAction


def build_menus(window: QMainWindow, handlers: MenuHandlers) -> Menus:
    file_menu = window.menuBar().addMenu("&File")
    import_action = QAction("&Import Results...", window)
    import_action.setShortcut(QKeySequence("Ctrl+I"))
    import_action.triggered.connect(handlers.import_results)
    file_menu.addAction(import_action)
    groups_action = QAction("&Host Groups...", window)
    groups_action.triggered.connect(handlers.edit_host_groups)
    file_menu.addAction(groups_action)
    file_menu.addSeparator()
    quit_action = QAction("&Quit", window)
    quit_action.setShortcut(QKeySequence("Ctrl+Q"))  # the console's Qt binds no Quit key
    quit_action.triggered.connect(window.close)
    file_menu.addAction(quit_action)

    view_menu = window.menuBar().addMenu("&View")
    group = QActionGroup(window)
    view_actions: dict[str, QAction] = {}
    for number, name in enumerate(VIEW_NAMES, start=1):
        action = QAction(f"&{name.capitalize()}", window)
        action.setCheckable(True)
        action.setShortcut(QKeySequence(f"Ctrl+{number}"))
        action.triggered.connect(lambda _checked=False, n=name: handlers.show_view(n))
        group.addAction(action)
        view_menu.addAction(action)
        view_actions[name] = action
    view_menu.addSeparator()
    refresh_action = QAction("&Refresh", window)
    refresh_action.setShortcut(QKeySequence(Qt.Key.Key_F5))
    refresh_action.setToolTip(
        "Read the page on show again: the hardware on the Hardware page, elsewhere the history "
        "(runs saved or edited elsewhere)"
    )
    refresh_action.triggered.connect(handlers.refresh)
    view_menu.addAction(refresh_action)
    focus_nav = QAction("Focus &Navigation", window)
    focus_nav.setShortcut(QKeySequence("F6"))
    focus_nav.triggered.connect(handlers.focus_navigation)
    view_menu.addAction(focus_nav)

    help_menu = window.menuBar().addMenu("&Help")
    help_action = QAction("Stripewise &Help", window)
    help_action.setShortcut(QKeySequence(Qt.Key.Key_F1))
    help_action.setToolTip("The manual page of the page on show")
    help_action.triggered.connect(lambda: handlers.show_help(None))
    help_menu.addAction(help_action)
    keys_action = QAction("&Keyboard Shortcuts", window)
    keys_action.setToolTip("The keys of every page, for a console without a mouse")
    keys_action.triggered.connect(lambda: handlers.show_help(KEYBOARD_PAGE))
    help_menu.addAction(keys_action)
    help_menu.addSeparator()
    about = QAction("&About Stripewise", window)
    about.triggered.connect(handlers.show_about)
    help_menu.addAction(about)
    about_qt = QAction("About &Qt", window)
    about_qt.triggered.connect(QApplication.aboutQt)
    help_menu.addAction(about_qt)
    return Menus(view_actions, refresh_action, help_action)

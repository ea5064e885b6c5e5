"""Tab and Shift+Tab leave a table for the next or previous control, as the keyboard manual says:
from a table's current cell they reach the buttons of the Compare window, the planner's Compare
Plans, the kept experiments' comparison and the History page, while the arrow keys still move
between cells. Qt's own table views keep Tab moving from cell to cell forever, so a test reads
the GUI's code for any table not built on stripewise.gui.tables."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from PySide6 import QtWidgets
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QHeaderView,
    QTableView,
    QWidget,
)

from stripewise.gui.experiment_kept_compare import KeptComparisonDialog
from stripewise.gui.planner_dialogs import CompareDialog
from stripewise.model.plan import Plan
from tests.gui.conftest import WindowFactory
from tests.gui.test_compare_view import compared_from_history, store_sweep
from tests.gui.test_experiment_kept import kept_url, kept_view
from tests.gui.test_history_page import history_page

__all__ = ["kept_url"]  # the fixture, used by name

GUI = Path(__file__).resolve().parents[2] / "app" / "stripewise" / "gui"
MAX_TABS = 400


def tab_round(table: QTableView, qtbot: Any, key: Qt.Key = Qt.Key.Key_Tab) -> list[QWidget]:
    """Focus on the table's first cell, then Tab (or Shift+Tab) until the focus is back in the
    table: what the key visits on the way, in order (nothing when the table keeps it)."""
    window = table.window()
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5_000)
    table.setFocus(Qt.FocusReason.ShortcutFocusReason)
    table.setCurrentIndex(table.model().index(0, 0))
    qtbot.waitUntil(lambda: QApplication.focusWidget() is table, timeout=5_000)
    visited: list[QWidget] = []
    for _ in range(MAX_TABS):
        focused = QApplication.focusWidget()
        assert focused is not None
        qtbot.keyClick(focused, key)
        now = QApplication.focusWidget()
        if now is table or now is None:
            break
        visited.append(now)
    return visited


def named(widgets: list[QWidget]) -> set[str]:
    """The buttons' texts (without their Alt+letter mark) and the combo boxes' names."""
    names = set()
    for widget in widgets:
        if isinstance(widget, QAbstractButton):
            names.add(widget.text().replace("&", ""))
        elif isinstance(widget, QComboBox):
            names.add(widget.accessibleName())
    return names


def assert_tab_reaches(table: QTableView, qtbot: Any, wanted: set[str]) -> None:
    for key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
        missed = wanted - named(tab_round(table, qtbot, key))
        assert not missed, f"{key.name} from {table.accessibleName() or table} misses {missed}"


def assert_arrows_move_between_cells(table: QTableView, qtbot: Any) -> None:
    table.setCurrentIndex(table.model().index(0, 0))
    qtbot.keyClick(table, Qt.Key.Key_Right)
    qtbot.keyClick(table, Qt.Key.Key_Down)
    assert (table.currentIndex().row(), table.currentIndex().column()) == (1, 1)


def test_tab_leaves_the_compare_window_s_tables_for_its_buttons(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    compare = compared_from_history(make_window, qtbot, store_sweep(db_url))
    wanted = {
        "Baseline", "Export CSV...", "Export JSON...", "HTML Report...", "Save Plot...", "Close"
    }  # fmt: skip
    assert_tab_reaches(compare.results, qtbot, wanted)
    assert_arrows_move_between_cells(compare.results, qtbot)
    compare.tabs.setCurrentIndex(compare.sweep_index)
    assert compare.sweep_table.rowCount() > 1
    assert_tab_reaches(compare.sweep_table, qtbot, wanted)
    compare.close()


def test_tab_leaves_the_planner_s_compare_plans_for_its_buttons(qtbot: Any) -> None:
    dialog = CompareDialog([("a", Plan()), ("b", Plan(name="x"))])
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert_tab_reaches(dialog.table, qtbot, {"Add Plan File…", "Close"})
    assert_arrows_move_between_cells(dialog.table, qtbot)
    dialog.close()


def test_tab_leaves_the_kept_experiments_and_their_comparison(
    make_window: WindowFactory, kept_url: str, qtbot: Any
) -> None:
    _page, kept = kept_view(make_window, kept_url, qtbot)
    assert_tab_reaches(kept.table, qtbot, {"Export…", "Delete"})  # Compare takes two
    kept.select(3, 1)
    kept.compare_button.click()
    qtbot.waitUntil(lambda: bool(kept.dialogs) and kept.dialogs[-1].isVisible(), timeout=10_000)
    dialog = kept.dialogs[-1]
    assert isinstance(dialog, KeptComparisonDialog)
    assert_tab_reaches(dialog.table, qtbot, {"Close"})
    assert_arrows_move_between_cells(dialog.table, qtbot)
    dialog.close()


def test_tab_leaves_the_history_list_and_no_table_of_the_window_keeps_it(
    make_window: WindowFactory, seeded_db_url: str, qtbot: Any
) -> None:
    page = history_page(make_window, seeded_db_url)
    window = page.window()
    assert_tab_reaches(page.table, qtbot, {"Import...", "Export...", "Refresh"})
    assert_arrows_move_between_cells(page.table, qtbot)
    views = [v for v in window.findChildren(QAbstractItemView) if not isinstance(v, QHeaderView)]
    kept_by = [type(v).__name__ for v in views if v.tabKeyNavigation()]
    assert not kept_by, f"Tab stays inside {kept_by}"


def trapping_views() -> set[str]:
    """Qt's item views that take Tab for moving between cells unless told not to."""
    found = set()
    for name in dir(QtWidgets):
        kind = getattr(QtWidgets, name)
        if (
            isinstance(kind, type)
            and issubclass(kind, QAbstractItemView)
            and kind not in (QAbstractItemView, QHeaderView)
            and kind().tabKeyNavigation()
        ):
            found.add(name)
    return found


def test_every_table_of_the_gui_lets_tab_leave(qapp: QApplication) -> None:
    trapping = trapping_views()
    assert {"QTableView", "QTableWidget"} <= trapping  # what the check is for
    built = []
    for path in sorted(GUI.glob("*.py")):
        if path.name == "tables.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                used = [node.func]
            elif isinstance(node, ast.ClassDef):
                used = list(node.bases)
            else:
                continue
            for name in used:
                if isinstance(name, ast.Attribute | ast.Name):
                    spelled = name.attr if isinstance(name, ast.Attribute) else name.id
                    if spelled in trapping:
                        built.append(f"{path.name}:{node.lineno} {spelled}")
    assert not built, f"tables Tab cannot leave (use stripewise.gui.tables): {built}"

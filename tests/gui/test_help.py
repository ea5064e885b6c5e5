"""Help: F1 opens the manual page of the page on show, the pages ship inside the package, and
every dialog says in one line what it will do before it does it (issue 16, point 10)."""

from __future__ import annotations

import ast
import fnmatch
import re
import tomllib
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QDialog,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMessageBox,
    QWidget,
)

from stripewise.gui import MANUAL_PAGES, VIEW_NAMES
from stripewise.gui.help_window import HelpWindow
from stripewise.gui.main_window import MainWindow
from stripewise.gui.planner_commands import SerialsDialog
from stripewise.gui.planner_dialogs import SpreadDialog
from stripewise.inventory.snapshot import dumps
from stripewise.model.placement import Swap
from stripewise.protocol.tuning_replies import PersistFile, PersistReply
from tests.fixtures.model_inventory import machine
from tests.gui.conftest import WindowFactory

ROOT = Path(__file__).resolve().parents[2]
GUI = ROOT / "app" / "stripewise" / "gui"
EXAMPLE_PLAN = ROOT / "docs" / "examples" / "x4500-raid6.toml"
MANUAL_PACKAGE = "stripewise.resources.manual"
MAX_MANUAL_LINES = 60  # "1-2 screens each"


# --- the manual window -------------------------------------------------------------------------
def headings(help_window: HelpWindow, level: int) -> list[str]:
    """The rendered document's headings of one level, in order."""
    found = []
    block = help_window.browser.document().begin()
    while block.isValid():
        if block.blockFormat().headingLevel() == level:
            found.append(block.text())
        block = block.next()
    return found


def page_title_of(window: MainWindow, view: str) -> str:
    """The title the page itself shows at its top (gui/pages.py names it "<title> page")."""
    page = window.page_widgets[view]
    titles = [
        label.text()
        for label in page.findChildren(QLabel)
        if label.accessibleName() == f"{label.text()} page"
    ]
    assert len(titles) == 1, f"{view}: page titles found: {titles}"
    return titles[0]


def test_f1_on_each_page_opens_its_manual_page_and_esc_closes_it(
    main_window: MainWindow, qtbot: Any
) -> None:
    for view in VIEW_NAMES:
        main_window.show_view(view)
        main_window.activateWindow()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is main_window, timeout=5_000)
        qtbot.keyClick(main_window, Qt.Key.Key_F1)
        help_window = main_window.help_window
        assert help_window is not None, f"F1 on {view} opened nothing"
        qtbot.waitUntil(help_window.isVisible, timeout=5_000)
        title = page_title_of(main_window, view)
        assert headings(help_window, 1) == [title], f"F1 on {view}"
        assert help_window.windowTitle().startswith(title)
        assert help_window.page == view
        assert not help_window.isModal() and QApplication.activeModalWidget() is None
        # the page explained stays usable beside it
        assert main_window.isEnabled() and main_window.isVisible()

        qtbot.waitUntil(lambda w=help_window: QApplication.activeWindow() is w, timeout=5_000)
        qtbot.keyClick(help_window.browser, Qt.Key.Key_Escape)
        assert not help_window.isVisible(), f"Esc left the {view} manual page open"


def test_help_menu_has_the_entry_with_its_shortcut(main_window: MainWindow) -> None:
    menus = {a.text(): a.menu() for a in main_window.menuBar().actions()}
    entries = menus["&Help"].actions()
    assert main_window.help_action in entries
    assert main_window.help_action.text().replace("&", "") == "Stripewise Help"
    assert main_window.help_action.shortcut().toString() == "F1"
    main_window.show_view("tuning")
    main_window.help_action.trigger()
    assert main_window.help_window is not None and main_window.help_window.page == "tuning"


def link_positions(help_window: HelpWindow) -> dict[str, int]:
    """The page's links: each href and a position inside its text."""
    anchors: dict[str, int] = {}
    block = help_window.browser.document().begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            href = fragment.charFormat().anchorHref()
            if fragment.isValid() and href:
                anchors.setdefault(href, fragment.position() + 1)
            fragments += 1
        block = block.next()
    return anchors


def click_link(help_window: HelpWindow, href: str, qtbot: Any) -> None:
    browser = help_window.browser
    cursor = QTextCursor(browser.document())
    cursor.setPosition(link_positions(help_window)[href])
    qtbot.mouseClick(
        browser.viewport(), Qt.MouseButton.LeftButton, pos=browser.cursorRect(cursor).center()
    )


def test_links_between_manual_pages_are_followed(main_window: MainWindow, qtbot: Any) -> None:
    help_window = main_window.show_help("hardware")
    qtbot.waitExposed(help_window)
    anchors = link_positions(help_window)
    others = {f"{view}.md" for view in VIEW_NAMES if view != "hardware"}
    assert others <= set(anchors), f"links on the Hardware page: {sorted(anchors)}"

    click_link(help_window, "planner.md", qtbot)
    qtbot.waitUntil(lambda: help_window.page == "planner", timeout=5_000)
    assert headings(help_window, 1) == ["Planner"]
    help_window.browser.backward()
    assert help_window.page == "hardware" and headings(help_window, 1) == ["Hardware"]


def test_the_keyboard_page_is_linked_from_every_page_and_the_help_menu(
    main_window: MainWindow, qtbot: Any
) -> None:
    """The README sends console users to F1 for the keys: every page's links line and the
    Help menu lead to them."""
    help_window = main_window.show_help("history")
    qtbot.waitExposed(help_window)
    for view in VIEW_NAMES:
        help_window.show_page(view)
        assert "keyboard.md" in link_positions(help_window), f"no Keyboard link on {view}"
    click_link(help_window, "keyboard.md", qtbot)
    qtbot.waitUntil(lambda: help_window.page == "keyboard", timeout=5_000)
    assert headings(help_window, 1) == ["Keyboard"]
    assert help_window.windowTitle() == "Keyboard: Stripewise Help"
    # from it, every other page is a link away
    assert {f"{view}.md" for view in VIEW_NAMES} <= set(link_positions(help_window))
    help_window.close()

    menus = {a.text(): a.menu() for a in main_window.menuBar().actions()}
    entries = menus["&Help"].actions()
    keys = [a for a in entries if a.text().replace("&", "") == "Keyboard Shortcuts"]
    assert len(keys) == 1, [a.text() for a in entries]
    main_window.show_view("tuning")
    keys[0].trigger()
    qtbot.waitUntil(help_window.isVisible, timeout=5_000)
    assert help_window.page == "keyboard" and headings(help_window, 1) == ["Keyboard"]
    main_window.help_action.trigger()  # F1 goes back to the page on show
    assert help_window.page == "tuning"


# --- shipped with the package ------------------------------------------------------------------
def manual_files() -> dict[str, str]:
    folder = resources.files("stripewise.resources").joinpath("manual")
    return {item.name: item.read_text(encoding="utf-8") for item in folder.iterdir()}


def test_manual_pages_are_found_through_importlib_resources() -> None:
    pages = manual_files()
    assert {f"{page}.md" for page in MANUAL_PAGES} <= set(pages)
    for page in MANUAL_PAGES:
        text = pages[f"{page}.md"]
        assert text.startswith(f"# {page.capitalize()}\n"), f"{page}.md opens with its title"
        assert len(text.splitlines()) <= MAX_MANUAL_LINES, f"{page}.md: keep it to two screens"
        for target in re.findall(r"\]\(([^)]+)\)", text):
            assert target in pages, f"{page}.md links to {target}, which is not shipped"


def test_package_data_ships_the_manual_pages() -> None:
    """An installed wheel holds only what setuptools finds as a package and package-data
    matches: both are checked here, with setuptools' own discovery."""
    from setuptools import find_namespace_packages

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]
    found = config["packages"]["find"]
    packages = {
        package
        for where in found["where"]
        for package in find_namespace_packages(where=str(ROOT / where), include=found["include"])
    }
    assert MANUAL_PACKAGE in packages
    patterns = [
        pattern
        for package, globs in config["package-data"].items()
        if package in ("*", MANUAL_PACKAGE)
        for pattern in globs
    ]
    for name in manual_files():
        assert any(fnmatch.fnmatch(name, p) for p in patterns), f"{name} would not ship"


# --- every dialog says what it will do -----------------------------------------------------------
def first_line(widget: QWidget) -> str:
    """What a dialog says before it acts: a file chooser's caption, an input box's first label
    line, a message box's question and consequence, another dialog's top label."""
    if isinstance(widget, QFileDialog):
        return widget.windowTitle()
    if isinstance(widget, QInputDialog):
        return widget.labelText().splitlines()[0]
    if isinstance(widget, QMessageBox):
        return f"{widget.text()} {widget.informativeText()}".strip()
    layout = widget.layout()
    top = layout.itemAt(0).widget() if layout is not None and layout.count() else None
    assert isinstance(top, QLabel), f"{type(widget).__name__} does not open with a line"
    return top.text()


def said_by(
    qtbot: Any, open_it: Callable[[], object], then: Callable[[QWidget], None] | None = None
) -> str:
    """Open a modal dialog with `open_it`, read its line, then run `then` on it (by default:
    cancel it, so nothing is done)."""
    seen: list[str] = []
    polls = [0]

    def poll() -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None or not dialog.isVisible():
            polls[0] += 1
            if polls[0] < 500:
                QTimer.singleShot(20, poll)
            return
        try:
            seen.append(first_line(dialog))
            if then is not None:
                then(dialog)
        finally:  # a failed check must not leave the test waiting on a modal dialog
            if isinstance(dialog, QDialog) and dialog.isVisible():
                dialog.reject()

    QTimer.singleShot(20, poll)
    open_it()
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    return seen[0]


def test_history_dialogs_say_what_they_do(
    make_window: WindowFactory, seeded_db_url: str, qtbot: Any
) -> None:
    window = make_window(seeded_db_url, view="history")
    page = window.page_widgets["history"]
    qtbot.waitUntil(lambda: page.model.rowCount() == 3, timeout=10_000)
    actions = page.actions_by_name
    before = [(r.id, r.name, r.tags, r.notes) for r in page.model.runs]

    page.select_runs([2])
    assert (
        said_by(qtbot, actions["Rename..."].trigger)
        == "Renames run 2 in the history; its results are unchanged."
    )
    assert (
        said_by(qtbot, actions["Notes..."].trigger)
        == "Saves these notes with run 2 in the history; its results are unchanged."
    )
    assert (
        said_by(qtbot, actions["Tags..."].trigger)
        == "Sets the tags of run 2; its results are unchanged."
    )
    page.select_runs([3, 1])
    assert (
        said_by(qtbot, actions["Tags..."].trigger)
        == "Sets the tags runs 3 and 1 share; their other tags and results are unchanged."
    )
    deleting = said_by(qtbot, actions["Delete..."].trigger)
    assert deleting.startswith("Delete 2 runs (3, 1)?")
    assert "Undo or Restore brings them back" in deleting
    assert "after 30 days they are deleted for good, with their samples" in deleting
    assert (
        said_by(qtbot, lambda: window.export_runs([3, 1]))
        == "Export: runs 3 and 1 as a comparison, in an HTML report, CSV or JSON"
    )
    assert (
        said_by(qtbot, lambda: window.export_runs([2]))
        == "Export: run 2 as an HTML report, CSV of its results or JSON with its samples"
    )
    assert (
        said_by(qtbot, window.import_results)
        == "Import Results: bonnie++, fio or iozone output as new runs; the file is only read"
    )
    after = [(r.id, r.name, r.tags, r.notes) for r in page.model.runs]
    assert after == before, "every dialog was cancelled: nothing changed"


def test_comparison_save_dialogs_say_what_they_write(
    make_window: WindowFactory, seeded_db_url: str, qtbot: Any
) -> None:
    window = make_window(seeded_db_url, view="history")
    compared = window.compare_runs([1, 2])
    qtbot.waitUntil(lambda: compared.save_buttons["csv"].isEnabled(), timeout=10_000)
    expected = {
        "csv": "Save Comparison: its figures as CSV",
        "json": "Save Comparison: its figures as JSON",
        "html": "Save Comparison: an HTML report with its charts",
        "plot": "Save Plot: the plot on show as a PNG image or SVG drawing",
    }
    for key, line in expected.items():
        assert said_by(qtbot, compared.save_buttons[key].click) == line
    compared.close()


def test_hardware_dialogs_say_what_they_do(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any
) -> None:
    snapshot = tmp_path / "x4500.json"
    snapshot.write_text(dumps(machine()), encoding="utf-8")
    window = make_window(view="hardware", inventory=snapshot)
    page = window.page_widgets["hardware"]
    assert (
        said_by(qtbot, page.open_file.click)
        == "Open Inventory: shows a snapshot or another server's dump; the file is only read"
    )
    assert (
        said_by(qtbot, page.save.click)
        == "Save Inventory Snapshot: what is on show, as JSON to open later or elsewhere"
    )
    assert page.map.select_key("c0:2")
    assert (
        said_by(qtbot, page.details.rename.click)
        == "Gives ata port 3 your own name, kept per host in the history; the disk is untouched."
    )


def test_planner_dialogs_say_what_they_do(make_window: WindowFactory, qtbot: Any) -> None:
    window = make_window(view="planner")
    page = window.page_widgets["planner"]
    with qtbot.waitSignal(page.planner.planChanged, timeout=10_000):
        page.planner.load(EXAMPLE_PLAN)
    plan = page.planner.plan
    assert (
        said_by(qtbot, page.open_plan.click)
        == "Open Plan: replaces the plan on show (save that first to keep it)"
    )
    assert said_by(qtbot, page.save_plan.click) == "Save Plan: the plan on show as a TOML file"

    inner: list[str] = []
    assert (
        said_by(
            qtbot,
            page.compare.click,
            lambda dialog: inner.append(said_by(qtbot, dialog.add_file.click)),
        )
        == "Sets the plans side by side; no plan is changed."
    )
    assert inner == ["Add Plan to Compare: the file is only read"]

    inner.clear()
    assert said_by(
        qtbot,
        page.cards["data"].commands_button.click,
        lambda dialog: inner.append(said_by(qtbot, dialog.save.click)),
    ) == (
        "The commands that build data; nothing runs until you run them or press "
        "Create on This Machine."
    )
    assert inner == ["Save Script: the commands for data as a shell script; nothing runs"]

    spread = SpreadDialog("data", (Swap("sdas", "sdb", "another controller"),), 40, 80, plan)
    assert first_line(spread) == (
        "Apply Swaps changes the plan only; no disk on this machine is touched."
    )
    array = plan.array("data")
    assert array is not None
    serials = SerialsDialog(plan, array)
    assert first_line(serials).startswith("Creating data erases every listed disk.")
    for dialog in (spread, serials):
        dialog.deleteLater()

    # Add Hardware says its own line (gui/planner_catalog.py)
    assert said_by(qtbot, page.add_hardware.click).startswith("Adds ")


def test_benchmark_dialogs_say_what_they_do(make_window: WindowFactory, qtbot: Any) -> None:
    window = make_window(view="benchmark")
    page = window.page_widgets["benchmark"]
    browse = next(
        b
        for b in page.form.findChildren(QAbstractButton)
        if b.accessibleName() == "Choose a directory"
    )
    assert (
        said_by(qtbot, browse.click)
        == "Benchmark in Directory: a test file is written there and removed afterwards"
    )
    assert (
        said_by(qtbot, page.save_plot_button.click)
        == "Save Plot: the throughput, IOPS and CPU plots as a PNG image or SVG drawing"
    )


def test_tuning_dialogs_say_what_they_do(make_window: WindowFactory, qtbot: Any) -> None:
    window = make_window(view="tuning")
    page = window.page_widgets["tuning"]
    assert said_by(qtbot, page.ask_ab) == (
        "Applies the values, benchmarks with and without them in turn, then reverts them; "
        "each run goes to the History."
    )
    # the helper's replies to `tuning.persist` preview and show, as it sends them
    rules = "/etc/udev/rules.d/90-stripewise.rules"
    shown = PersistReply(files=(PersistFile("udev", rules, 'ACTION=="add|change"\n'),))
    for ask, line in (
        (
            lambda: page.persistence._confirm_write((), shown),
            "Writes these files, so the values are set again at boot; the values in force now "
            "are not changed:",
        ),
        (
            lambda: page.persistence._confirm_remove(shown),
            "Removes these files, so the values are no longer set at boot; what is in force now "
            "stays until a restart or Revert:",
        ),
    ):
        ask()
        box = page.persistence.box
        assert box is not None and box.isVisible()
        assert box.text().splitlines()[:2] == [line, f"  {rules}"]
        box.button(QMessageBox.StandardButton.Cancel).click()
        assert page.persistence.box is None


# --- and none is left out ----------------------------------------------------------------------
VIEWERS = {"AboutDialog", "CompareWindow", "KeptComparisonDialog"}  # they show, confirm nothing
OPENED_ABOVE = {
    "SpreadDialog",
    "CommandsDialog",
    "CompareDialog",
    "SerialsDialog",
    "ABDialog",
    "CatalogDialog",
    "HostGroupsDialog",  # its line is checked in test_host_groups_dialog.py
    "BayLayoutDialog",  # its line is checked in test_bay_view.py
    "ScalingDialog",  # its line is checked in test_scaling_dialog.py
}
CAPTION_ARGUMENT = {"QFileDialog": (1, "caption"), "QInputDialog": (2, "label")}


def gui_modules() -> list[tuple[str, ast.Module]]:
    return [(p.name, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(GUI.glob("*.py"))]


def test_every_dialog_class_is_one_of_those_checked_above() -> None:
    dialogs = {
        node.name
        for _name, tree in gui_modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(isinstance(b, ast.Name) and b.id == "QDialog" for b in node.bases)
    }
    assert dialogs - VIEWERS == OPENED_ABOVE, "a new dialog needs its one line, and a test here"


@pytest.mark.parametrize("kind", sorted(CAPTION_ARGUMENT))
def test_every_file_chooser_and_input_box_takes_its_line_from_help_dialogs(kind: str) -> None:
    """A bare string literal as caption or label is how a dialog says nothing of what it will
    do; the lines are kept in gui/help_dialogs.py."""
    position, keyword = CAPTION_ARGUMENT[kind]
    calls = 0
    for name, tree in gui_modules():
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == kind
                and node.func.attr.startswith("get")
            ):
                continue
            calls += 1
            given = [k.value for k in node.keywords if k.arg == keyword]
            argument = given[0] if given else node.args[position]
            assert not isinstance(argument, ast.Constant), (
                f"{name}:{node.lineno}: {kind}.{node.func.attr} says only {argument.value!r}"
            )
    assert calls >= 3, f"{kind}: the dialogs were not found"

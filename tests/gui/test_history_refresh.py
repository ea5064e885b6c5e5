"""The History page sees runs saved elsewhere: another process (the real CLI) imports into the
database the window has open, and the page and the status bar list it by themselves; an edit
made elsewhere (a rename) appears with Refresh (F5). Before, the page kept its first listing
until the program was started again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from stripewise.gui.history_page import HistoryPage
from tests.gui.conftest import WindowFactory
from tests.gui.test_history_page import cell, listed_ids

FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports"


def cli(url: str, *args: str) -> None:
    """The real `stripewise` in a process of its own, as an admin's shell runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "stripewise", "--db", url, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_a_run_imported_from_a_shell_appears_by_itself(
    make_window: WindowFactory, seeded_db_url: str, qtbot: Any
) -> None:
    window = make_window(url=seeded_db_url, view="history")
    page = window.page_widgets["history"]
    assert isinstance(page, HistoryPage)
    assert listed_ids(page) == [3, 2, 1]
    assert window.database_label.text() == "History: 3 runs"
    cli(seeded_db_url, "import", str(FIXTURES / "bonnie103.csv"))
    # no key pressed, no page switched: the window looks for new runs every few seconds
    qtbot.waitUntil(lambda: len(listed_ids(page)) > 3, timeout=15_000)
    assert listed_ids(page)[0] > 3, "the new run is listed first, newest first"
    assert window.database_label.text() == f"History: {len(listed_ids(page))} runs"


def test_f5_reads_edits_made_elsewhere(
    make_window: WindowFactory, seeded_db_url: str, qtbot: Any
) -> None:
    window = make_window(url=seeded_db_url, view="history")
    page = window.page_widgets["history"]
    assert isinstance(page, HistoryPage)
    cli(seeded_db_url, "history", "rename", "2", "renamed in a shell")
    assert window.refresh_action.shortcut().toString() == "F5"
    assert window.refresh_action.shortcut()[0].key() == Qt.Key.Key_F5
    window.refresh_action.trigger()
    qtbot.waitUntil(lambda: cell(page, 1, "Name") == "renamed in a shell", timeout=10_000)
    # the page's own button does the same
    cli(seeded_db_url, "history", "rename", "3", "and again")
    page.refresh_button.click()
    qtbot.waitUntil(lambda: cell(page, 0, "Name") == "and again", timeout=10_000)


def test_an_idle_window_lists_nothing_again(
    make_window: WindowFactory, seeded_db_url: str, qtbot: Any
) -> None:
    """Polling is cheap: with nothing written, no listing is read again, also when the spool
    file stays in place (emptied by a sync: every `bench --save` leaves one)."""
    from stripewise.history.location import spool_file

    spool = spool_file(seeded_db_url)
    spool.parent.mkdir(parents=True, exist_ok=True)
    spool.touch()
    window = make_window(url=seeded_db_url, view="history")
    history = window.history
    loads = []
    history.runsLoaded.connect(loads.append)
    for _poll in range(3):
        history.check_for_changes()
        qtbot.wait(200)
    assert loads == []

"""How gui/app.py goes on after the window's first frame: the modules and the history off the GUI
thread, then the services, each page and the loading one per turn of the event loop, in order."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QThreadPool, QTimer

from stripewise.gui import app as gui_app
from stripewise.gui.main_window import EARLY_VIEWS, PLAIN_VIEWS, MainWindow, WindowServices


def test_after_the_first_frame_one_step_a_turn_in_order(
    qtbot, seeded_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stripewise.services import helper_client

    real_helper = helper_client.HelperClient
    monkeypatch.setattr(  # its journal in the test's folder, never /var/lib/stripewise
        helper_client,
        "HelperClient",
        lambda: real_helper(options=["--state-dir", str(tmp_path / "helper-state")]),
    )
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings, initial_view="planner")
    window.show()
    qtbot.waitExposed(window)
    turns = [0]  # a zero timer's ticks: one per turn of the event loop
    ticker = QTimer(window)
    ticker.timeout.connect(lambda: turns.__setitem__(0, turns[0] + 1))
    ticker.start(0)
    steps: list[tuple[str, int]] = []
    attach, build_pages, start_loading = window.attach, window.build_pages, window.start_loading
    made_with_the_services: list[set[str]] = []

    def record_attach(services: WindowServices) -> None:
        steps.append(("attach", turns[0]))
        attach(services)
        made_with_the_services.append(set(window.built))

    def record_build(names: list[str]) -> None:
        steps.append((",".join(names), turns[0]))
        build_pages(names)

    def record_loading() -> None:
        steps.append(("loading", turns[0]))
        start_loading()

    monkeypatch.setattr(window, "attach", record_attach)
    monkeypatch.setattr(window, "build_pages", record_build)
    monkeypatch.setattr(window, "start_loading", record_loading)
    window.refresh_action.trigger()  # F5 before the history is open: run once it is
    args = argparse.Namespace(db=seeded_db_url, inventory=None)
    start = gui_app._Start(window, args, interactive=False)
    try:
        start.open()
        assert not window.attached  # the history opens off the GUI thread
        qtbot.waitUntil(lambda: window.attached, timeout=20_000)
        assert made_with_the_services == [{"planner"}]  # the page on show
        window.history.runsLoaded.connect(lambda _runs: steps.append(("listed", turns[0])))
        qtbot.waitUntil(lambda: set(PLAIN_VIEWS) <= window.built, timeout=20_000)
        qtbot.waitUntil(lambda: window.is_loaded, timeout=20_000)
        names = [name for name, _turn in steps]
        later = [name for name in PLAIN_VIEWS if name not in EARLY_VIEWS]
        made_names = [name for name in names if name != "listed"]
        assert made_names == ["attach", *EARLY_VIEWS, "loading", *later]
        assert names.count("listed") == 2  # F5's listing and the loading's
        last_listed = len(names) - 1 - names[::-1].index("listed")
        assert names.index("loading") < last_listed < names.index("history")
        made = [turn for name, turn in steps if name != "listed"]
        assert made == sorted(set(made)), f"two steps in one turn: {steps}"
        history_page = window.page_widgets["history"]
        assert history_page.model.rowCount() == 3  # type: ignore[attr-defined]
        assert window.database_label.text() == "History: 3 runs"
        assert start.history is window.history and not start.refused
    finally:
        ticker.stop()
        window.close()
        window.deleteLater()
        assert QThreadPool.globalInstance().waitForDone(10_000)
        if start.history is not None:
            start.history.close()


def test_a_history_that_cannot_open_closes_the_window(qtbot, tmp_path: Path) -> None:
    bad = tmp_path / "history.db"
    bad.write_bytes(b"garbage" * 1000)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings)
    window.show()
    qtbot.waitExposed(window)
    start = gui_app._Start(window, argparse.Namespace(db=str(bad), inventory=None), False)
    try:
        start.open()
        qtbot.waitUntil(lambda: start.refused, timeout=20_000)
        assert not window.isVisible() and not window.attached
        assert bad.read_bytes() == b"garbage" * 1000
    finally:
        window.close()
        window.deleteLater()
        assert QThreadPool.globalInstance().waitForDone(10_000)


MAKE_THE_PAGES = """
import sys
from PySide6.QtCore import QSettings
from stripewise.gui.app import create_application, import_background_modules
from stripewise.gui.main_window import PLAIN_VIEWS, MainWindow, WindowServices
from stripewise.services import history as history_service

app = create_application()
folder = sys.argv[1]
window = MainWindow(QSettings(folder + "/settings.ini", QSettings.Format.IniFormat))
import_background_modules()
opened = []
history_service.open_in_background(
    "sqlite:///" + folder + "/history.db", opened.append, lambda exc: opened.append(exc)
)
while not opened:
    app.processEvents()
history = opened[0]
before = set(sys.modules)
from stripewise.services.hardware import HardwareService
from stripewise.services.helper_client import HelperClient
from stripewise.services.system_info import SystemInfoService

helper = HelperClient(options=["--state-dir", folder + "/helper-state"])
services = WindowServices(history, SystemInfoService(), HardwareService(history), helper)
window.attach(services)
window.build_pages(PLAIN_VIEWS)
print(" ".join(sorted(set(sys.modules) - before)))
window.close()
history.close()
"""
# what the GUI thread must not import as it makes the services and pages: gui/app.py's
# BACKGROUND_IMPORTS has loaded it on a background thread before
HEAVY = ("pyqtgraph", "numpy", "sqlalchemy", "alembic", "pyudev", "stripewise.history",
         "stripewise.inventory", "stripewise.services", "stripewise.gui")  # fmt: skip


def test_the_pages_and_services_are_made_without_importing_anything_heavy(tmp_path: Path) -> None:
    """In a fresh interpreter: after the background imports, making the services and every
    page made at start imports none of the heavy modules on the GUI thread."""
    done = subprocess.run(
        [sys.executable, "-c", MAKE_THE_PAGES, str(tmp_path)],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    imported = done.stdout.split()
    heavy = [name for name in imported if name.startswith(HEAVY)]
    assert heavy == [], f"imported while the pages were made: {heavy}"

"""How gui/app.py goes on after the window's first frame: the modules and the history off the GUI
thread, then the services, each page and the loading one per turn of the event loop, in order."""

from __future__ import annotations

import argparse
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

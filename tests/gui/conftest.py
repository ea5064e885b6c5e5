"""The real main window, with a leak check in the napari spirit."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QThreadPool
from PySide6.QtWidgets import QApplication

from stripewise.gui.main_window import MainWindow, WindowServices
from stripewise.services.hardware import HardwareService
from stripewise.services.helper_client import HelperClient
from stripewise.services.history import HistoryService
from stripewise.services.system_info import SystemInfoService

WindowFactory = Callable[..., MainWindow]


@pytest.fixture
def settings_path(tmp_path: Path) -> Path:
    return tmp_path / "settings.ini"


@pytest.fixture
def make_window(qtbot, db_url: str, settings_path: Path, tmp_path: Path) -> Iterator[WindowFactory]:
    """Builds loaded windows; fails the test if windows or worker threads outlive it.
    Their helper keeps its tuning journal in the test's folder, never /var/lib/stripewise."""
    before = set(QApplication.topLevelWidgets())
    opened: list[tuple[MainWindow, HistoryService]] = []

    def factory(
        url: str | None = None,
        view: str | None = None,
        load: bool = True,
        inventory: Path | None = None,
        helper_options: tuple[str, ...] = (),
    ) -> MainWindow:
        history = HistoryService.open(url or db_url)
        settings = QSettings(str(settings_path), QSettings.Format.IniFormat)
        services = WindowServices(
            history,
            SystemInfoService(),
            hardware=HardwareService(history),
            helper=HelperClient(
                options=["--state-dir", str(tmp_path / "helper-state"), *helper_options]
            ),
            inventory_file=inventory,
        )
        window = MainWindow(settings, initial_view=view, services=services)
        opened.append((window, history))
        window.show()
        qtbot.waitExposed(window)
        if load:
            with qtbot.waitSignal(window.loaded, timeout=20_000):
                window.start_loading()
        return window

    yield factory
    for window, history in opened:
        window.close()
        window.deleteLater()
        history.close()
    assert QThreadPool.globalInstance().waitForDone(10_000), "background tasks still running"
    QApplication.processEvents()
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    leaked = [w for w in QApplication.topLevelWidgets() if w not in before and w.isVisible()]
    assert not leaked, f"widgets left open: {leaked}"


@pytest.fixture
def main_window(make_window: WindowFactory) -> MainWindow:
    return make_window()

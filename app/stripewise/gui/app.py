"""Start the GUI: application object, theme, history, main window; also --screenshot mode."""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QSettings, QTimer
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QApplication, QMessageBox

from stripewise import APP_ID, APP_NAME
from stripewise.gui.main_window import MainWindow
from stripewise.gui.theme import ThemeController
from stripewise.resources import resource
from stripewise.services import history as history_service
from stripewise.services.hardware import HardwareService
from stripewise.services.helper_client import HelperClient
from stripewise.services.system_info import SystemInfoService
from stripewise.services.tasks import wait_for_background_tasks

EXIT_USAGE = 2
SCREENSHOT_TIMEOUT_MS = 30_000


def app_icon() -> QIcon:
    svg = resource("icons", f"{APP_ID}.svg").read_bytes()
    pixmap = QPixmap()
    pixmap.loadFromData(svg, "SVG")
    return QIcon.fromTheme(APP_ID, QIcon(pixmap))


def create_application(argv: list[str] | None = None) -> QApplication:
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        return existing
    app = QApplication(argv or sys.argv[:1])
    app.setApplicationName("stripewise")
    app.setApplicationDisplayName(APP_NAME)
    app.setOrganizationName("stripewise")
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())
    return app


def user_settings() -> QSettings:
    """~/.config/stripewise/stripewise.ini (XDG_CONFIG_HOME honoured)."""
    return QSettings(
        QSettings.Format.IniFormat, QSettings.Scope.UserScope, "stripewise", "stripewise"
    )


def _error(message: str) -> None:
    print(f"stripewise: error: {message}", file=sys.stderr)


def open_history(cli_url: str | None, interactive: bool) -> history_service.HistoryService | None:
    """Open the database, explaining failures; offers to move a corrupt SQLite file aside."""
    while True:
        try:
            return history_service.HistoryService.open(history_service.resolve_url(cli_url))
        except history_service.CorruptDatabaseError as exc:
            _error(str(exc))
            if not interactive or not _offer_move_aside(exc):
                return None
        except history_service.DatabaseError as exc:
            _error(str(exc))
            if interactive:
                QMessageBox.critical(None, "Stripewise cannot open its history", str(exc))
            return None


def _offer_move_aside(exc: history_service.CorruptDatabaseError) -> bool:
    box = QMessageBox(QMessageBox.Icon.Critical, "History database unreadable", str(exc))
    box.setInformativeText(
        "Stripewise can rename the file (nothing is deleted) and start with an empty history."
    )
    move = box.addButton("Move Aside and Start Fresh", QMessageBox.ButtonRole.DestructiveRole)
    box.addButton(QMessageBox.StandardButton.Close)
    box.exec()
    if box.clickedButton() is not move:
        return False
    moved = history_service.move_aside(exc.path)
    QMessageBox.information(None, "History moved aside", f"The old file is kept as {moved}.")
    return True


def run_gui(args: argparse.Namespace, full_screen: bool = False) -> int:
    """The window on the platform cli/window.py chose; `full_screen` where the window is all
    there is to see (a console's framebuffer, a --remote VNC screen)."""
    headless = args.screenshot is not None or args.bench_startup
    app = create_application()
    stop = _CloseOnSignals()  # before the window starts any process: they inherit the mask
    _theme = ThemeController(app, args.theme)  # follows the desktop for the whole session
    history = open_history(args.db, interactive=not headless)
    if history is None:
        return EXIT_USAGE
    with tempfile.TemporaryDirectory(prefix="stripewise-") as scratch:
        # Screenshots and bench runs start from default geometry and never touch saved state.
        settings = (
            QSettings(str(Path(scratch) / "headless.ini"), QSettings.Format.IniFormat)
            if headless
            else user_settings()
        )
        window = MainWindow(
            history,
            SystemInfoService(),
            settings,
            initial_view=args.view,
            hardware=HardwareService(history),
            helper=HelperClient(),
            inventory_file=args.inventory,
        )
        if args.window_size is not None:
            window.resize(*args.window_size)
        if args.screenshot is not None:
            outcome = _Screenshot(window, args.screenshot)
        elif args.bench_startup:
            _report_first_frame(window)
        if full_screen:
            # the whole screen by geometry too: Xvnc has no window manager to honour the
            # full-screen state, and a geometry restored from the last session may sit lower
            window.setGeometry(window.screen().geometry())
            window.showFullScreen()
        else:
            window.show()
        window.start_loading()
        stop.attach(window)
        code = app.exec()
        wait_for_background_tasks()
        history.close()
    if args.screenshot is not None:
        return outcome.exit_code
    return code


class _CloseOnSignals:
    """Ctrl+C, SIGTERM or a hang-up (the terminal or ssh session gone) close the window the
    normal way, so its state is saved; one that comes before the window exists closes it as
    soon as it does. `--remote` holds these signals while it starts (cli/remote.py): installed,
    this lets them land.

    Python runs signal handlers only between bytecodes; a short idle timer gives it the chance
    while Qt's event loop is waiting. The close is posted, not done in the handler: a signal
    that lands before the event loop runs would close the window while quit() still does
    nothing, and the loop would then wait forever.
    """

    NUMBERS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self._window: MainWindow | None = None
        self._pending = False
        for number in self.NUMBERS:
            signal.signal(number, self._on_signal)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, self.NUMBERS)

    def attach(self, window: MainWindow) -> None:
        self._window = window
        wake = QTimer(window)
        wake.timeout.connect(lambda: None)
        wake.start(250)
        if self._pending:
            QTimer.singleShot(0, window.close)

    def _on_signal(self, _number: int, _frame: object) -> None:
        if self._window is None:
            self._pending = True
        else:
            QTimer.singleShot(0, self._window.close)


class _Screenshot(QObject):
    """Waits for the window to finish loading, grabs it, writes the PNG and quits."""

    def __init__(self, window: MainWindow, path: Path) -> None:
        super().__init__(window)
        self.window = window
        self.path = path
        self.exit_code = EXIT_USAGE
        window.loaded.connect(lambda: QTimer.singleShot(100, self.grab))
        QTimer.singleShot(SCREENSHOT_TIMEOUT_MS, self._timeout)

    def grab(self) -> None:
        if self.exit_code == 0:
            return
        if self.window.grab().save(str(self.path), "PNG"):
            self.exit_code = 0
        else:
            _error(f"cannot write screenshot {self.path}")
        self.window.close()
        QApplication.quit()

    def _timeout(self) -> None:
        _error("the window did not finish loading within 30 s; screenshot taken anyway")
        self.grab()


class _FirstFrame(QObject):
    """For bench/: prints the CLOCK_MONOTONIC time at which the window was first exposed."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window
        self._done = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            not self._done
            and event.type() == QEvent.Type.Expose
            and watched is self._window.windowHandle()
        ):
            self._done = True
            QTimer.singleShot(0, self._report)
        return False

    def _report(self) -> None:
        print(f"first-frame {time.monotonic():.6f}", flush=True)
        self._window.close()
        QApplication.quit()


def _report_first_frame(window: MainWindow) -> None:
    watcher = _FirstFrame(window)
    app = QApplication.instance()
    assert app is not None
    app.installEventFilter(watcher)

"""Start the GUI: application object, theme, main window, history; also --screenshot mode.

The window's frame is shown first; the history is opened, the services made and the pages built
after its first frame (issue 36): nothing the frame does not draw is imported before it. After
it, the GUI thread never waits long: the services' and pages' modules are imported and the
history opened on a background thread, and the pages made one per turn of the event loop, so
input and repaints are served between them.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import shutil
import signal
import stat
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QBuffer, QEvent, QIODevice, QObject, QSettings, QTimer
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QApplication, QMessageBox

from stripewise import APP_ID, APP_NAME
from stripewise.gui.focus_return import FocusReturn
from stripewise.gui.main_window import EARLY_VIEWS, PLAIN_VIEWS, MainWindow, WindowServices
from stripewise.gui.theme import ThemeController
from stripewise.output_files import OutputFileError, write_output_bytes
from stripewise.resources import resource
from stripewise.services.tasks import run_in_background, wait_for_background_tasks

if TYPE_CHECKING:  # the history (SQLAlchemy, its migrations) loads after the first frame
    from stripewise.services import history as history_service

EXIT_USAGE = 2
SCREENSHOT_TIMEOUT_MS = 30_000
UNEXPOSED_START_MS = 1_000  # a window never exposed (on a hidden workspace) still loads
# What the services and the pages made at start load, imported on a background thread after
# the first frame (imports are thread-safe). None of these modules, nor any they import, makes
# a Qt object in its body (pyqtgraph's are QColor, QPainterPath and QTransform values, safe on
# any thread): widgets, pixmaps and timers are made on the GUI thread, when a page is made.
BACKGROUND_IMPORTS = (
    "stripewise.services.history",  # SQLAlchemy, the migrations
    "stripewise.services.hardware",  # the inventory, pyudev
    "stripewise.services.helper_client",
    "stripewise.services.system_info",
    "stripewise.services.bench_session",
    "stripewise.services.group_bench",
    "stripewise.services.host_groups",
    "stripewise.services.planner",
    "stripewise.services.tuning",
    "stripewise.gui.hardware_page",
    "stripewise.gui.planner_page",
    "stripewise.gui.tuning_page",
    "stripewise.gui.history_page",  # pyqtgraph and numpy, in its run detail
)
# The pages made when first shown, their modules imported once the start is done (checked as
# above), so that a first visit only makes its page: some 40 ms less each
LAZY_PAGE_IMPORTS = ("stripewise.gui.bench_page", "stripewise.gui.experiment_page")


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
    FocusReturn(app)
    return app


def user_settings() -> QSettings:
    """~/.config/stripewise/stripewise.ini (XDG_CONFIG_HOME honoured)."""
    return QSettings(
        QSettings.Format.IniFormat, QSettings.Scope.UserScope, "stripewise", "stripewise"
    )


def _error(message: str) -> None:
    print(f"stripewise: error: {message}", file=sys.stderr)


def import_background_modules(names: Sequence[str] = BACKGROUND_IMPORTS) -> None:
    """Off the GUI thread: `names`, so that making the services and pages imports nothing. The
    cyclic garbage collector waits meanwhile, and what they loaded is frozen out of its passes
    after (as gui/live_heap.py does for a run): the imports make some hundreds of thousands of
    objects, none of them garbage, and the passes they set off walked them all while holding
    the interpreter, the GUI thread's turns too; they took half the imports' time."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        for name in names:
            importlib.import_module(name)
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def open_history(cli_url: str | None, interactive: bool) -> history_service.HistoryService | None:
    """Open the database, explaining failures; offers to move a corrupt SQLite file aside."""
    from stripewise.services import history as history_service

    while True:
        try:
            return history_service.HistoryService.open(history_service.resolve_url(cli_url))
        except history_service.DatabaseError as exc:
            if not _explain_refusal(exc, interactive):
                return None


def _explain_refusal(exc: Exception, interactive: bool) -> bool:
    """Says why the history cannot be opened; True when the user moved a corrupt file aside
    and it may be opened again."""
    from stripewise.services import history as history_service

    _error(str(exc))
    if isinstance(exc, history_service.CorruptDatabaseError):
        return interactive and _offer_move_aside(exc)
    if interactive:
        QMessageBox.critical(None, "Stripewise cannot open its history", str(exc))
    return False


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
    from stripewise.services import history as history_service

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
    with _window_settings(headless) as settings:
        window = MainWindow(settings, initial_view=args.view)
        if args.window_size is not None:
            window.resize(*args.window_size)
        # over VNC (--remote) the history's refusal, said on the terminal that started it with
        # what to do, ends the session (exit 2): a box on the VNC screen would wait for a
        # viewer who may never come
        start = _Start(window, args, interactive=not headless and not args.remote)
        if args.screenshot is not None:
            outcome = _Screenshot(window, args.screenshot)
        # bench/ times the frame alone: it quits at once, loading nothing
        if args.bench_startup:
            _AfterFirstFrame(window, lambda: _report_first_frame(window), unexposed_ms=None)
        else:
            _AfterFirstFrame(window, start.open)
        if full_screen:
            # the whole screen by geometry too: Xvnc has no window manager to honour the
            # full-screen state, and a geometry restored from the last session may sit lower
            window.setGeometry(window.screen().geometry())
            window.showFullScreen()
        else:
            window.show()
        stop.attach(window)
        code = app.exec()
        wait_for_background_tasks()
        if start.history is not None:
            start.history.close()
    if start.refused:
        return EXIT_USAGE
    if args.screenshot is not None:
        return outcome.exit_code
    return code


@contextmanager
def _window_settings(headless: bool) -> Iterator[QSettings]:
    """The user's settings. Screenshots and bench runs start from default geometry and never
    touch saved state: theirs lie in a folder made for them alone (one made for every run was
    left behind by each SIGKILL, as no code of ours runs then)."""
    if not headless:
        yield user_settings()
        return
    _remove_left_behind()
    with tempfile.TemporaryDirectory(prefix=f"{_HEADLESS}{os.getpid()}-") as scratch:
        yield QSettings(str(Path(scratch) / "headless.ini"), QSettings.Format.IniFormat)


_HEADLESS = "stripewise-headless-"  # then the pid of the run that made it


def _remove_left_behind() -> None:
    """The settings folders of headless runs killed with SIGKILL: this user's, whose process
    is gone (each is named for its run's pid)."""
    base = Path(tempfile.gettempdir())
    for folder in base.glob(f"{_HEADLESS}*-*"):
        pid = folder.name.removeprefix(_HEADLESS).partition("-")[0]
        try:
            info = folder.lstat()
            if not pid.isdigit() or info.st_uid != os.getuid() or not stat.S_ISDIR(info.st_mode):
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except (OSError, OverflowError):
            continue  # gone meanwhile, a pid of another user's (still running), no pid at all


class _Start(QObject):
    """After the first frame: the modules imported and the history opened off the GUI thread;
    then, one step per turn of the event loop, the services made and handed to the window
    (which makes the page on show), each other early page and the background loading; once it
    is loaded, the other plain pages (the History page, caught up with what was listed), made
    then so that no loading thread contends with them for the interpreter."""

    def __init__(self, window: MainWindow, args: argparse.Namespace, interactive: bool) -> None:
        super().__init__(window)
        self.window = window
        self.args = args
        self.interactive = interactive
        self.history: history_service.HistoryService | None = None
        self.refused = False  # the history could not be opened: the window closes, exit 2
        self._steps: list[Callable[[], object]] = []

    def open(self) -> None:
        if not self.window.isVisible():
            return  # closed before its first frame (Ctrl+C)
        # a failed import is left to the GUI thread's own, which raises it as before
        run_in_background(
            import_background_modules,
            lambda _none: self._open_history(),
            lambda _exc: self._open_history(),
        )

    def _open_history(self) -> None:
        if not self.window.isVisible():
            return
        from stripewise.services import history as history_service

        try:
            url = history_service.resolve_url(self.args.db)
        except history_service.DatabaseError as exc:
            self._refused(exc)
            return
        history_service.open_in_background(url, self._opened, self._refused)

    def _refused(self, exc: Exception) -> None:
        from stripewise.services import history as history_service

        if not isinstance(exc, history_service.DatabaseError):  # a fault, not the user's
            traceback.print_exception(exc)
        elif _explain_refusal(exc, self.interactive):
            self._open_history()  # moved aside: a fresh history
            return
        self.refused = True
        self.window.close()
        QApplication.quit()

    def _opened(self, history: history_service.HistoryService) -> None:
        self.history = history
        if not self.window.isVisible():
            return  # closed while it opened: closed with the others by run_gui
        from stripewise.services.hardware import HardwareService
        from stripewise.services.helper_client import HelperClient
        from stripewise.services.system_info import SystemInfoService

        services = WindowServices(
            history,
            SystemInfoService(),
            HardwareService(history),
            HelperClient(),
            inventory_file=self.args.inventory,
        )
        self.window.attach(services)
        window = self.window
        later = [name for name in PLAIN_VIEWS if name not in EARLY_VIEWS]
        window.loaded.connect(
            lambda: self._queue([*(self._page_step(name) for name in later), _import_lazy_pages])
        )
        # once the page on show has been drawn; the early pages hear the loading's first answers
        self._queue([*(self._page_step(name) for name in EARLY_VIEWS), window.start_loading])

    def _page_step(self, name: str) -> Callable[[], None]:
        return lambda: self.window.build_pages([name])  # nothing when made already (shown)

    def _queue(self, steps: list[Callable[[], object]]) -> None:
        idle = not self._steps
        self._steps.extend(steps)
        if idle:
            QTimer.singleShot(0, self, self._next_step)

    def _next_step(self) -> None:
        """One step, then the event loop's turn: input and repaints wait one step at most."""
        if self._steps and self.window.isVisible():
            self._steps.pop(0)()
            if self._steps:
                QTimer.singleShot(0, self, self._next_step)


def _import_lazy_pages() -> None:
    # a failed import is left to the page's own when it is first shown, which raises it
    run_in_background(lambda: import_background_modules(LAZY_PAGE_IMPORTS), lambda _none: None)


class _CloseOnSignals:
    """Ctrl+C, SIGTERM or a hang-up (the terminal or ssh session gone) close the window the
    normal way, so its state is saved, and end the program; one that comes before the window
    exists closes it as soon as it does. `--remote` holds these signals while it starts
    (cli/remote.py): installed, this lets them land.

    Python runs signal handlers only between bytecodes; a short idle timer gives it the chance
    while Qt's event loop is waiting. The close is posted, not done in the handler: a signal
    that lands before the event loop runs would close the window while quit() still does
    nothing, and the loop would then wait forever. Closing the window does not end a modal
    box's loop (one with no parent, such as the history's refusal, outlives it): exit() ends
    every loop running and makes any started after it return at once, so no box waits for a
    click nobody may see.
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
            QTimer.singleShot(0, self._stop)

    def _on_signal(self, _number: int, _frame: object) -> None:
        if self._window is None:
            self._pending = True
        else:
            QTimer.singleShot(0, self._stop)

    def _stop(self) -> None:
        if self._window is not None:
            self._window.close()
        QApplication.exit(0)


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
        image = QBuffer()
        image.open(QIODevice.OpenModeFlag.WriteOnly)
        try:  # written as exports are: Qt's own save says nothing of why it failed
            if not self.window.grab().save(image, "PNG"):
                raise OutputFileError(f"cannot write {self.path}: Qt could not encode a PNG")
            write_output_bytes(self.path, bytes(image.data().data()))
            self.exit_code = 0
        except OutputFileError as exc:
            _error(f"--screenshot: {exc}")
        self.window.close()
        QApplication.quit()

    def _timeout(self) -> None:
        _error("the window did not finish loading within 30 s; screenshot taken anyway")
        self.grab()


class _AfterFirstFrame(QObject):
    """Calls `then` once the window's first frame is on screen: at its first expose (answered
    from the event loop, after the frame is painted), or after `unexposed_ms` for a window
    nothing exposes (shown on a workspace out of sight)."""

    def __init__(
        self,
        window: MainWindow,
        then: Callable[[], object],
        unexposed_ms: int | None = UNEXPOSED_START_MS,
    ) -> None:
        super().__init__(window)
        self._window = window
        self._then = then
        self._done = False
        app = QApplication.instance()
        assert app is not None
        app.installEventFilter(self)
        if unexposed_ms is not None:
            QTimer.singleShot(unexposed_ms, self, self._call)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            not self._done
            and event.type() == QEvent.Type.Expose
            and watched is self._window.windowHandle()
        ):
            QTimer.singleShot(0, self, self._call)
        return False

    def _call(self) -> None:
        if self._done:
            return
        self._done = True
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
        self._then()


def _report_first_frame(window: MainWindow) -> None:
    """For bench/: the CLOCK_MONOTONIC time of the first frame, then the modules loaded by
    then (tests/display/test_first_frame.py reads them), and quit."""
    print(f"first-frame {time.monotonic():.6f}", flush=True)
    print("first-frame-modules " + " ".join(sorted(sys.modules)), flush=True)
    window.close()
    QApplication.quit()

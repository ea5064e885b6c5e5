"""The main window: navigation between the six pages, menus, status bar, remembered state.

It comes up in two steps, so that its first frame costs little more than Qt's own: made, it is
the frame (every page's name, the menus, the status bar, the view asked for selected) and has
loaded no service, no page and no database. `attach` hands it the services once the history is
open and makes the page on show; `build_pages` makes the other plain pages (gui/app.py asks for
one per turn of the event loop). The Benchmark and Experiment pages (pyqtgraph) are made when
first shown (gui/window_pages.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QByteArray, QEvent, QSettings, QSize, Qt, Signal
from PySide6.QtGui import QCloseEvent, QResizeEvent
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QSplitter,
    QWidget,
)

from stripewise import APP_NAME
from stripewise.gui import VIEW_NAMES
from stripewise.gui.main_menus import MenuHandlers, build_menus
from stripewise.gui.navigation import Navigation
from stripewise.gui.page_stack import PageStack, scrolling
from stripewise.gui.window_pages import STATUS_MS, make_page
from stripewise.model.wording import count_noun

if TYPE_CHECKING:  # each loaded with the first page or service that needs it, not for the frame
    from stripewise.gui.about import AboutDialog
    from stripewise.gui.compare_view import CompareWindow
    from stripewise.gui.help_window import HelpWindow
    from stripewise.model.bench import BenchSpec
    from stripewise.services.bench_session import BenchSession
    from stripewise.services.group_bench import GroupBenchService
    from stripewise.services.hardware import HardwareService
    from stripewise.services.helper_client import HelperClient
    from stripewise.services.history import HistoryService
    from stripewise.services.host_groups import HostGroupsService
    from stripewise.services.planner import PlannerService
    from stripewise.services.system_info import SystemInfoService, SystemReport

MINIMUM_SIZE = QSize(780, 560)  # inside an 800x600 console, the smallest mode it offers
DEFAULT_SIZE = QSize(1180, 780)
NAV_WIDE_PX = 170  # the navigation's width beside the pages' names, unless the admin moved it
LAZY_VIEWS = ("benchmark", "experiment")  # pyqtgraph: made when first shown
PLAIN_VIEWS = tuple(name for name in VIEW_NAMES if name not in LAZY_VIEWS)
# made before the loading starts, so each hears its service's first answers; the History page
# (pyqtgraph in its run detail) may come after, caught up with the runs listed by then (gui/app.py
# makes it once the loading is done, when no loading thread contends with it)
EARLY_VIEWS = ("hardware", "planner", "tuning")
NOTICE_MS = 30_000  # how long the window's own messages stay in the status bar


@dataclass(frozen=True)
class WindowServices:
    """What the pages work with; the window makes the planner itself unless given one."""

    history: HistoryService
    system: SystemInfoService
    hardware: HardwareService
    helper: HelperClient
    planner: PlannerService | None = None
    inventory_file: Path | None = None  # the map shows this file instead of this machine


class MainWindow(QMainWindow):
    """Views get their services through `attach`; the window knows no database or process."""

    viewChanged = Signal(str)
    loaded = Signal()  # every start-up background task has reported

    history: HistoryService  # these, from `attach` on
    system: SystemInfoService
    hardware: HardwareService
    helper: HelperClient
    planner: PlannerService
    bench_session: BenchSession
    host_groups: HostGroupsService
    group_bench: GroupBenchService
    inventory_file: Path | None

    def __init__(
        self,
        settings: QSettings,
        initial_view: str | None = None,
        services: WindowServices | None = None,
    ) -> None:
        """The frame; given `services`, they are attached and every plain page made at once."""
        super().__init__()
        self.settings = settings
        self.attached = False
        self._waiting: list[Callable[[], object]] = []  # asked for before the services came
        self._pending = {"system", "history", "hardware"}
        self.built: set[str] = set()  # views whose page is made
        self.compare_windows: list[CompareWindow] = []
        self.help_window: HelpWindow | None = None  # made with the first F1, then reused
        self.setObjectName("MainWindow")
        self.setWindowTitle(APP_NAME)
        self.setMinimumSize(MINIMUM_SIZE)
        self.resize(DEFAULT_SIZE)

        self.nav = Navigation(VIEW_NAMES)
        self.pages = PageStack()
        self.page_widgets: dict[str, QWidget] = {}
        for name in VIEW_NAMES:
            page = QWidget()  # a placeholder until the page is made
            self.page_widgets[name] = page
            self.pages.addWidget(page)
        self.nav.currentRowChanged.connect(self._on_nav_row)

        splitter = QSplitter()
        splitter.setObjectName("mainSplitter")
        splitter.addWidget(self.nav)
        splitter.addWidget(scrolling(self.pages))
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)
        self.splitter = splitter
        self.setCentralWidget(splitter)

        menus = build_menus(
            self,
            MenuHandlers(
                import_results=self._once_attached(self.import_results),
                edit_host_groups=self._once_attached(self.edit_host_groups),
                show_view=self.show_view,
                refresh=self._once_attached(self.refresh_page),
                focus_navigation=lambda: self.nav.setFocus(Qt.FocusReason.ShortcutFocusReason),
                show_help=self.show_help,
                show_about=self._once_attached(self.show_about),
            ),
        )
        self.view_actions, self.refresh_action = menus.view_actions, menus.refresh_action
        self.help_action = menus.help_action
        self._build_status_bar()
        self._restore_state(initial_view)
        if services is not None:
            self.attach(services)
            self.build_pages()

    def attach(self, services: WindowServices) -> None:
        """The services, once the history is open; the page on show is made now."""
        from stripewise.services.bench_session import BenchSession
        from stripewise.services.group_bench import GroupBenchService
        from stripewise.services.host_groups import HostGroupsService
        from stripewise.services.planner import PlannerService

        history, hardware, helper = services.history, services.hardware, services.helper
        self.history, self.hardware, self.helper = history, hardware, helper
        self.system = services.system
        self.planner = services.planner or PlannerService(self, history)
        self.bench_session = BenchSession(helper, history, self)
        self.host_groups = HostGroupsService(history, self)
        self.group_bench = GroupBenchService(history, self)
        self.inventory_file = services.inventory_file
        self.attached = True
        self._show_history_opened()
        self.system.probed.connect(self._on_system_report)
        self.system.failed.connect(self._on_system_failed)
        history.runsLoaded.connect(self._on_runs_loaded)
        history.runsCounted.connect(lambda _count: self._on_runs_loaded([]))  # a long history
        history.runsAborted.connect(
            lambda ids: self.statusBar().showMessage(
                f"{count_noun(len(ids), 'run')} left running by a crash marked aborted, "
                "samples kept: " + ", ".join(map(str, ids)),
                NOTICE_MS,
            )
        )
        history.failed.connect(self._on_history_failed)
        history.spoolSynced.connect(lambda text: self.statusBar().showMessage(text, NOTICE_MS))
        helper.notice.connect(lambda text: self.statusBar().showMessage(text, NOTICE_MS))
        hardware.inventoryChanged.connect(self._on_hardware_done)
        hardware.failed.connect(self._on_hardware_done)
        self._build_page(self.current_view)
        waiting, self._waiting = self._waiting, []
        for action in waiting:
            action()

    def build_pages(self, names: Sequence[str] = PLAIN_VIEWS) -> None:
        """The pages of `names` not made yet: by default every page made before it is shown."""
        for name in names:
            self._build_page(name)

    def _build_page(self, name: str) -> None:
        if name in self.built:
            return
        row = VIEW_NAMES.index(name)
        shown = self.pages.currentIndex() == row
        placeholder, page = self.page_widgets[name], make_page(self, name)
        self.pages.insertWidget(row, page)
        self.pages.removeWidget(placeholder)
        placeholder.deleteLater()
        self.page_widgets[name] = page
        self.built.add(name)
        if shown:
            self.pages.setCurrentIndex(row)

    def _once_attached(self, action: Callable[[], object]) -> Callable[[], None]:
        """A menu entry that needs a service: chosen before the history opened (a fraction of
        a second), it runs once it has."""

        def run() -> None:
            if self.attached:
                action()
            else:
                self._waiting.append(action)

        return run

    def compare_runs(self, run_ids: list[int]) -> CompareWindow:
        """A comparison window beside the main one (not modal: several may stay open)."""
        from stripewise.gui.compare_view import CompareWindow
        from stripewise.gui.history_page import HistoryPage

        # the History page holds the app's MiB/s toggle (the Benchmark page's follows it)
        self._build_page("history")
        history = self.page_widgets["history"]
        assert isinstance(history, HistoryPage)
        mib = history.mib_toggle.isChecked()
        window = CompareWindow(self.history, run_ids, self, binary_units=mib)
        history.binaryUnitsChanged.connect(window.set_binary_units)
        window.saved.connect(lambda text: self.statusBar().showMessage(text, STATUS_MS))
        window.rerunRequested.connect(self.bench_again)
        window.show()
        self.compare_windows = [w for w in self.compare_windows if shiboken6.isValid(w)]
        self.compare_windows.append(window)
        return window

    def bench_again(self, spec: BenchSpec, repetitions: int) -> None:
        """The Benchmark page set up with a stored run's spec and `repetitions` passes (a
        comparison could not tell from fewer); the user checks it and presses Start."""
        from stripewise.gui.bench_page import BenchPage

        self.show_view("benchmark")
        page = self.page_widgets["benchmark"]
        assert isinstance(page, BenchPage)
        left_out = page.form.load_spec(spec, repetitions)
        passes = count_noun(repetitions, "pass")
        said = f"Benchmark set up as the stored run, with {passes}: press Start"
        self.statusBar().showMessage(
            f"{said} (not carried over: {'; '.join(left_out)})" if left_out else said, NOTICE_MS
        )
        self.raise_()
        self.activateWindow()

    def import_results(self) -> None:
        from stripewise.gui.history_io import ask_import

        ask_import(self, self.history, self._on_imported)

    def _on_imported(self, run_ids: list[int]) -> None:
        self.statusBar().showMessage(
            f"Imported {count_noun(len(run_ids), 'run')}: {', '.join(map(str, run_ids))}",
            STATUS_MS,
        )
        if run_ids:
            self.open_run(run_ids[0])

    def export_runs(self, run_ids: list[int]) -> None:
        from stripewise.gui.history_io import ask_export

        ask_export(
            self, self.history, run_ids, lambda text: self.statusBar().showMessage(text, STATUS_MS)
        )

    def open_run(self, run_id: int) -> None:
        """Show one run on the History page (after a benchmark, say)."""
        from stripewise.gui.history_page import HistoryPage

        self.show_view("history")
        page = self.page_widgets["history"]
        assert isinstance(page, HistoryPage)
        page.show_run(run_id)

    # --- navigation -------------------------------------------------------------------------
    @property
    def current_view(self) -> str:
        return VIEW_NAMES[self.pages.currentIndex()]

    def refresh_page(self) -> None:
        """View > Refresh (F5): the Hardware page's map read again while it is on show, the
        history everywhere else (runs saved or edited elsewhere)."""
        if self.current_view == "hardware":
            self.hardware.reload()
        else:
            self.history.refresh()

    def show_view(self, name: str) -> None:
        if name not in VIEW_NAMES:
            raise ValueError(f"unknown view {name!r}; choose one of {', '.join(VIEW_NAMES)}")
        self.nav.setCurrentRow(VIEW_NAMES.index(name))

    def _on_nav_row(self, row: int) -> None:
        if row < 0:
            return
        name = VIEW_NAMES[row]
        self.pages.setCurrentIndex(row)
        if self.attached:  # else `attach` makes the page on show
            self._build_page(name)
        self.view_actions[name].setChecked(True)
        self.viewChanged.emit(name)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.nav.paint_icons(self.palette())  # light <-> dark: icons follow the text
        super().changeEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        if self.nav.fit_window(event.size().width()):  # an 800x600 console: the icons alone
            width = self.nav.maximumWidth() if self.nav.compact else NAV_WIDE_PX
            self.splitter.setSizes([width, max(0, self.splitter.width() - width)])
        super().resizeEvent(event)

    # --- menus ------------------------------------------------------------------------------
    def edit_host_groups(self) -> QWidget:
        """The host groups editor (not modal: the window stays usable)."""
        from stripewise.gui.host_groups_dialog import HostGroupsDialog

        dialog = HostGroupsDialog(self.host_groups, self)
        dialog.finished.connect(dialog.deleteLater)
        dialog.show()
        return dialog

    def show_help(self, page: str | None = None) -> HelpWindow:
        """F1: a manual page (a view's, or KEYBOARD_PAGE; the page on show's by default), in a
        window of its own that stays open beside this one."""
        if self.help_window is None:
            from stripewise.gui.help_window import HelpWindow

            self.help_window = HelpWindow(self)
        self.help_window.show_page(page or self.current_view)
        return self.help_window

    def about_dialog(self) -> AboutDialog:
        from stripewise.gui.about import AboutDialog, version_rows

        rows = version_rows(
            self.system.report, self.history.display_url, self.history.schema_revision
        )
        return AboutDialog(rows, self)

    def show_about(self) -> None:
        self.about_dialog().exec()

    # --- status bar -------------------------------------------------------------------------
    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.database_label = QLabel("History: opening...")
        self.database_label.setObjectName("databaseStatus")
        self.privilege_label = QLabel("Privileges: checking...")
        self.privilege_label.setObjectName("privilegeStatus")
        self.fio_label = QLabel("fio: checking...")
        self.fio_label.setObjectName("fioStatus")
        for label in (self.database_label, self.privilege_label, self.fio_label):
            label.setContentsMargins(10, 0, 10, 0)
            bar.addPermanentWidget(label)
        bar.showMessage("Ready")

    def _show_history_opened(self) -> None:
        history, bar = self.history, self.statusBar()
        self.database_label.setText(f"History: {history.display_url}")
        if history.backup_path is not None:
            bar.showMessage(f"History upgraded; backup kept at {history.backup_path}")
        if history.spool_note:  # runs kept here while a team history was away
            bar.showMessage(history.spool_note, 60_000)

    def _on_system_report(self, report: SystemReport) -> None:
        priv = report.privileges
        self.helper.set_privileges(priv)
        self.privilege_label.setText(f"Privileges: {priv.mode.value}")
        self.privilege_label.setToolTip(priv.explanation)
        if report.fio.present:
            self.fio_label.setText(f"fio {report.fio.version or '(version unknown)'}")
            self.fio_label.setToolTip(str(report.fio.path))
        else:
            self.fio_label.setText("fio: not installed")
            self.fio_label.setToolTip("Benchmarks use the built-in engine")
        self._task_done("system")

    def _on_system_failed(self, message: str) -> None:
        self.statusBar().showMessage(message)
        self._task_done("system")

    def _on_runs_loaded(self, runs: list[object]) -> None:
        count = self.history.run_count  # runs is the newest page only
        self.database_label.setText(f"History: {count_noun(count, 'run')}")
        self.database_label.setToolTip(self.history.display_url)
        self._task_done("history")

    def _on_history_failed(self, message: str) -> None:
        self.statusBar().showMessage(message)
        self._task_done("history")

    def _on_hardware_done(self, _inventory_or_message: object) -> None:
        self._task_done("hardware")

    def _task_done(self, name: str) -> None:
        if name in self._pending:
            self._pending.discard(name)
            if not self._pending:
                self.loaded.emit()

    @property
    def is_loaded(self) -> bool:
        return not self._pending

    def start_loading(self) -> None:
        self.system.probe()
        self.history.load_runs(mark_abandoned=True)
        self.history.watch()  # runs saved elsewhere (CLI, another window) show by themselves
        if self.inventory_file is not None:
            self.hardware.load_file(self.inventory_file)
        else:
            self.hardware.load_live()
            self.hardware.start_monitoring()

    # --- remembered state -------------------------------------------------------------------
    def _restore_state(self, initial_view: str | None) -> None:
        geometry = self.settings.value("window/geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        state = self.settings.value("window/state")
        if isinstance(state, QByteArray):
            self.restoreState(state)
        splitter = self.settings.value("window/splitter")
        if isinstance(splitter, QByteArray):
            self.splitter.restoreState(splitter)
        else:
            self.splitter.setSizes([NAV_WIDE_PX, DEFAULT_SIZE.width() - NAV_WIDE_PX])
        remembered = self.settings.value("window/view")
        view = initial_view or (remembered if remembered in VIEW_NAMES else VIEW_NAMES[0])
        self.show_view(str(view))

    def save_state(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("window/splitter", self.splitter.saveState())
        self.settings.setValue("window/view", self.current_view)
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_state()
        if self.help_window is not None:
            self.help_window.close()
        if self.attached:
            self._stop_services()
        super().closeEvent(event)

    def _stop_services(self) -> None:
        self.hardware.stop_monitoring()
        if "tuning" in self.built:
            from stripewise.gui.tuning_page import TuningPage

            tuning = self.page_widgets["tuning"]
            if isinstance(tuning, TuningPage) and tuning.ab is not None:
                tuning.ab.shutdown()  # an A/B's preset does not outlive the window
        hardware = self.page_widgets.get("hardware")
        if hardware is not None and hasattr(hardware, "bay_panel"):
            hardware.bay_panel.stop_walk()  # the lit bay's LED darkened, before the helper goes
        if hardware is not None and hasattr(hardware, "ceiling"):
            hardware.ceiling.shutdown()  # a ceiling test is filed with the passes that came
        experiment = self.page_widgets.get("experiment")
        if experiment is not None and hasattr(experiment, "runner"):
            experiment.runner.shutdown()  # nor an experiment's point
        self.bench_session.shutdown()  # files a running benchmark as cancelled
        self.group_bench.shutdown()  # stops every host's job; the group run is filed
        self.helper.stop()  # its stdin closes: the helper stops the run and removes its files

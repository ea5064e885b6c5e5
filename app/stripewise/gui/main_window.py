"""The main window: navigation between the six pages, menus, status bar, remembered state."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QByteArray, QEvent, QSettings, QSize, Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QSplitter,
    QWidget,
)

from stripewise import APP_NAME
from stripewise.gui import VIEW_NAMES
from stripewise.gui.about import AboutDialog, version_rows
from stripewise.gui.hardware_page import HardwarePage
from stripewise.gui.help_window import HelpWindow
from stripewise.gui.history_page import HistoryPage
from stripewise.gui.icons import line_icon
from stripewise.gui.main_menus import MenuHandlers, build_menus
from stripewise.gui.page_stack import PageStack, scrolling
from stripewise.gui.planner_page import PlannerPage
from stripewise.gui.tuning_page import TuningPage
from stripewise.model.bench import BenchSpec
from stripewise.model.wording import count_noun
from stripewise.services.bench_session import BenchSession
from stripewise.services.group_bench import GroupBenchService
from stripewise.services.hardware import HardwareService
from stripewise.services.helper_client import HelperClient
from stripewise.services.history import HistoryService
from stripewise.services.host_groups import HostGroupsService
from stripewise.services.planner import PlannerService
from stripewise.services.system_info import SystemInfoService, SystemReport

if TYPE_CHECKING:  # pyqtgraph is loaded with the first comparison, not at start-up
    from stripewise.gui.bench_page import BenchPage
    from stripewise.gui.compare_view import CompareWindow
    from stripewise.gui.experiment_page import ExperimentPage

MINIMUM_SIZE = QSize(780, 560)  # inside an 800x600 console, the smallest mode it offers
DEFAULT_SIZE = QSize(1180, 780)
LAZY_VIEWS = ("benchmark", "experiment")  # pyqtgraph: loaded when first shown


class MainWindow(QMainWindow):
    """Views get their services in the constructor; the window knows no database or process."""

    viewChanged = Signal(str)
    loaded = Signal()  # every start-up background task has reported

    def __init__(
        self,
        history: HistoryService,
        system: SystemInfoService,
        settings: QSettings,
        initial_view: str | None = None,
        *,
        hardware: HardwareService,
        helper: HelperClient,
        planner: PlannerService | None = None,
        inventory_file: Path | None = None,
    ) -> None:
        super().__init__()
        self.history = history
        self.system = system
        self.settings = settings
        self.hardware = hardware
        self.helper = helper
        self.planner = planner or PlannerService(self, history)
        self.bench_session = BenchSession(helper, history, self)
        self.host_groups = HostGroupsService(history, self)
        self.group_bench = GroupBenchService(history, self)
        self.inventory_file = inventory_file
        self._pending = {"system", "history", "hardware"}
        self._built: set[str] = set()  # lazy views made so far
        self.compare_windows: list[CompareWindow] = []
        self.help_window: HelpWindow | None = None  # made with the first F1, then reused
        self.setObjectName("MainWindow")
        self.setWindowTitle(APP_NAME)
        self.setMinimumSize(MINIMUM_SIZE)
        self.resize(DEFAULT_SIZE)

        self.nav = QListWidget()
        self.nav.setObjectName("navigation")
        self.nav.setAccessibleName("Navigation")
        self.nav.setIconSize(QSize(22, 22))
        self.nav.setMinimumWidth(150)
        self.nav.setMaximumWidth(220)
        self.pages = PageStack()
        self.page_widgets: dict[str, QWidget] = {}
        for name in VIEW_NAMES:
            # the Benchmark page pulls in pyqtgraph (~250 ms): built when first shown
            page = QWidget() if name in LAZY_VIEWS else self._make_page(name)
            self.page_widgets[name] = page
            self.pages.addWidget(page)
            item = QListWidgetItem(name.capitalize())
            item.setData(Qt.ItemDataRole.UserRole, name)
            self.nav.addItem(item)
        self.nav.currentRowChanged.connect(self._on_nav_row)
        self._paint_nav_icons()

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
                import_results=self.import_results,
                edit_host_groups=self.edit_host_groups,
                show_view=self.show_view,
                refresh_history=self.history.refresh,
                focus_navigation=lambda: self.nav.setFocus(Qt.FocusReason.ShortcutFocusReason),
                show_help=self.show_help,
                show_about=self.show_about,
            ),
        )
        self.view_actions, self.refresh_action = menus.view_actions, menus.refresh_action
        self.help_action = menus.help_action
        self._build_status_bar()
        self._restore_state(initial_view)

        system.probed.connect(self._on_system_report)
        system.failed.connect(self._on_system_failed)
        history.runsLoaded.connect(self._on_runs_loaded)
        history.runsAborted.connect(
            lambda ids: self.statusBar().showMessage(
                f"{count_noun(len(ids), 'run')} left running by a crash marked aborted, "
                "samples kept: " + ", ".join(map(str, ids)),
                30_000,
            )
        )
        history.failed.connect(self._on_history_failed)
        if history.spool_note:  # runs kept here while a team history was away
            self.statusBar().showMessage(history.spool_note, 60_000)
        history.spoolSynced.connect(lambda text: self.statusBar().showMessage(text, 30_000))
        helper.notice.connect(lambda text: self.statusBar().showMessage(text, 30_000))
        hardware.inventoryChanged.connect(self._on_hardware_done)
        hardware.failed.connect(self._on_hardware_done)

    def _make_page(self, name: str) -> QWidget:
        if name == "history":
            history_page = HistoryPage(self.history)
            history_page.compareRequested.connect(self.compare_runs)
            history_page.importRequested.connect(self.import_results)
            history_page.exportRequested.connect(self.export_runs)
            return history_page
        if name == "hardware":
            page = HardwarePage(self.hardware, self.helper)
            page.statusMessage.connect(lambda text: self.statusBar().showMessage(text, 15_000))
            self.planner.planChanged.connect(
                lambda plan, _report: page.map.set_planned(set(plan.assigned()))
            )
            return page
        if name == "planner":
            planner_page = PlannerPage(self.planner, self.hardware, self.helper)
            planner_page.statusMessage.connect(
                lambda text: self.statusBar().showMessage(text, 15_000)
            )
            return planner_page
        if name == "tuning":
            from stripewise.services.tuning import TuningService

            tuning_page = TuningPage(
                TuningService(self.helper, self),
                self.hardware,
                self.bench_session,
                planner=self.planner,
            )
            tuning_page.statusMessage.connect(
                lambda text: self.statusBar().showMessage(text, 15_000)
            )
            return tuning_page
        if name == "benchmark":
            from stripewise.gui.bench_page import BenchPage

            bench_page = BenchPage(
                self.bench_session,
                self.history,
                self.hardware,
                self.planner,
                self.system,
                group_bench=self.group_bench,
                host_groups=self.host_groups,
            )
            bench_page.statusMessage.connect(
                lambda text: self.statusBar().showMessage(text, 15_000)
            )
            bench_page.openRun.connect(self.open_run)
            bench_page.compareRuns.connect(self.compare_runs)
            from stripewise.gui.experiment_page import ExperimentPage

            experiment = self.page_widgets.get("experiment")  # a placeholder until shown
            if isinstance(experiment, ExperimentPage):  # made first: it may be running
                bench_page.set_experiment_running(experiment.runner.running)
            self._keep_units_in_step(bench_page)
            return bench_page
        if name == "experiment":
            return self._experiment_page()
        raise ValueError(f"no page for view {name!r}")

    def _experiment_page(self) -> ExperimentPage:
        from stripewise.gui.experiment_page import ExperimentPage
        from stripewise.services.tuning import TuningService

        page = ExperimentPage(
            self.bench_session,
            TuningService(self.helper, self),
            self.history,
            self.hardware,
            self.planner,
            self.system,
        )
        page.statusMessage.connect(lambda text: self.statusBar().showMessage(text, 15_000))
        page.runningChanged.connect(self._experiment_running)
        return page

    def _experiment_running(self, running: bool) -> None:
        """The Benchmark page's Start waits while an experiment drives its session."""
        from stripewise.gui.bench_page import BenchPage

        bench = self.page_widgets.get("benchmark")
        if isinstance(bench, BenchPage):
            bench.set_experiment_running(running)

    def compare_runs(self, run_ids: list[int]) -> CompareWindow:
        """A comparison window beside the main one (not modal: several may stay open)."""
        from stripewise.gui.compare_view import CompareWindow

        window = CompareWindow(self.history, run_ids, self)
        window.saved.connect(lambda text: self.statusBar().showMessage(text, 15_000))
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
            f"{said} (not carried over: {'; '.join(left_out)})" if left_out else said, 30_000
        )
        self.raise_()
        self.activateWindow()

    def import_results(self) -> None:
        from stripewise.gui.history_io import ask_import

        ask_import(self, self.history, self._on_imported)

    def _on_imported(self, run_ids: list[int]) -> None:
        self.statusBar().showMessage(
            f"Imported {count_noun(len(run_ids), 'run')}: {', '.join(map(str, run_ids))}",
            15_000,
        )
        if run_ids:
            self.open_run(run_ids[0])

    def export_runs(self, run_ids: list[int]) -> None:
        from stripewise.gui.history_io import ask_export

        ask_export(
            self, self.history, run_ids, lambda text: self.statusBar().showMessage(text, 15_000)
        )

    def open_run(self, run_id: int) -> None:
        """Show one run on the History page (after a benchmark, say)."""
        self.show_view("history")
        page = self.page_widgets["history"]
        assert isinstance(page, HistoryPage)
        page.show_run(run_id)

    # --- navigation -------------------------------------------------------------------------
    @property
    def current_view(self) -> str:
        return VIEW_NAMES[self.pages.currentIndex()]

    def show_view(self, name: str) -> None:
        if name not in VIEW_NAMES:
            raise ValueError(f"unknown view {name!r}; choose one of {', '.join(VIEW_NAMES)}")
        self.nav.setCurrentRow(VIEW_NAMES.index(name))

    def _on_nav_row(self, row: int) -> None:
        if row < 0:
            return
        name = VIEW_NAMES[row]
        if name in LAZY_VIEWS and name not in self._built:
            self._built.add(name)
            placeholder, page = self.page_widgets[name], self._make_page(name)
            self.pages.insertWidget(row, page)
            self.pages.removeWidget(placeholder)
            placeholder.deleteLater()
            self.page_widgets[name] = page
        self.pages.setCurrentIndex(row)
        self.view_actions[name].setChecked(True)
        self.viewChanged.emit(name)

    def _keep_units_in_step(self, bench: BenchPage) -> None:
        """One MiB/s toggle for the app: the Benchmark page's and the History page's follow each
        other (setting a box to what it shows emits nothing, so no echo)."""
        history = self.page_widgets["history"]
        if isinstance(history, HistoryPage):
            bench.mib_toggle.setChecked(history.mib_toggle.isChecked())
            bench.mib_toggle.toggled.connect(history.set_binary_units)
            history.binaryUnitsChanged.connect(bench.mib_toggle.setChecked)

    def _paint_nav_icons(self) -> None:
        for row, name in enumerate(VIEW_NAMES):
            self.nav.item(row).setIcon(line_icon(f"nav-{name}", self.palette()))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._paint_nav_icons()  # light <-> dark: icons follow the text colour
        super().changeEvent(event)

    # --- menus ------------------------------------------------------------------------------
    def edit_host_groups(self) -> QWidget:
        """The host groups editor (not modal: the window stays usable)."""
        from stripewise.gui.host_groups_dialog import HostGroupsDialog

        dialog = HostGroupsDialog(self.host_groups, self)
        dialog.finished.connect(dialog.deleteLater)
        dialog.show()
        return dialog

    def show_help(self, view: str | None = None) -> HelpWindow:
        """F1: the manual page of `view` (the page on show by default), in a window of its own
        that stays open beside this one."""
        if self.help_window is None:
            self.help_window = HelpWindow(self)
        self.help_window.show_page(view or self.current_view)
        return self.help_window

    def about_dialog(self) -> AboutDialog:
        rows = version_rows(
            self.system.report, self.history.display_url, self.history.schema_revision
        )
        return AboutDialog(rows, self)

    def show_about(self) -> None:
        self.about_dialog().exec()

    # --- status bar -------------------------------------------------------------------------
    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.database_label = QLabel(f"History: {self.history.display_url}")
        self.database_label.setObjectName("databaseStatus")
        self.privilege_label = QLabel("Privileges: checking...")
        self.privilege_label.setObjectName("privilegeStatus")
        self.fio_label = QLabel("fio: checking...")
        self.fio_label.setObjectName("fioStatus")
        for label in (self.database_label, self.privilege_label, self.fio_label):
            label.setContentsMargins(10, 0, 10, 0)
            bar.addPermanentWidget(label)
        if self.history.backup_path is not None:
            bar.showMessage(f"History upgraded; backup kept at {self.history.backup_path}")
        else:
            bar.showMessage("Ready")

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
            self.splitter.setSizes([170, DEFAULT_SIZE.width() - 170])
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
        self.hardware.stop_monitoring()
        tuning = self.page_widgets.get("tuning")
        if isinstance(tuning, TuningPage) and tuning.ab is not None:
            tuning.ab.shutdown()  # an A/B's preset does not outlive the window
        experiment = self.page_widgets.get("experiment")
        if experiment is not None and hasattr(experiment, "runner"):
            experiment.runner.shutdown()  # nor an experiment's point
        self.bench_session.shutdown()  # files a running benchmark as cancelled
        self.group_bench.shutdown()  # stops every host's job; the group run is filed
        self.helper.stop()  # its stdin closes: the helper stops the run and removes its files
        super().closeEvent(event)

"""The main window's pages, each made when the window first needs it: the one on show as soon as
the services are attached, the other plain pages right after (the History page once the loading
has started, caught up with what it listed), the Benchmark and Experiment pages (pyqtgraph) when
first shown. Each page module is imported here, when its page is made, so the window's first
frame loads none of them."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TypeGuard

from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from stripewise.gui.bench_page import BenchPage
    from stripewise.gui.experiment_page import ExperimentPage
    from stripewise.gui.history_page import HistoryPage
    from stripewise.gui.main_window import MainWindow

STATUS_MS = 15_000  # how long a page's message stays in the status bar


def make_page(window: MainWindow, name: str) -> QWidget:
    """The page of view `name`, wired to the window's services and status bar."""
    if name == "history":
        return _history_page(window)
    if name == "hardware":
        return _hardware_page(window)
    if name == "planner":
        from stripewise.gui.planner_page import PlannerPage

        planner_page = PlannerPage(window.planner, window.hardware, window.helper)
        planner_page.statusMessage.connect(
            lambda text: window.statusBar().showMessage(text, STATUS_MS)
        )
        return planner_page
    if name == "tuning":
        from stripewise.gui.tuning_page import TuningPage
        from stripewise.services.tuning import TuningService

        tuning_page = TuningPage(
            TuningService(window.helper, window),
            window.hardware,
            window.bench_session,
            planner=window.planner,
        )
        tuning_page.statusMessage.connect(
            lambda text: window.statusBar().showMessage(text, STATUS_MS)
        )
        return tuning_page
    if name == "benchmark":
        return _bench_page(window)
    if name == "experiment":
        return _experiment_page(window)
    raise ValueError(f"no page for view {name!r}")


def _history_page(window: MainWindow) -> QWidget:
    from stripewise.gui.history_page import HistoryPage

    page = HistoryPage(window.history)
    page.compareRequested.connect(window.compare_runs)
    page.importRequested.connect(window.import_results)
    page.exportRequested.connect(window.export_runs)
    if window.history.runs is not None:  # listed before the page was made: shown as listed
        page.listing.show_newest(window.history.runs)
    bench = window.page_widgets.get("benchmark")
    if _is_bench_page(bench):  # made first: shown before the other pages were made
        keep_units_in_step(bench, page)
    return page


def _hardware_page(window: MainWindow) -> QWidget:
    from stripewise.gui.hardware_page import HardwarePage

    page = HardwarePage(window.hardware, window.helper)
    page.statusMessage.connect(lambda text: window.statusBar().showMessage(text, STATUS_MS))
    window.planner.planChanged.connect(
        lambda plan, _report: page.map.set_planned(set(plan.assigned()))
    )
    return page


def _bench_page(window: MainWindow) -> BenchPage:
    from stripewise.gui.bench_page import BenchPage
    from stripewise.gui.experiment_page import ExperimentPage

    page = BenchPage(
        window.bench_session,
        window.history,
        window.hardware,
        window.planner,
        window.system,
        group_bench=window.group_bench,
        host_groups=window.host_groups,
    )
    page.statusMessage.connect(lambda text: window.statusBar().showMessage(text, STATUS_MS))
    page.openRun.connect(window.open_run)
    page.compareRuns.connect(window.compare_runs)
    experiment = window.page_widgets.get("experiment")  # a placeholder until shown
    if isinstance(experiment, ExperimentPage):  # made first: it may be running
        page.set_experiment_running(experiment.runner.running)
    history = window.page_widgets.get("history")
    if _is_history_page(history):
        keep_units_in_step(page, history)
    return page


def _experiment_page(window: MainWindow) -> ExperimentPage:
    from stripewise.gui.experiment_page import ExperimentPage
    from stripewise.services.tuning import TuningService

    page = ExperimentPage(
        window.bench_session,
        TuningService(window.helper, window),
        window.history,
        window.hardware,
        window.planner,
        window.system,
    )
    page.statusMessage.connect(lambda text: window.statusBar().showMessage(text, STATUS_MS))
    page.runningChanged.connect(lambda running: _experiment_running(window, running))
    return page


def _experiment_running(window: MainWindow, running: bool) -> None:
    """The Benchmark page's Start waits while an experiment drives its session."""
    bench = window.page_widgets.get("benchmark")
    if _is_bench_page(bench):
        bench.set_experiment_running(running)


def _is_bench_page(page: QWidget | None) -> TypeGuard[BenchPage]:
    if page is None or "stripewise.gui.bench_page" not in sys.modules:
        return False  # never made: its module (pyqtgraph) is not loaded for the asking
    from stripewise.gui.bench_page import BenchPage

    return isinstance(page, BenchPage)


def _is_history_page(page: QWidget | None) -> TypeGuard[HistoryPage]:
    if page is None or "stripewise.gui.history_page" not in sys.modules:
        return False
    from stripewise.gui.history_page import HistoryPage

    return isinstance(page, HistoryPage)


def keep_units_in_step(bench: BenchPage, history: HistoryPage) -> None:
    """One MiB/s toggle for the app: the Benchmark page's and the History page's follow each
    other (setting a box to what it shows emits nothing, so no echo); linked by whichever of
    the two is made last."""
    bench.mib_toggle.setChecked(history.mib_toggle.isChecked())
    bench.mib_toggle.toggled.connect(history.set_binary_units)
    history.binaryUnitsChanged.connect(bench.mib_toggle.setChecked)

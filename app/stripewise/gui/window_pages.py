"""The main window's pages, each made when the window first needs it: the one on show as soon as
the services are attached, the other plain pages right after, one per turn of the event loop
(the History page once the loading is done, caught up with what it listed), the Benchmark and
Experiment pages (pyqtgraph) when first shown. Each page module is imported here, when its page
is made, so the window's first frame loads none of them (gui/app.py has them imported on a
background thread before the pages are made)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Protocol, TypeGuard

from PySide6.QtWidgets import QStatusBar, QWidget

if TYPE_CHECKING:
    from stripewise.gui.bench_page import BenchPage
    from stripewise.gui.experiment_page import ExperimentPage
    from stripewise.gui.history_page import HistoryPage
    from stripewise.services.bench_session import BenchSession
    from stripewise.services.group_bench import GroupBenchService
    from stripewise.services.hardware import HardwareService
    from stripewise.services.helper_client import HelperClient
    from stripewise.services.history import HistoryService
    from stripewise.services.host_groups import HostGroupsService
    from stripewise.services.planner import PlannerService
    from stripewise.services.system_info import SystemInfoService

STATUS_MS = 15_000  # how long a page's message stays in the status bar


class PageHost(Protocol):
    """What the pages take from the main window (gui/main_window.py): its services, its status
    bar, its other pages and what it does for them."""

    history: HistoryService
    system: SystemInfoService
    hardware: HardwareService
    helper: HelperClient
    planner: PlannerService
    bench_session: BenchSession
    host_groups: HostGroupsService
    group_bench: GroupBenchService
    page_widgets: dict[str, QWidget]

    def window(self) -> QWidget: ...  # the main window itself, as the services' parent

    def statusBar(self) -> QStatusBar: ...

    def compare_runs(self, run_ids: list[int]) -> object: ...

    def import_results(self) -> None: ...

    def export_runs(self, run_ids: list[int]) -> None: ...

    def open_run(self, run_id: int) -> None: ...


def make_page(window: PageHost, name: str) -> QWidget:
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
            TuningService(window.helper, window.window()),
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


def _history_page(window: PageHost) -> QWidget:
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


def _hardware_page(window: PageHost) -> QWidget:
    from stripewise.gui.hardware_page import HardwarePage

    page = HardwarePage(window.hardware, window.helper, history=window.history)
    page.statusMessage.connect(lambda text: window.statusBar().showMessage(text, STATUS_MS))
    window.system.probed.connect(page.ceiling.update)  # privileges known: Measure Ceiling
    window.planner.planChanged.connect(
        lambda plan, _report: page.map.set_planned(set(plan.assigned()))
    )
    return page


def _bench_page(window: PageHost) -> BenchPage:
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


def _experiment_page(window: PageHost) -> ExperimentPage:
    from stripewise.gui.experiment_page import ExperimentPage
    from stripewise.services.tuning import TuningService

    page = ExperimentPage(
        window.bench_session,
        TuningService(window.helper, window.window()),
        window.history,
        window.hardware,
        window.planner,
        window.system,
        window.group_bench,
        window.host_groups,
    )
    page.statusMessage.connect(lambda text: window.statusBar().showMessage(text, STATUS_MS))
    page.runningChanged.connect(lambda running: _experiment_running(window, running))
    return page


def _experiment_running(window: PageHost, running: bool) -> None:
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

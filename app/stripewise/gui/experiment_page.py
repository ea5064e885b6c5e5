"""The Experiment page: vary a tunable or a workload parameter over listed values, watch each
point's mean and 95 % interval fill in, and read which value to keep, with its evidence.

The benchmark is the Benchmark page's form (target, phases, size, engine); the design beside it
says what changes between points. The work is the `ExperimentRunner`'s, through the window's own
benchmark session and the helper's journaled tuning verbs: the page never waits on either, and
Cancel at any time leaves the machine as it was.
"""

from __future__ import annotations

import os
from dataclasses import replace

import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui.bench_form import BenchForm
from stripewise.gui.experiment_card import ApplyRecommendation, RecommendationCard
from stripewise.gui.experiment_chart import METRIC_FIGURES, ExperimentChart, objective_text
from stripewise.gui.experiment_form import ExperimentDesignForm
from stripewise.gui.experiment_kept import KeptExperiments
from stripewise.gui.experiment_kept_detail import chart_parameters
from stripewise.gui.experiment_points import PointsTable
from stripewise.gui.form_columns import FormColumns
from stripewise.gui.group_target import GroupTarget, hold_local_rows
from stripewise.gui.pages import page_title
from stripewise.model.bench import Phase, SpecError
from stripewise.model.bench_presets import preset_values
from stripewise.model.experiment_result import ExperimentResult, Point
from stripewise.model.host_group import spec_on_hosts
from stripewise.model.units import duration_text
from stripewise.model.wording import count_noun
from stripewise.protocol.verbs import BenchStartArgs
from stripewise.services.bench_session import BenchSession
from stripewise.services.experiment_history import ExperimentHistory, ExperimentSummary
from stripewise.services.experiment_runner import ExperimentRequest, ExperimentRunner, Prepared
from stripewise.services.group_bench import GroupBenchService
from stripewise.services.hardware import HardwareService
from stripewise.services.history import HistoryService
from stripewise.services.host_groups import HostGroupsService
from stripewise.services.planner import PlannerService
from stripewise.services.system_info import SystemInfoService
from stripewise.services.tasks import run_in_background
from stripewise.services.tuning import TuningService

READY = "Pick a target and what to vary, then Start."


class ExperimentPage(QWidget):
    statusMessage = Signal(str)
    runningChanged = Signal(bool)  # an experiment started or ended: the Benchmark page waits

    def __init__(
        self,
        session: BenchSession,
        tuning: TuningService,
        history: HistoryService,
        hardware: HardwareService,
        planner: PlannerService,
        system: SystemInfoService,
        group_bench: GroupBenchService,
        host_groups: HostGroupsService,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.hardware = hardware
        self.planner = planner
        self.host_groups = host_groups
        self.runner = ExperimentRunner(session, tuning, history, self, group_bench)
        self.target = GroupTarget()  # "Run on": this machine, or hosts (workload only)
        self.result: ExperimentResult | None = None
        self.setup: Prepared | None = None

        self.form = BenchForm()
        self.form.repetitions.setValue(1)
        # Direct I/O as the CLI has it (--direct), but buffered while read-ahead is swept (it
        # acts on reads through the page cache only); the admin's own click wins from then on
        self._direct_chosen = False
        self.form.direct.clicked.connect(self._direct_clicked)
        for phase, box in self.form.phase_boxes.items():
            box.setChecked(phase is Phase.SEQ_READ)
        self.design = ExperimentDesignForm()
        self.chart = ExperimentChart()
        self.design.edited.connect(self._preview)
        self.design.edited.connect(self._direct_follows_design)
        self._direct_follows_design()
        for box in self.form.phase_boxes.values():
            box.toggled.connect(self._phases_changed)
        self._phases_changed()
        self.start_button = QPushButton("Start")
        self.start_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)

        self.status = QLabel(READY)
        self.status.setObjectName("experimentStatus")
        self.status.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setTextVisible(False)
        self.eta = QLabel()
        self.points = PointsTable()
        self.card = RecommendationCard()
        self.apply = ApplyRecommendation(tuning, self)
        self.card.applyRequested.connect(self._ask_apply)
        self.apply.applied.connect(self._tell)
        self.apply.done.connect(lambda what, _reply: self._tell(f"{what}."))
        self.apply.refused.connect(lambda message: self._tell(f"Not done: {message}"))
        self.kept_service = ExperimentHistory(history, self)
        self.kept = KeptExperiments(self.kept_service, tuning)
        self.kept.statusMessage.connect(self.statusMessage)
        self.kept_service.listed.connect(self._on_kept_listed)
        history.runsLoaded.connect(self._on_runs_loaded)  # kept elsewhere too
        self._build_layout()
        self.kept.reload()
        self.target.align_with(self.form)
        self.target.changed.connect(self._sync_target)
        self.target.editGroups.connect(self._edit_groups)
        host_groups.groupsLoaded.connect(self.target.set_groups)
        self.target.set_groups(host_groups.groups)
        host_groups.load()  # the stored groups, whichever page is made first

        runner = self.runner
        runner.prepared.connect(self._on_prepared)
        runner.progress.connect(self._on_progress)
        runner.point.connect(self._on_point)
        runner.finished.connect(self._on_finished)
        runner.failed.connect(self._on_failed)
        self.form.presetChosen.connect(self._apply_preset)
        hardware.machineChanged.connect(self._refresh_targets)
        planner.planChanged.connect(self._refresh_targets)
        system.probed.connect(self._on_system)
        if system.report is not None:
            self._on_system(system.report)
        self._refresh_targets()

    def _build_layout(self) -> None:
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 8, 0)
        left_layout.addWidget(self.design)
        left_layout.addWidget(self.target)
        left_layout.addWidget(self.form)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.cancel_button)
        left_layout.addLayout(buttons)
        left_layout.addStretch(1)

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(8, 0, 0, 0)
        status = QHBoxLayout()
        status.addWidget(self.status, 1)
        status.addWidget(self.eta)
        right_layout.addLayout(status)
        right_layout.addWidget(self.progress)
        lower = QSplitter(Qt.Orientation.Vertical)
        lower.addWidget(self.chart)
        lower.addWidget(self.points)
        lower.setStretchFactor(0, 2)
        lower.setStretchFactor(1, 1)
        lower.setChildrenCollapsible(False)
        right_layout.addWidget(lower, 1)
        right_layout.addWidget(self.card)

        self.columns = FormColumns(left, right)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.columns, "Design and Run")
        self.tabs.addTab(self.kept, "Kept Experiments")
        self.tabs.setTabToolTip(
            1, "Every experiment the history keeps: open, export, delete, compare, apply"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 10)
        layout.addWidget(page_title("Experiment"))
        layout.addWidget(self.tabs, 1)

    def _on_runs_loaded(self, _runs: object) -> None:
        self.kept.reload()

    def _on_kept_listed(self, summaries: list[ExperimentSummary], trash: bool) -> None:
        if not trash:
            self.tabs.setTabText(1, f"Kept Experiments ({len(summaries)})")

    # --- inputs -----------------------------------------------------------------------------
    def _refresh_targets(self, *_args: object) -> None:
        self.form.set_targets(self.hardware.bench_targets(self.hardware.machine, self.planner.plan))

    def _on_system(self, report: object) -> None:
        fio = getattr(report, "fio", None)
        if fio is not None and getattr(fio, "path", None):
            self.form.set_engines(getattr(fio, "version", None) or "")

    def _phases_changed(self, *_args: object) -> None:
        self.design.set_phases(self.form.phases() or [Phase.SEQ_READ])
        self._preview()

    def _direct_clicked(self) -> None:
        self._direct_chosen = True

    def _direct_follows_design(self) -> None:
        if not self._direct_chosen:
            swept = (self.design.first.chosen, self.design.second.chosen)
            self.form.direct.setChecked("read_ahead_kb" not in swept)

    def _preview(self) -> None:
        """Before a first experiment, the chart as the design stands: the values to be tried
        under the parameter's name, the figure judged beside its axis. An experiment's own
        points stay until the next Start."""
        if self.result is not None or self.runner.running or self.chart.point_count():
            return
        preview = self.design.preview()
        if preview is not None:
            parameters, objective = preview
            self.chart.set_design(parameters, objective_text(objective), baseline=False)

    def _apply_preset(self, name: str) -> None:
        """The preset's values sized for the target (its free space read off the GUI thread);
        one repetition whatever the preset says: an experiment adds passes itself."""
        target = self.form.current_target()
        path = target.path if target else ""
        device = target.size_bytes if target is not None and target.is_device else None

        def apply(free: int | None) -> None:
            if not shiboken6.isValid(self) or self.form.preset.currentText() != name:
                return
            values = preset_values(name, _ram_bytes(), free, device_bytes=device)
            self.form.apply_values(values)
            self.form.repetitions.setValue(1)
            self._phases_changed()

        run_in_background(lambda: None if device is not None else _free_bytes(path), apply)

    def _sync_target(self) -> None:
        """On hosts: the form's rows only this machine's run uses off, the design offering
        only what a group run can vary and judge."""
        if self.runner.running:  # held; the design follows when the run ends (_set_running)
            return
        on_hosts = self.target.on_hosts
        self.design.set_on_hosts(on_hosts)
        if on_hosts:
            hold_local_rows(self.form)
        else:
            self.form.set_running(False)  # back to what the local target allows
            self.form.repetitions.setEnabled(False)

    def _edit_groups(self) -> None:
        from stripewise.gui.host_groups_dialog import HostGroupsDialog

        dialog = HostGroupsDialog(self.host_groups, self.target)
        dialog.setModal(True)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    # --- running ----------------------------------------------------------------------------
    def _request(self) -> ExperimentRequest | None:
        """The design and the Benchmark settings, on this machine or on the hosts; None when
        a field is wrong (said under it)."""
        if not self.target.on_hosts:
            try:
                return self.design.request(self.form.start_args())
            except SpecError as exc:
                self.form.show_error(exc)
                return None
        try:
            hosts, path = self.target.hosts(), self.target.remote_path()
        except SpecError as exc:
            self.target.error.setText(str(exc))
            self.target.error.setVisible(True)
            return None
        try:
            spec = spec_on_hosts(self.form.spec_for(path))
        except SpecError as exc:
            self.form.show_error(exc)
            return None
        self.target.error.setVisible(False)
        request = self.design.request(BenchStartArgs(spec))
        return replace(request, hosts=hosts, group=self.target.group_name)

    def start(self) -> None:
        request = self._request()
        if request is None:
            return
        self.result = None
        self.points.set_points([])
        self.chart.clear_points()
        self.card.show_waiting("Running: the recommendation appears here when it ends.")
        self._set_running(True)
        self.runner.start(request)

    def cancel(self) -> None:
        self.runner.cancel()
        self.cancel_button.setEnabled(False)

    def _set_running(self, running: bool) -> None:
        self.form.set_running(running)
        self.design.set_running(running)
        self.target.set_running(running)
        self.form.repetitions.setEnabled(False)  # one per pass: the experiment adds passes
        if not running:
            self.design.set_on_hosts(self.target.on_hosts)
        if not running and self.target.on_hosts:
            hold_local_rows(self.form)
        self.start_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.runningChanged.emit(running)

    def _on_prepared(self, setup: Prepared) -> None:
        self.setup = setup
        design = setup.design
        objective = design.objective
        parameters = chart_parameters(design, setup.baseline, setup.search)
        self.chart.set_design(parameters, objective_text(objective), baseline=setup.search is None)
        self.points.set_names([name for name, _values in parameters])
        self.points.set_figure(METRIC_FIGURES[objective.metric])

    def _on_progress(self, text: str, done: int, at_least: int, at_most: int, eta: float) -> None:
        self.status.setText(text)
        self.progress.setRange(0, max(1, at_least))
        self.progress.setValue(min(done, at_least))
        self.progress.setTextVisible(at_least > 0)
        self.progress.setFormat(
            f"{done} of {at_least} passes" + (f" (up to {at_most})" if at_most > at_least else "")
        )
        self.eta.setText(f"about {duration_text(eta)} left" if eta >= 0 else "")

    def _on_point(self, point: Point) -> None:
        self.chart.update_point(point)
        self.points.update_point(point)

    def _on_finished(self, result: ExperimentResult) -> None:
        self.result = result
        self._set_running(False)
        self.chart.show_points(result.points)
        self.points.set_points(result.points)
        self.kept.reload()  # filed: listed among the kept ones
        settings = ApplyRecommendation.settings_for(self.setup, result)
        self.card.show_result(result, bool(settings))
        passes = sum(len(p.passes) for p in result.points)
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.progress.setFormat(f"{passes} passes over {len(result.points)} points")
        self.eta.clear()
        ended = "cancelled" if self.runner.cancelled else "done"
        number = f" {result.experiment}" if result.experiment is not None else ""
        tag = f"experiment:{result.experiment}" if result.experiment is not None else "experiment"
        hosts = self.setup.hosts if self.setup is not None else ()
        where = f" on {count_noun(len(hosts), 'host')}" if hosts else ""
        back = "it changed nothing on them" if hosts else "every value it changed is back"
        self._tell(
            f"Experiment{number} {ended}{where}: {back}; its runs are in the History, tagged {tag}."
        )

    def _on_failed(self, message: str) -> None:
        self._set_running(False)
        self.eta.clear()
        self.card.show_waiting(f"Stopped: {message}")
        self._tell(f"Experiment stopped: {message}")
        self.kept.reload()  # filed as failed, or not kept at all

    def _tell(self, text: str) -> None:
        self.status.setText(text)
        self.statusMessage.emit(text)

    def _ask_apply(self) -> None:
        if self.setup is not None and self.result is not None:
            self.apply.ask(self.setup, self.result, self.card.persist.isChecked())

    def shutdown(self) -> None:
        self.runner.shutdown()


def _free_bytes(path: str) -> int | None:
    if not path or path.startswith("/dev/"):
        return None
    try:
        vfs = os.statvfs(path)
    except OSError:
        return None
    return vfs.f_bavail * vfs.f_frsize


def _ram_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 8 * 2**30

"""The Benchmark view: settings on the left; live plots, progress and results on the right.

The page only talks to services: `BenchSession` runs the benchmark through the helper and
files it in the history, the hardware and planner services supply the targets. Plots are
redrawn on a 5 Hz timer, not per sample, so a 10 Hz stream costs the GUI thread little.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui.bench_form import BenchForm
from stripewise.gui.bench_members import MembersTable
from stripewise.gui.bench_plot_backdrop import band_names
from stripewise.gui.bench_plot_data import describe_layers
from stripewise.gui.bench_plots import LivePlots
from stripewise.gui.bench_results import ResultsTable, rows_for
from stripewise.gui.elided_label import ElidedLabel
from stripewise.gui.experiment_pass_note import EXPERIMENT_CANCEL as CANCELS_EXPERIMENT
from stripewise.gui.experiment_pass_note import EXPERIMENT_RUNNING, ExperimentPassNote
from stripewise.gui.flow_layout import FlowLayout
from stripewise.gui.form_columns import FormColumns
from stripewise.gui.group_run import GroupRunView
from stripewise.gui.pages import page_title
from stripewise.gui.plot_stack import PlotStack
from stripewise.model.bench import BONNIE_NAMES, SpecError
from stripewise.model.bench_presets import preset_values
from stripewise.model.guards import page_cache_warning
from stripewise.model.run import RunStatus
from stripewise.model.run_naming import run_name
from stripewise.model.units import duration_text, phase_progress_text
from stripewise.protocol.events import (
    PhaseFinished,
    PhaseStarted,
    RunError,
    RunResult,
    RunWarning,
    Sample,
)
from stripewise.protocol.verbs import BenchStarted
from stripewise.services.bench_session import BenchRequest, BenchSession
from stripewise.services.group_bench import GroupBenchService
from stripewise.services.hardware import HardwareService
from stripewise.services.history import HistoryService
from stripewise.services.host_groups import HostGroupsService
from stripewise.services.planner import PlannerService
from stripewise.services.system_info import SystemInfoService
from stripewise.services.tasks import run_in_background

REDRAW_MS = 200
RUN_PROGRESS = "run %p %"  # on the bar: the run's progress, never the phase's


def _free_bytes(path: str) -> int | None:
    """Free space where a test file would go; None for devices (the helper checks sizes)."""
    if not path or path.startswith("/dev/"):
        return None
    try:
        vfs = os.statvfs(path)
    except OSError:
        return None
    return vfs.f_bavail * vfs.f_frsize


class BenchPage(QWidget):
    openRun = Signal(int)  # history id: show it on the History page
    compareRuns = Signal(list)  # [previous id, this id]: open them side by side
    statusMessage = Signal(str)

    def __init__(
        self,
        session: BenchSession,
        history: HistoryService,
        hardware: HardwareService,
        planner: PlannerService,
        system: SystemInfoService,
        parent: QWidget | None = None,
        *,
        group_bench: GroupBenchService | None = None,
        host_groups: HostGroupsService | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        hardware.healthChanged.connect(lambda _: session.keep_health(hardware))  # in its runs
        self.history = history
        self.hardware = hardware
        self.planner = planner
        self.system = system
        self.saved_run_id: int | None = None
        self.experiment_running = False  # the Experiment page's: Start waits for its end
        self.target_path = ""  # what Compare with Previous looks for
        self._planned_steps, self._steps_done = 1, 0  # phases x passes, and those ended
        self._warnings: list[str] = []
        self._cache_line: str | None = None  # the page's own page-cache warning, if shown
        self._ram_bytes = _ram_bytes()
        self._last_t = 0.0  # the newest sample's time: where the next phase band starts
        self._phase_text, self._repetitions = "", 1
        self._steady = self._in_rounds = False  # the run's write phases run in rounds; this one
        self._error_label: QWidget | None = None  # the form's newest error, scrolled to

        self.form = BenchForm()
        self.pass_note = ExperimentPassNote()  # in the form's place while an experiment runs
        self.start_button = QPushButton("Start")
        self.start_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)

        self.plots = LivePlots()
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat(RUN_PROGRESS)
        self.progress.setTextVisible(False)  # until a run starts
        self.phase_label = QLabel("Ready.")
        self.phase_label.setObjectName("phaseLabel")
        self.phase_label.setWordWrap(True)  # its whole width would push an 800 px page sideways
        self.mib_toggle = QCheckBox("MiB/s")
        self.mib_toggle.setToolTip("Show throughput in MiB/s (2^20 B/s) instead of MB/s (10^6 B/s)")
        self.mib_toggle.toggled.connect(self._set_binary_units)
        self.results = ResultsTable()
        self.warnings = QLabel()
        self.warnings.setWordWrap(True)
        self.warnings.setObjectName("benchWarnings")
        self.warnings.setTextFormat(Qt.TextFormat.RichText)
        self.warnings.hide()
        self.open_button = QPushButton("Open in History")
        self.compare_button = QPushButton("Compare with Previous")
        self.save_plot_button = QPushButton("Save Plot...")
        self.save_plot_button.setToolTip("The throughput, IOPS and CPU plots as PNG or SVG")
        self.save_plot_button.clicked.connect(self._ask_save_plot)
        self.saved_label = ElidedLabel()  # over the buttons: ends in "…" when narrow
        for button in (self.open_button, self.compare_button):
            button.setEnabled(False)
        self.open_button.clicked.connect(self._open_in_history)
        self.compare_button.clicked.connect(self._compare_with_previous)
        self.redraw = QTimer(self)
        self.group = GroupRunView(  # runs on several hosts: their own plots and results
            self,
            group_bench or GroupBenchService(history, self),
            host_groups or HostGroupsService(history, self),
        )
        self._build_layout()

        self.redraw.setInterval(REDRAW_MS)
        self.redraw.timeout.connect(self.plots.refresh)

        self.form.presetChosen.connect(self._apply_preset)
        self.form.errorShown.connect(self._scroll_to_error)
        session.started.connect(self._on_started)
        session.refused.connect(self._on_refused)
        session.phaseStarted.connect(self._on_phase_started)
        session.sampleArrived.connect(self._on_sample)
        session.phaseFinished.connect(self._on_phase_finished)
        self.pass_note.route_rounds(session.roundEnded, self.form.steady)  # live rounds line
        session.warningRaised.connect(self._on_warning)
        session.finished.connect(self._on_finished)
        session.saved.connect(self._on_saved)
        session.saveFailed.connect(self._on_save_failed)
        # methods, not lambdas: Qt disconnects them when the page goes, the services stay
        hardware.machineChanged.connect(self._on_inventory)  # this machine's, never a file's
        planner.planChanged.connect(self._on_plan)
        system.probed.connect(self._on_system)
        if system.report is not None:
            self._on_system(system.report)
        self._refresh_targets()

    def _build_layout(self) -> None:
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 8, 0)
        left_layout.addWidget(self.group.target)
        left_layout.addWidget(self.form)
        left_layout.addWidget(self.pass_note)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.cancel_button)
        left_layout.addLayout(buttons)
        left_layout.addStretch(1)

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(8, 0, 0, 0)
        status = QHBoxLayout()
        status.addWidget(self.phase_label, 1)
        status.addWidget(self.mib_toggle)
        right_layout.addLayout(status)
        right_layout.addWidget(self.progress)
        self.plot_stack, self.result_stack = PlotStack(), QStackedWidget()
        for stack, single, group in (
            (self.plot_stack, self.plots, self.group.view),
            (self.result_stack, self.results, self.group.results),
        ):
            stack.addWidget(single)
            stack.addWidget(group)
        # the table as tall as its rows (a run's planned rows), the plots take the rest: a
        # splitter shared the height evenly and left a 1024x768 window 2.5 rows of the table
        self.result_stack.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.result_stack.currentChanged.connect(self._fit_results)
        self._fit_results()
        self.group.target.changed.connect(self.group.follow_target)
        right_layout.addWidget(self.plot_stack, 1)
        right_layout.addWidget(MembersTable(self.session, self.redraw))  # an array's, live
        right_layout.addWidget(self.warnings)
        right_layout.addWidget(self.result_stack)
        right_layout.addWidget(self.saved_label)
        after = FlowLayout()  # wraps rather than clipping at 800 px
        after.addWidget(self.open_button)
        after.addWidget(self.compare_button)
        after.addWidget(self.save_plot_button)
        right_layout.addLayout(after)

        self.columns = FormColumns(left, right)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 10)
        layout.addWidget(page_title("Benchmark"))
        layout.addWidget(self.columns, 1)

    def _fit_results(self, *_args: object) -> None:
        """The results' height is the shown table's: the other one's hint is ignored."""
        for index in range(self.result_stack.count()):
            table = self.result_stack.widget(index)
            if table is None:  # never below count()
                continue
            shown = index == self.result_stack.currentIndex()
            vertical = QSizePolicy.Policy.Maximum if shown else QSizePolicy.Policy.Ignored
            table.setSizePolicy(QSizePolicy.Policy.Expanding, vertical)

    # --- inputs ----------------------------------------------------------------------------
    def _refresh_targets(self) -> None:
        inventory = self.hardware.machine  # what runs here: never a recording's disks
        self.session.inventory = inventory
        self.form.set_targets(self.hardware.bench_targets(inventory, self.planner.plan))

    def _on_inventory(self, _inventory: object) -> None:
        self._refresh_targets()

    def _on_plan(self, _plan: object, _report: object) -> None:
        self._refresh_targets()

    def _on_system(self, report: Any) -> None:
        fio = getattr(report, "fio", None)
        if fio is not None and getattr(fio, "path", None):
            self.form.set_engines(getattr(fio, "version", None) or "")

    def _apply_preset(self, name: str) -> None:
        """The preset's values sized for the target: a device's capacity as the inventory read
        it, a directory's free space as statvfs says (off the GUI thread)."""
        target = self.form.current_target()
        path = target.path if target else ""
        device = target.size_bytes if target is not None and target.is_device else None
        ram = self._ram_bytes

        def apply(free: int | None) -> None:
            if not shiboken6.isValid(self):
                return  # the window closed meanwhile
            now = self.form.current_target()
            if self.form.preset.currentText() != name or (
                (now.identity if now else None) != (target.identity if target else None)
            ):
                return  # chosen again since: that choice's values are on their way
            self.form.apply_values(preset_values(name, ram, free, device_bytes=device))

        run_in_background(lambda: None if device is not None else _free_bytes(path), apply)

    def _scroll_to_error(self, label: QWidget) -> None:
        """The form may have grown past the window by the error's row: scrolled into view once
        its layout ran (a posted event)."""
        self._error_label = label
        QTimer.singleShot(0, self, self._ensure_error_visible)

    def _ensure_error_visible(self) -> None:
        label = self._error_label
        if label is not None and shiboken6.isValid(label) and label.isVisible():
            self.columns.form_scroll.ensureWidgetVisible(label)

    def _set_binary_units(self, mib: bool) -> None:
        self.plots.set_binary_units(mib)
        self.results.set_binary_units(mib)
        self.group.set_binary_units(mib)

    # --- running ---------------------------------------------------------------------------
    def start(self) -> None:
        if self.group.target.on_hosts:
            self.group.start()
            return
        try:
            args = self.form.start_args()
        except SpecError as exc:
            self.form.show_error(exc)  # under its field: the line above the plots is the run's
            return
        target = self.form.current_target()
        assert target is not None
        phases = len(args.spec.phases) * args.spec.repetitions
        self._planned_steps, self._steps_done = max(1, phases), 0
        self.target_path = target.path
        # by what sets it apart: a sweep's runs read apart in the history
        name = run_name(args.spec, target.path, self.form.preset.currentText())
        self.start_button.setEnabled(False)
        self.phase_label.setText("Starting the helper...")
        self.session.start(BenchRequest(args, name, target.array_name))

    def cancel(self) -> None:
        if self.group.running:
            self.group.cancel()
            return
        self.cancel_button.setEnabled(False)
        self.phase_label.setText("Cancelling...")
        self.session.cancel()  # an experiment's pass: its runner then ends the experiment

    def set_experiment_running(self, running: bool) -> None:
        """An experiment's passes go through this page's session: no run of one's own
        meanwhile, and Start says why. The form, the admin's own next run, is put away as it
        is; the pass note says what each pass runs."""
        self.experiment_running = running
        self.start_button.setToolTip(EXPERIMENT_RUNNING if running else "")
        self.cancel_button.setToolTip(CANCELS_EXPERIMENT if running else "")
        for own in (self.group.target, self.form):
            own.setVisible(not running)
        self.pass_note.setVisible(running)
        if running:
            self.pass_note.wait()
            self.start_button.setEnabled(False)
        elif not self.cancel_button.isEnabled():  # no pass of it still going
            self.start_button.setEnabled(True)

    def _start_ready(self) -> None:
        self.start_button.setEnabled(not self.experiment_running)

    def _on_refused(self, message: str) -> None:
        self._start_ready()
        self.phase_label.setText(f"Not started: {message}")

    def _on_started(self, started: BenchStarted) -> None:
        request = self.session.request
        if self.experiment_running and request is not None:
            self.pass_note.show_run(request.name, request.tags, started.spec)
        self.saved_run_id = None
        self._last_t = 0.0
        self.group.show(False)
        self.plots.clear()
        self.results.clear_results()
        self.results.reserve_rows(rows_for(phase.value for phase in started.spec.phases))
        # said here, not only by the helper: its warning can come before the reply, and a
        # run's events before its reply are not this page's yet
        spec = started.spec
        self._cache_line = page_cache_warning(spec.size_bytes, spec.direct, self._ram_bytes)
        self._warnings = [self._cache_line] if self._cache_line else []
        self._show_warnings()
        self._repetitions = started.spec.repetitions
        self._steady = started.spec.steady_state  # its write phases run in rounds
        self.progress.setValue(0)
        self.progress.setTextVisible(True)
        self.form.set_running(True)
        self.start_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.open_button.setEnabled(False)
        self.compare_button.setEnabled(False)
        disks = (  # as layers when the helper said them: "loop0 on vda"
            describe_layers(started.layers)
            or ", ".join(started.disks)
            or "no disk found under the target"
        )
        self.saved_label.setText(f"Recording to the history; disks: {disks}")
        self.saved_label.setToolTip(f"Recording to the history. Disks under the target: {disks}")
        self.redraw.start()

    def _on_phase_started(self, event: PhaseStarted) -> None:
        # the helper counts passes from 1
        label, *shorter = band_names(event.phase, event.repetition)
        self.plots.begin_phase(label, self._last_t, tuple(shorter))
        self._phase_text = (
            f"{BONNIE_NAMES[event.phase]}, pass {event.repetition} of {self._repetitions}"
        )
        self._in_rounds = self._steady and event.phase.runs_in_rounds
        self.phase_label.setText(f"{self._phase_text}: starting")

    def _on_sample(self, sample: Sample) -> None:
        self._last_t = sample.t_s
        self.plots.add_sample(sample)
        fraction = sample.progress or 0.0
        overall = (self._steps_done + fraction) / self._planned_steps
        self.progress.setValue(round(1000 * min(1.0, overall)))
        # the phase's share said as the phase's (the bar beside it shows the run's)
        said = phase_progress_text(fraction, sample.eta_s, in_rounds=self._in_rounds)
        self.phase_label.setText(f"{self._phase_text}: {said}")

    def _on_phase_finished(self, event: PhaseFinished) -> None:
        self._steps_done += 1
        self.results.add_phase_result(event)
        if event.error and event.error != "cancelled":
            self._warnings.append(f"{event.phase.value}: {event.error}")
        self._show_warnings()

    def _on_warning(self, event: RunWarning | RunError) -> None:
        message = event.message or (event.code if isinstance(event, RunWarning) else "warning")
        if isinstance(event, RunWarning) and event.code == "page_cache":
            # the helper's RAM figure replaces the page's own line of the same warning
            self._warnings = [w for w in self._warnings if w != self._cache_line]
        if message not in self._warnings:
            self._warnings.append(message)
        self._show_warnings()

    def _show_warnings(self) -> None:
        lines = self._warnings + self.results.spread_warnings()
        self.warnings.setVisible(bool(lines))
        self.warnings.setText("<br>".join(f"&#9888; {line}" for line in lines))

    def _on_finished(self, result: RunResult) -> None:
        self.redraw.stop()
        self.plots.refresh()
        self.results.set_run_result(result)
        self._show_warnings()
        self.form.set_running(False)
        self._start_ready()
        self.cancel_button.setEnabled(False)
        status = result.status.value
        if result.status is RunStatus.COMPLETE:
            self.progress.setValue(1000)
        detail = f": {result.error}" if result.error else ""
        self.phase_label.setText(f"Run {status} in {duration_text(result.elapsed_s)}{detail}")
        self.statusMessage.emit(f"Benchmark {status}{detail}")

    def _on_saved(self, run_id: int, status: str) -> None:
        self.saved_run_id = run_id
        self.saved_label.setText(f"Saved: run {run_id}")  # its status is the line above
        self.saved_label.setToolTip(
            f"Saved as run {run_id} ({status}) in {self.history.display_url}"
        )
        self.open_button.setEnabled(True)
        self.compare_button.setEnabled(True)
        self.history.load_runs()

    def _on_save_failed(self, message: str) -> None:
        self.saved_label.setText(message)
        self.statusMessage.emit(message)

    # --- after a run -----------------------------------------------------------------------
    def _open_in_history(self) -> None:
        if self.saved_run_id is not None:
            self.openRun.emit(self.saved_run_id)

    def _ask_save_plot(self) -> None:
        from stripewise.gui.help_dialogs import SAVE_BENCH_PLOTS
        from stripewise.gui.plot_export import ask_path

        stem = f"run-{self.saved_run_id}" if self.saved_run_id is not None else "benchmark"
        path = ask_path(self, f"{stem}-plots.png", SAVE_BENCH_PLOTS)
        if path is not None:
            self.save_plot(path)

    def save_plot(self, path: Path) -> None:
        from stripewise.gui.plot_export import save_widget

        try:
            save_widget(self.plots, path, "Stripewise benchmark")
        except OSError as exc:
            self.statusMessage.emit(str(exc))
            return
        self.statusMessage.emit(f"Plots written to {path}")

    def _compare_with_previous(self) -> None:
        run_id = self.saved_run_id
        if run_id is None:
            return

        def found(previous: int | None) -> None:
            if previous is None:
                QMessageBox.information(
                    self, "Compare", f"No earlier finished run on {self.target_path}."
                )
                return
            self.compareRuns.emit([previous, run_id])

        self.history.previous_run(run_id, self.target_path, found)


def _ram_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 8 * 2**30

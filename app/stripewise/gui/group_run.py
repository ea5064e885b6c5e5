"""A group run on the Benchmark page: the "Run on" row, per-host plots, heat maps and results,
and the page's Start, Cancel, progress and saved-run buttons while the hosts run. The heat maps
(each host's and all hosts') fill as each phase's interval latencies come in after it.

The page hands Start and Cancel here when the target is hosts; `GroupBenchService` runs the
driver off the GUI thread and delivers its events in batches, each with its `host`.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QVBoxLayout, QWidget

from stripewise.gui.bench_page_parts import BenchPageParts
from stripewise.gui.group_plots import TOTAL, GroupPlots
from stripewise.gui.group_results import GroupResults
from stripewise.gui.group_target import GroupTarget, hold_local_rows
from stripewise.gui.latency_map import LatencyMap
from stripewise.gui.plot_stack import PLOTS_MIN_PX
from stripewise.model.bench import BONNIE_NAMES, SpecError
from stripewise.model.host_group import spec_on_hosts
from stripewise.model.run_naming import run_name
from stripewise.model.wording import count_noun
from stripewise.protocol.events import PhaseFinished, PhaseStarted, RunError, RunWarning, Sample
from stripewise.services.group_bench import GroupBenchService, GroupRequest
from stripewise.services.host_groups import HostGroupsService

ALL_HOSTS = "all hosts"  # the heat map of the hosts' intervals summed


class GroupRunView(QObject):
    def __init__(
        self, page: BenchPageParts, service: GroupBenchService, groups: HostGroupsService
    ) -> None:
        super().__init__(page.form)  # gone with the page, as the form is
        self.page = page
        self.service = service
        self.groups = groups
        self.target = GroupTarget()
        self.plots = GroupPlots(service.series)  # merged by the driver's thread
        self.plots.setMinimumHeight(PLOTS_MIN_PX)  # as this machine's: the map gives way first
        self.latency_map = LatencyMap()  # each host's and all hosts' intervals, per phase
        self.latency_map.hide()  # until a phase's have come in (fio sends them at its end)
        self.view = QWidget()  # what the page's plot stack shows of a group run
        layout = QVBoxLayout(self.view)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plots, 3)
        layout.addWidget(self.latency_map, 2)
        self.results = GroupResults()
        self.running = False
        self.job_overrides: dict[str, str] | None = None  # benches and tests: ioengine=null
        self._steps: list[tuple[object, int]] = []  # (phase, pass) in the order they began
        self._planned = 1
        self._warnings: list[str] = []
        self._running_on = ""  # "Running on A, B", and what the run's latency log says
        self._latency_in: set[tuple[object, int]] = set()  # phases whose intervals came in
        self.target.editGroups.connect(self.edit_groups)
        self.target.changed.connect(self.sync_form)
        # a run on this machine holds the "Run on" row as it holds the form
        # (methods, not lambdas: Qt disconnects them when the page goes, the services stay)
        page.session.started.connect(self._hold_target)
        page.session.finished.connect(self._release_target)
        groups.groupsLoaded.connect(self.target.set_groups)
        self.target.set_groups(groups.groups)
        service.started.connect(self._on_started)
        service.refused.connect(self._on_refused)
        service.eventsArrived.connect(self._on_events)
        service.finished.connect(self._on_finished)
        service.crashed.connect(self._on_crashed)
        service.saved.connect(self._on_saved)
        service.saveFailed.connect(self._on_save_failed)
        groups.load()
        service.warm_up()
        self.target.align_with(page.form)

    def edit_groups(self) -> None:
        from stripewise.gui.host_groups_dialog import HostGroupsDialog

        dialog = HostGroupsDialog(self.groups, self.target)  # over its Edit button's row
        dialog.setModal(True)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def _hold_target(self, _started: object) -> None:
        self.target.set_running(True)

    def _release_target(self, _result: object) -> None:
        self.target.set_running(False)

    def sync_form(self) -> None:
        """On hosts the form's rows only this machine's run uses are off (hold_local_rows)."""
        if not self.target.on_hosts or self.running:
            if not self.running and not self.page.session.busy:
                self.page.form.set_running(False)  # back to what the local target allows
            return
        hold_local_rows(self.page.form)

    # --- start and cancel ----------------------------------------------------------------------
    def start(self) -> None:
        page = self.page
        try:
            hosts = self.target.hosts()
            path = self.target.remote_path()
        except SpecError as exc:  # under the "Run on" rows, as a typing error is
            self.target.error.setText(str(exc))
            self.target.error.setVisible(True)
            return
        try:
            spec = spec_on_hosts(page.form.spec_for(path))  # their rows are off on hosts
        except SpecError as exc:
            page.form.show_error(exc)  # under its field
            return
        group = self.target.group_name
        where = group or count_noun(len(hosts), "host")
        name = run_name(spec, f"{where}:{path}", page.form.preset.currentText())
        page.target_path = path  # the hosts' directory
        page.start_button.setEnabled(False)
        page.phase_label.setText(f"Starting on {count_noun(len(hosts), 'host')}...")
        self.service.start(GroupRequest(hosts, spec, name, group, self.job_overrides))

    def cancel(self) -> None:
        self.page.cancel_button.setEnabled(False)
        self.page.phase_label.setText("Cancelling on every host...")
        self.service.cancel()

    def follow_target(self) -> None:
        """The plots and results of where a run would go, switched as Run on changes rather
        than at Start, where laying the page out again held up the run's first events."""
        if not self.running and not self.page.session.busy:
            self.show(self.target.on_hosts)

    def show(self, group: bool) -> None:
        """The page's plots and results: the group's, or the one-machine run's."""
        self.page.plot_stack.setCurrentWidget(self.view if group else self.page.plots)
        self.page.result_stack.setCurrentWidget(self.results if group else self.page.results)

    # --- the run -------------------------------------------------------------------------------
    def _on_refused(self, message: str) -> None:
        self.page.start_button.setEnabled(not self.page.experiment_running)
        self.page.phase_label.setText(f"Not started: {message}")

    def _on_started(self, request: GroupRequest) -> None:
        page = self.page
        # first: QProgressBar.setValue repaints at once, and with the page changed around it
        # that repaint was the whole window's, inside this set-up
        page.progress.setValue(0)
        self.running = True
        self._steps, self._warnings = [], []
        # from the request: an experiment's passes start here too, not from this page's Start
        self._planned = max(1, len(request.spec.phases) * request.spec.repetitions)
        labels = [host.label for host in request.hosts]
        if page.experiment_running:  # the form is put away: the pass says what it runs
            page.pass_note.show_run(request.name, request.tags, request.spec, labels)
        self.plots.set_hosts(labels)
        self.latency_map.clear()
        self.latency_map.hide()
        self.results.set_hosts(labels)
        self.show(True)
        page.saved_run_id = None
        page.form.set_running(True)
        self.target.set_running(True)
        page.start_button.setEnabled(False)
        page.cancel_button.setEnabled(True)
        page.open_button.setEnabled(False)
        page.compare_button.setEnabled(False)
        page.warnings.hide()
        self._running_on = f"Running on {', '.join(labels)}"
        self._latency_in = set()
        if request.spec.logs_latency:  # fio sends them at each phase's end: said, not faked
            self._running_on += " · latency per interval after each phase"
            self.latency_map.expect(
                "Each host's latency per interval comes in at the end of each phase "
                "(fio sends its log then)."
            )
            self.latency_map.show()
        page.saved_label.setText(self._running_on)
        page.redraw.timeout.connect(self.latency_map.refresh)
        page.redraw.start()

    def _on_events(self, events: list[object]) -> None:
        for event in events:
            if isinstance(event, Sample) and event.latency_us is not None:
                self._latency_arrived(event)  # a late interval: its rates are no live figure
            elif isinstance(event, Sample):  # in its plot line already (service.series)
                if (event.host or TOTAL) == TOTAL:
                    self._show_progress(event)
            elif isinstance(event, PhaseStarted):
                step = (event.phase, event.repetition)
                if step not in self._steps:
                    self._steps.append(step)
                    self.page.phase_label.setText(
                        f"{BONNIE_NAMES[event.phase]}, pass {event.repetition}: starting"
                    )
            elif isinstance(event, PhaseFinished):
                self.results.add_phase_result(event)
            elif isinstance(event, RunError):
                self._host_failed(event.host or "a host", event.message)
            elif isinstance(event, RunWarning):
                where = f"{event.host}: " if event.host and event.host != TOTAL else ""
                self._warn(f"{where}{event.message or event.code}")

    def _latency_arrived(self, sample: Sample) -> None:
        """A late interval on its host's map (the total's on the all hosts' one), and which
        phases' have come in."""
        total = (sample.host or TOTAL) == TOTAL
        self.latency_map.add_sample(replace(sample, host=ALL_HOSTS) if total else sample)
        self.latency_map.show()
        step = (sample.phase, sample.repetition)
        if not total or step in self._latency_in:
            return
        self._latency_in.add(step)
        self.page.saved_label.setText(
            f"{self._running_on}: {len(self._latency_in)} of {self._planned} in"
        )

    def _show_progress(self, sample: Sample) -> None:
        done = max(0, len(self._steps) - 1)
        fraction = sample.progress or 0.0
        self.page.progress.setValue(round(1000 * min(1.0, (done + fraction) / self._planned)))
        if self._steps:
            phase, repetition = self._steps[-1]
            self.page.phase_label.setText(
                f"{BONNIE_NAMES[phase]}, pass {repetition}: "  # type: ignore[index]
                f"{100 * fraction:.0f} % on {count_noun(len(self.plots.hosts), 'host')}"
            )

    def _host_failed(self, host: str, message: str) -> None:
        why = message.removeprefix(f"{host}: ") or "failed"  # the driver names the host too
        self.plots.mark_failed(host)
        self.results.set_failed(host, why)
        self._warn(f"{host} failed: {why}; the total is partial")

    def _warn(self, line: str) -> None:
        if line not in self._warnings:
            self._warnings.append(line)
        self.page.warnings.setText("<br>".join(f"&#9888; {w}" for w in self._warnings))
        self.page.warnings.setVisible(True)

    def _on_finished(self, outcome: object) -> None:
        status = str(getattr(outcome, "status", "ended"))
        failed = [h.host for h in getattr(outcome, "hosts", ()) if h.status != "complete"]
        if status == "complete" and not failed:  # first, as in _on_started: it repaints at once
            self.page.progress.setValue(1000)
        for host in getattr(outcome, "hosts", ()):
            if host.status not in ("complete", "cancelled"):
                self._host_failed(host.host, host.error or host.status)
        self._end()
        partial = f", partial: without {', '.join(failed)}" if failed else ""
        elapsed = float(getattr(outcome, "elapsed_s", 0.0))
        self.page.phase_label.setText(f"Group run {status} in {elapsed:.0f} s{partial}")
        self.page.statusMessage.emit(f"Group run {status}{partial}")
        self.page.saved_label.setText("Saving to the history...")

    def _on_crashed(self, message: str) -> None:
        self._end()
        self.page.phase_label.setText(f"Group run failed: {message}")
        self.page.saved_label.setText("Nothing was saved.")

    def _end(self) -> None:
        page = self.page
        self.running = False
        page.redraw.stop()
        page.redraw.timeout.disconnect(self.latency_map.refresh)
        self.plots.end_run()
        self.latency_map.refresh()
        self.results.set_ended()
        page.start_button.setEnabled(not page.experiment_running)
        page.cancel_button.setEnabled(False)
        # the form given back on the next turn: done with the last plots' layout and paint,
        # the two held the GUI up to 40 ms at a run's end
        QTimer.singleShot(0, self._release_form)

    def _release_form(self) -> None:
        if self.running:  # a new run already (a test's, or a very quick admin)
            return
        self.page.form.set_running(False)
        self.target.set_running(False)
        self.sync_form()

    def _on_saved(self, run_id: int) -> None:
        page = self.page
        page.saved_run_id = run_id
        page.saved_label.setText(f"Saved as group run {run_id}")
        page.saved_label.setToolTip(f"Saved as group run {run_id} in {page.history.display_url}")
        page.open_button.setEnabled(True)
        page.compare_button.setEnabled(True)
        page.history.load_runs()

    def _on_save_failed(self, message: str) -> None:
        self.page.saved_label.setText(message)
        self.page.statusMessage.emit(message)

    def set_binary_units(self, mib: bool) -> None:
        self.plots.set_binary_units(mib)
        self.results.set_binary_units(mib)

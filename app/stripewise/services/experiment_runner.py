"""Runs an experiment from the GUI: a `SweepPlan` or a `LatencySearch` driven through the
window's own `BenchSession` and the helper's journaled tuning verbs.

Per visit: apply the point's tunables (each read back and checked), benchmark one pass (it
streams on the Benchmark page and is saved, tagged `experiment` and `experiment:<id>`), revert,
record the figure with the saved run's id. As the A/B does, whatever happens nothing the
experiment wrote stays applied: a cancel, a failed run, a refused write or the window closing
all revert first. The experiment's own row goes through the history's serial writer.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QObject, Signal

from stripewise.model.experiment import ExperimentError, Kind, Values, guards_of, label, not_started
from stripewise.model.experiment_plan import LatencySearch, Plan, SweepPlan
from stripewise.model.experiment_result import ExperimentResult
from stripewise.model.run import RunStatus
from stripewise.protocol.events import RunResult
from stripewise.protocol.group import HostFigures, with_hosts
from stripewise.protocol.tuning import ApplyArgs, RevertArgs
from stripewise.protocol.tuning_replies import ApplyReply
from stripewise.services.bench_session import BenchRequest, BenchSession
from stripewise.services.experiment_group_pass import GroupPass, GroupPassEnd, GroupPassRequest
from stripewise.services.experiment_setup import (
    ExperimentRequest,
    Prepared,
    measured,
    point_args,
    prepare,
    tunable_settings,
)
from stripewise.services.group_bench import GroupBenchService
from stripewise.services.history import HistoryService
from stripewise.services.tasks import run_in_background
from stripewise.services.tuning import TuningService

__all__ = ["EXPERIMENT_TAG", "ExperimentRequest", "ExperimentRunner", "Prepared"]

UNKNOWN_ETA = -1.0


EXPERIMENT_TAG = "experiment"  # on each of an experiment's runs, with `experiment:<id>`


class ExperimentRunner(QObject):
    prepared = Signal(object)  # Prepared: the design checked, its starting settings read
    progress = Signal(str, int, int, int, float)  # text, visits done, at least, at most, ETA s
    point = Signal(object)  # Point: a pass recorded (or the starting settings' first)
    finished = Signal(object)  # ExperimentResult: ended, cancelled or not, values put back
    failed = Signal(str)  # did not start, or could not put a value back: says which

    def __init__(
        self,
        session: BenchSession,
        tuning: TuningService,
        history: HistoryService,
        parent: QObject | None = None,
        group_bench: GroupBenchService | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.tuning = tuning
        self.history = history
        # over hosts: each pass a group run on the window's group service
        self.group = None if group_bench is None else GroupPass(group_bench, self)
        if self.group is not None:
            self.group.ended.connect(self._on_group_pass_ended)
        self._per_host: list[HostFigures] = []  # each visit over hosts: every host's figure
        self.running = False
        self.setup: Prepared | None = None
        self.plan: Plan | None = None
        self.experiment_id: int | None = None
        self.result: ExperimentResult | None = None
        self._cancelled = False
        self._values: Values | None = None  # the point being visited
        self._journal: str | None = None  # the apply in force, to revert
        self._outcome: RunResult | None = None  # the bench's end, waiting for its save
        self._run_id: int | None = None
        self._saved = False
        self._in_bench = False
        self._started_at = 0.0
        self._visit_s: list[float] = []
        self._visit_began = 0.0
        self._seed: int | None = None
        self._connected = False  # to the session's signals, while visiting points
        self._asking = False  # inside session.start(): a refusal now is this pass's

    # --- start --------------------------------------------------------------------------------
    def start(self, request: ExperimentRequest) -> None:
        """Checks the design off the GUI thread, files the experiment, then visits points."""
        if request.hosts and self.group is None:
            self.failed.emit("this window runs no group runs")
            return
        # one run at a time where its passes go: this machine's session, or the hosts'
        busy = self.group.busy if request.hosts and self.group is not None else self.session.busy
        if self.running or busy:
            self.failed.emit("a benchmark is already running")
            return
        self.running, self._cancelled = True, False
        self._per_host, self._visit_s = [], []
        self.result, self.plan, self.setup, self.experiment_id = None, None, None, None
        self._seed = request.seed
        self.progress.emit("Reading the target's settings...", 0, 0, 0, UNKNOWN_ETA)
        run_in_background(lambda: prepare(request), self._on_prepared, self._on_not_prepared)

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def _alive(self) -> bool:
        return shiboken6.isValid(self)

    def _on_not_prepared(self, exc: Exception) -> None:
        if self._alive():
            self.running = False
            why = str(exc) if isinstance(exc, ExperimentError | OSError) else repr(exc)
            self.failed.emit(why.removeprefix("--vary "))  # the CLI's option: no field here

    def _on_prepared(self, setup: Prepared) -> None:
        if not self._alive():
            return
        if self._cancelled:
            self.running = False
            self.failed.emit("cancelled before it started: nothing was applied")
            return
        design = setup.design
        tuned = [p.name for p in design.parameters if p.kind is Kind.TUNABLE]
        refusal = self.tuning.helper.unavailable_reason
        if tuned and refusal:  # no point could be set: said before anything runs
            self.running = False
            self.failed.emit(f"varying {', '.join(tuned)} needs the privileged helper: {refusal}")
            return
        self.setup = setup
        if setup.search is not None:
            self.plan = LatencySearch(design, setup.search)
        else:
            self.plan = SweepPlan(design, setup.baseline, random.Random(self._seed))
        self.prepared.emit(setup)
        from stripewise.history.experiments import create_experiment

        database = self.history.database
        self.history.writer.submit(
            lambda: create_experiment(database, setup.name, design),
            self._on_created,
            lambda exc: self._on_not_prepared(RuntimeError(f"the history refused it: {exc}")),
        )

    def _on_created(self, experiment_id: int) -> None:
        if not self._alive():
            return
        self.experiment_id = int(experiment_id)
        self._started_at = time.monotonic()
        if self.setup is not None and self.setup.hosts:  # its passes are the group service's:
            self._next()  # a run another page starts on this machine is none of them
            return
        self._connected = True
        self.session.started.connect(self._on_bench_started)
        self.session.finished.connect(self._on_bench_finished)
        self.session.refused.connect(self._on_bench_refused)
        self.session.recorded.connect(self._on_recorded)
        self.session.saved.connect(self._on_saved)
        self.session.saveFailed.connect(self._on_save_failed)
        self._next()

    # --- one visit: apply, bench, revert, record -----------------------------------------------
    def _next(self) -> None:
        assert self.plan is not None and self.setup is not None
        if self._cancelled:
            self._end(cancelled=True)
            return
        values = self.plan.next_visit()
        if values is None:
            self._end(cancelled=False)
            return
        self._values, self._outcome, self._run_id, self._saved = values, None, None, False
        self._visit_began = time.monotonic()
        settings = tunable_settings(self.setup, values)
        if not settings:
            self._bench()
            return
        self._say(f"applying {label(values)}")
        journal_label = f"Experiment {self.experiment_id}: {label(values)}"
        # temporary: the helper puts it back itself if its session ends first (the GUI or the
        # helper killed mid-point), and the next root helper if the helper died
        args = ApplyArgs(settings, journal_label, temporary=True)
        self.tuning.call(args, self._on_applied, self._apply_refused)

    def _on_applied(self, reply: ApplyReply) -> None:
        if not self.running:  # the window closed meanwhile: put it back at once
            self.tuning.call(RevertArgs(journal=reply.journal), lambda _r: None, lambda _e: None)
            return
        self._journal = reply.journal
        differ = [s for s in reply.settings if not s.matches]
        if differ:
            said = "; ".join(
                f"{s.device or 'global'} {s.key} reads {s.after} after writing {s.written}"
                for s in differ
            )
            self._outcome = None
            self._revert_then(lambda: self._fail_point(f"not in force as written: {said}"))
            return
        if self._cancelled:
            self._revert_then(self._next)
            return
        self._bench()

    def _apply_refused(self, message: str) -> None:
        if self.running:
            self._fail_point(f"the helper did not apply it: {message}")

    def _bench(self) -> None:
        assert self.setup is not None and self._values is not None
        self._say(f"benchmark of {label(self._values)}")
        point_label = label(self._values)
        if self.setup.hosts:
            self._bench_on_hosts(f"Experiment {self.setup.name}: {point_label}")
            return
        request = BenchRequest(
            point_args(self.setup, self._values),
            f"Experiment {self.setup.name}: {point_label}",
            tags=(EXPERIMENT_TAG, f"{EXPERIMENT_TAG}:{self.experiment_id}"),
        )
        self._in_bench, self._asking = True, True
        self.session.start(request)  # refused at once when another run holds the session
        self._asking = False

    def _bench_on_hosts(self, name: str) -> None:
        setup, values, group = self.setup, self._values, self.group
        assert setup is not None and values is not None and group is not None
        self._in_bench = True
        group.start(
            GroupPassRequest(
                values,
                setup.hosts,
                point_args(setup, values).spec,
                name,
                setup.group,
                (EXPERIMENT_TAG, f"{EXPERIMENT_TAG}:{self.experiment_id}"),
                setup.design.objective,
            )
        )

    def _on_group_pass_ended(self, end: GroupPassEnd) -> None:
        """A pass over hosts ended and was filed: its total recorded, or why it failed."""
        if not self._in_bench or self._values is None:
            return
        self._in_bench = False
        if end.figures is None:
            if self._cancelled:
                self._next()
            else:
                self._fail_point(end.error or "the group run ended without a figure")
            return
        self._per_host.append(end.figures)
        self._record(self._values, end.figures.total, None, end.run_id)

    def _on_bench_started(self, _started: object) -> None:
        if self._in_bench and self._cancelled:  # cancelled while the helper was starting it
            self.session.cancel()

    def _on_recorded(self, run_id: int) -> None:
        """The run's row exists: a short run may end before its row is written. The first
        row made after this pass's start is its own (one serial writer makes them in order),
        not a run the Benchmark page started once this one ended."""
        if self._run_id is None and (self._in_bench or self._outcome is not None):
            self._run_id = run_id

    def _on_bench_finished(self, result: RunResult) -> None:
        if not self._in_bench:
            return
        self._in_bench = False
        self._outcome = result
        if self._journal is not None:
            self._revert_then(self._maybe_record)
        else:
            self._maybe_record()

    def _on_saved(self, run_id: int, _status: str) -> None:
        if self._outcome is not None and run_id == self._run_id and not self._saved:
            self._saved = True
            self._maybe_record()

    def _on_save_failed(self, _message: str) -> None:
        """The run waits in the spool (or could not be written): its pass still counts."""
        if self._outcome is not None and not self._saved:
            self._saved, self._run_id = True, None
            self._maybe_record()

    def _on_bench_refused(self, message: str) -> None:
        """This pass's start refused, at once or by the helper; not another page's start
        refused because this pass holds the session."""
        if self._in_bench and (self._asking or not self.session.busy):
            self._in_bench = False
            assert self.plan is not None
            if self.plan.visits == 0 and self._journal is None:
                self._not_started(message)
            elif self._journal is not None:
                self._revert_then(lambda: self._fail_point(f"did not start: {message}"))
            else:
                self._fail_point(f"did not start: {message}")

    def _not_started(self, message: str) -> None:
        """The first benchmark, the starting settings as the form has them, refused before
        any I/O (a size past the device's end, a write not confirmed...): no point can run.
        Said as the CLI says it; the experiment, with no pass, is not kept."""
        self._stop()
        said = not_started(message)

        def announce(_done: object = None) -> None:
            if self._alive():
                self.failed.emit(said)

        experiment_id = self.experiment_id
        if experiment_id is None:
            announce()
            return
        from stripewise.history.experiments import discard_experiment

        database = self.history.database
        self.history.writer.submit(
            lambda: discard_experiment(database, experiment_id), announce, announce
        )

    def _maybe_record(self) -> None:
        """Once the run ended, is saved, and nothing is applied: its pass, then the next."""
        result = self._outcome
        if result is None or not self._saved or self._journal is not None:
            return
        assert self.plan is not None and self._values is not None
        values, self._outcome = self._values, None
        if result.status is RunStatus.CANCELLED:  # this page's Cancel or the Benchmark page's:
            self._cancelled = True  # either means the experiment, not one failed point
        if result.status is not RunStatus.COMPLETE:
            if self._cancelled:
                self._next()
                return
            why = result.error or result.status.value
            self._fail_point(f"the run ended {result.status.value}: {why}")
            return
        figure, p99 = measured(result, self.plan.design.objective)
        if figure is None:
            self._fail_point(f"the run measured no {self.plan.design.objective.label}")
            return
        guards = guards_of(result.results, self.plan.design.objective)
        self._record(values, figure, p99, self._run_id, guards)

    def _record(
        self,
        values: Values,
        figure: float,
        p99: float | None,
        run: int | None,
        guards: tuple[str, ...] = (),
    ) -> None:
        """A pass's figure on its point, then the next visit."""
        assert self.plan is not None
        self.plan.record(values, figure, p99, run, guards)
        self._visit_s.append(time.monotonic() - self._visit_began)
        found = next((p for p in self.plan.points if p.values == values), None)
        if found is not None:
            self.point.emit(found)
        self._next()

    def _fail_point(self, message: str) -> None:
        assert self.plan is not None and self._values is not None
        self.plan.fail(self._values, message)
        self._say(f"{label(self._values)} failed: {message}")
        self._next()

    def _revert_then(self, then: Callable[[], None]) -> None:
        journal = self._journal
        assert journal is not None

        def reverted(_reply: object) -> None:
            self._journal = None
            then()

        self.tuning.call(RevertArgs(journal=journal), reverted, self._revert_refused)

    def _revert_refused(self, message: str) -> None:
        """A value could not be put back: the experiment stops there, saying which."""
        journal, self._journal = self._journal, None
        what = "" if self._values is None else f" of {label(self._values)}"
        self._end(
            cancelled=True,
            not_restored=f"journal {journal}{what}: {message}; the helper puts it back the "
            "next time it starts (applied as temporary)",
        )

    # --- the end ------------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop at once: the running pass is cancelled, what is applied put back."""
        if not self.running or self._cancelled:
            return
        self._cancelled = True
        self._say("cancelling")
        if self._in_bench and self.group is not None and self.setup and self.setup.hosts:
            self.group.cancel()
        elif self._in_bench:
            self.session.cancel()

    def _end(self, *, cancelled: bool, not_restored: str = "") -> None:
        """Everything put back (or said not to be): the result filed, then announced, so
        whoever hears `finished` finds the experiment in the history as it ended."""
        assert self.plan is not None
        self._stop()
        try:
            result = self.plan.result(restored=not not_restored, experiment=self.experiment_id)
        except ValueError:  # the starting settings were never measured: no answer at all
            result = None
        if result is not None and self.setup is not None and self.setup.hosts:
            result = with_hosts(result, self._per_host)  # each host's own figure per visit
        status = "failed" if not_restored or result is None else "complete"
        if cancelled and status == "complete":
            status = "cancelled"
        self.result = result

        def announce(_filed: object = None) -> None:
            if not self._alive():
                return
            if not_restored:
                self.failed.emit(f"could not put back {not_restored}")
            elif result is None:
                failed = getattr(self.plan, "failed", {})
                why = "; ".join(f"{label(v)}: {m}" for v, m in failed.items()) or "cancelled"
                self.failed.emit(f"the starting settings could not be measured ({why})")
            else:
                self.finished.emit(result)

        def not_filed(exc: Exception) -> None:
            if self._alive():
                self.progress.emit(
                    f"The experiment's result was not saved: {exc}", 0, 0, 0, UNKNOWN_ETA
                )
                announce()

        experiment_id = self.experiment_id
        if result is None or experiment_id is None:
            announce()
            return
        from stripewise.history.experiments import finish_experiment

        database = self.history.database
        self.history.writer.submit(
            lambda: finish_experiment(database, experiment_id, result, status),
            announce,
            not_filed,
        )

    def _stop(self) -> None:
        if not self.running:
            return
        self.running, self._in_bench = False, False
        if not self._connected:  # it stopped before its first visit
            return
        self._connected = False
        self.session.started.disconnect(self._on_bench_started)
        self.session.finished.disconnect(self._on_bench_finished)
        self.session.refused.disconnect(self._on_bench_refused)
        self.session.recorded.disconnect(self._on_recorded)
        self.session.saved.disconnect(self._on_saved)
        self.session.saveFailed.disconnect(self._on_save_failed)

    def shutdown(self) -> None:
        """The window closes mid-experiment: ask the helper to revert before its stdin closes."""
        if not self.running:
            return
        journal = self._journal
        self._stop()
        self._journal = None
        if self.group is not None:
            self.group.forget()  # the group service stops the hosts and files the run
        if journal is not None:
            self.tuning.call(RevertArgs(journal=journal), lambda _r: None, lambda _e: None)

    # --- progress -----------------------------------------------------------------------------
    def _say(self, what: str) -> None:
        plan = self.plan
        if plan is None:
            return
        done = sum(len(p.passes) for p in plan.points)
        at_least, at_most = plan.planned_visits()
        at_least, at_most = max(at_least, done + 1), max(at_most, done + 1)
        eta = UNKNOWN_ETA
        if self._visit_s:
            per_visit = sum(self._visit_s) / len(self._visit_s)
            eta = per_visit * max(0, at_least - done)
        text = f"Pass {done + 1} of {at_least}" + (f" to {at_most}" if at_most > at_least else "")
        self.progress.emit(f"{text}: {what}", done, at_least, at_most, eta)

"""One visit of an experiment's point through the CLI's helper: apply, read back, benchmark,
revert. The helper's journal holds what was there before each apply, so a revert puts back
exactly that; `put_back` reverts whatever a cancel or a failure left applied."""

from __future__ import annotations

import signal
from dataclasses import dataclass, replace
from typing import Any, Protocol

from stripewise.cli.bench_save import Recording
from stripewise.cli.experiment_design import Prepared
from stripewise.cli.helper_client import HelperClient
from stripewise.model.experiment import (
    WORKLOAD,
    Values,
    apply_workload,
    guards_of,
    label,
    measured,
)
from stripewise.model.run import RunStatus
from stripewise.model.tunables import Scope, tunable
from stripewise.protocol.client import Reply
from stripewise.protocol.events import Event, PhaseFinished, RunResult, Sample
from stripewise.protocol.tuning import ApplyArgs, RevertArgs, TuningSetting

CANCEL_GRACE_S = 5.0  # as `bench`: the helper ends a cancelled run within a second
_POLL_S = 0.25
FATAL_REFUSALS = ("not_privileged", "io_error", "refused")  # no other point would fare better


@dataclass(frozen=True)
class VisitOutcome:
    figure: float | None = None
    p99_us: float | None = None
    run_id: int | None = None
    error: str | None = None  # the point failed: why
    refused: bool = False  # the helper refused to start its benchmark: nothing ran
    elapsed_s: float | None = None  # the run's own time, as its engine measured it
    guards: tuple[str, ...] = ()  # the guards the judged phase tripped (model.guards)


class PointVisitor(Protocol):
    """What runs one point: here through the helper (`Visitor`), or on a host group
    (`experiment_hosts.GroupVisitor`)."""

    signal: signal.Signals | None
    lost: bool  # no further visit can run
    notes: list[str]
    unrestored: str  # what could not be put back, when `put_back` says False

    def handle_signal(self, number: int, _frame: object) -> None: ...
    def visit(self, values: Values) -> VisitOutcome: ...
    def put_back(self) -> bool: ...


class Visitor:
    def __init__(
        self,
        client: HelperClient,
        prepared: Prepared,
        url: str | None,
        experiment_id: int | None,
        name: str,
    ) -> None:
        self.client = client
        self.prepared = prepared
        self.url = url
        self.experiment_id = experiment_id
        self.name = name
        self.signal: signal.Signals | None = None
        self.lost = False  # the helper went away, or refuses to tune: no visit can go on
        self.notes: list[str] = []
        self.unrestored = ""
        self._journal: str | None = None  # the apply in force, to revert
        self._running = False

    def handle_signal(self, number: int, _frame: object) -> None:
        if self.signal is None:
            self.signal = signal.Signals(number)
        if self._running:
            self.client.cancel()

    def settings(self, values: Values) -> tuple[TuningSetting, ...]:
        """The point's tunables, each on every device of the target (md knobs on md arrays)."""
        found = []
        for name, value in values:
            if name not in WORKLOAD:
                knob = tunable(name)
                if knob.scope is Scope.GLOBAL:
                    found.append(TuningSetting(knob.key, value))
                    continue
                for device in self.prepared.design.devices:
                    if knob.scope is Scope.DEVICE or device.startswith("md"):
                        found.append(TuningSetting(knob.key, value, device))
        return tuple(found)

    def visit(self, values: Values) -> VisitOutcome:
        settings = self.settings(values)
        if settings and values != self.prepared.baseline:
            refused = self._apply(settings, values)
            if refused is not None:
                return VisitOutcome(error=refused)
        try:
            if self.signal is not None:
                return VisitOutcome(error="cancelled")
            return self._bench(values)
        finally:
            if not self.lost:
                self.put_back()

    def _apply(self, settings: tuple[TuningSetting, ...], values: Values) -> str | None:
        reply = self.client.ask(
            ApplyArgs(settings, f"{self.name}: {label(values)}", temporary=True)
        )
        if reply is None or not reply.ok or reply.result is None:
            # the helper gone, or not root: no point could be set; a value the device refuses
            # (nr_requests beyond its hardware queue with scheduler none) fails this point only
            self.lost = reply is None or reply.code in FATAL_REFUSALS
            why = self.client.stopped_reason() if reply is None else reply.message
            return f"could not apply {label(values)}: {why}"
        self._journal = reply.result.journal
        for applied in reply.result.settings:
            note = (
                f"{applied.device or 'vm'}: {applied.key} {applied.written} reads back as "
                f"{applied.after}"
            )
            if not applied.matches and note not in self.notes:  # once, however many visits
                self.notes.append(note)
        return None

    def put_back(self) -> bool:
        """Revert the apply in force, if any; False when it could not be (said in
        `unrestored`: the journal entry to revert by hand)."""
        if self._journal is None:
            return True
        journal, self._journal = self._journal, None
        reply = None if self.client.ended else self.client.ask(RevertArgs(journal))
        if reply is not None and reply.ok:
            return True
        why = self.client.stopped_reason() if reply is None else reply.message
        self.unrestored = (
            f"the experiment's last values were not put back ({why}); the next helper to start "
            f"restores them, or run `stripewise tune revert --journal {journal}`"
        )
        return False

    def _bench(self, values: Values) -> VisitOutcome:
        start = self.prepared.start
        spec = replace(apply_workload(start.spec, values), repetitions=1)
        reply = self.client.ask(replace(start, spec=spec))
        if reply is None:
            self.lost = True
            return VisitOutcome(error=self.client.stopped_reason())
        if reply.result is None:
            return VisitOutcome(error=reply.message, refused=reply.code == "refused")
        begun = reply.result
        recording = None
        if self.url is not None:
            tags = ("experiment", f"experiment:{self.experiment_id}")
            recording = Recording(self.url, f"{self.name}: {label(values)}", begun, tags)
        self._running = True
        if self.signal is not None:  # came while the run was being started
            self.client.cancel()
        try:
            result = self._follow(recording)
        finally:
            self._running = False
        if result is None:
            self.lost = True
            return VisitOutcome(error="lost the helper mid-run")
        run_id = recording.finish(result).run_id if recording is not None else None
        if result.status is not RunStatus.COMPLETE:
            why = f"the run ended {result.status}" + (f": {result.error}" if result.error else "")
            return VisitOutcome(run_id=run_id, error=why)
        try:
            figure, p99 = measured(result.results, self.prepared.design.objective)
        except ValueError as exc:
            return VisitOutcome(run_id=run_id, error=str(exc))
        guards = guards_of(result.results, self.prepared.design.objective)
        return VisitOutcome(figure, p99, run_id, elapsed_s=result.elapsed_s, guards=guards)

    def _follow(self, recording: Recording | None) -> RunResult | None:
        """This run's events until its result; None when the helper's output ended."""
        client = self.client
        client.samples.clear()
        client.phase_results.clear()
        waited = 0.0
        while True:
            message: Reply[Any] | Event | None
            if client.pending_events:
                message = client.pending_events.pop(0)
            else:
                try:
                    message = client.read(_POLL_S)
                except TimeoutError:
                    waited = waited + _POLL_S if self.signal is not None else 0.0
                    if waited > CANCEL_GRACE_S:
                        return None
                    continue
            if message is None:
                return None
            if isinstance(message, Sample):
                if recording is not None:
                    recording.add(message)
            elif isinstance(message, RunResult):
                return message
            elif isinstance(message, PhaseFinished) and recording is not None:
                client.phase_results.append(message)
                recording.phase_finished(client.phase_results)

"""One benchmark at a time from the GUI: start it through the helper, follow its events, save it.

The helper (started as root or as the user, see `HelperClient`) runs the engine; its events
arrive here on the GUI thread and are re-emitted as typed signals for the page, while a
`RunRecorder` writes the run to the history as it streams. A helper lost mid-run (killed,
crashed) ends the run as `aborted`, with every sample received and the phases that finished.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from stripewise.history.recorder_id import this_recorder
from stripewise.model.health import DiskHealth
from stripewise.model.run import RunStatus
from stripewise.model.run_context import RunContext
from stripewise.model.topology import Inventory
from stripewise.protocol.events import (
    Event,
    PhaseFinished,
    PhaseStarted,
    RunError,
    RunResult,
    RunWarning,
    Sample,
    SteadyRound,
)
from stripewise.protocol.verbs import BenchCancelArgs, BenchStartArgs, BenchStarted
from stripewise.services.helper_client import HelperClient
from stripewise.services.history import HistoryService
from stripewise.services.run_recorder import RunHeader, RunRecorder
from stripewise.unfinished_run import unfinished_result

if TYPE_CHECKING:
    from stripewise.services.hardware import HardwareService


@dataclass(frozen=True)
class BenchRequest:
    """What the page asks for: the helper's `bench.start` arguments plus how to file the run."""

    args: BenchStartArgs
    name: str
    array_name: str | None = None  # a planned array this target realises (planner convention)
    tags: tuple[str, ...] = field(default=())


def gather_context(
    started: BenchStarted,
    request: BenchRequest,
    inventory: Inventory | None,
    health: Mapping[str, DiskHealth] | None = None,
) -> RunContext:
    """Runs on the history's serial writer thread (the recorder's work): reads sysfs,
    mountinfo and /proc. `health`: the disks' SMART health as last read, kept per disk."""
    from stripewise.inventory.bench_context import collect_context

    target = started.spec.target
    gathered = collect_context(
        target,
        started.disks,
        engine=started.engine,
        engine_version=started.engine_version,
        inventory=inventory,
        layers=started.layers,
        health=health,
    )
    context = replace(
        RunContext.from_json(gathered),
        test_file=started.target if started.target != target else None,
        recorder=this_recorder(),
    )
    return context.with_array_name(request.array_name) if request.array_name else context


class BenchSession(QObject):
    started = Signal(object)  # BenchStarted: the run, its test file, disks, normalised spec
    phaseStarted = Signal(object)  # PhaseStarted
    sampleArrived = Signal(object)  # Sample
    phaseFinished = Signal(object)  # PhaseFinished
    roundEnded = Signal(object)  # SteadyRound: a steady-state write phase's round
    warningRaised = Signal(object)  # RunWarning or RunError
    finished = Signal(object)  # RunResult: the helper's, or one made here when it was lost
    refused = Signal(str)  # the run did not start (bad target, busy...)
    recorded = Signal(int)  # history id as soon as the run row exists
    saved = Signal(int, str)  # history id, final status: all written
    saveFailed = Signal(str)

    def __init__(
        self, helper: HelperClient, history: HistoryService, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._helper = helper
        self._history = history
        self.inventory: Inventory | None = None  # the hardware map's, for controller and slot
        # this machine's disks' SMART health as last read (keep_health), by name
        self.health: Mapping[str, DiskHealth] = {}
        self.run_id: str | None = None  # the helper's id of the running benchmark
        self.request: BenchRequest | None = None  # the running (or last) benchmark's
        self.recorder: RunRecorder | None = None
        self._starting = False
        self._started: BenchStarted | None = None  # for a run_result made here
        self._began = 0.0
        self._phase_results: list[PhaseFinished] = []
        helper.eventReceived.connect(self._on_event)
        helper.failed.connect(self._on_helper_failed)

    @property
    def busy(self) -> bool:
        return self._starting or self.run_id is not None

    def start(self, request: BenchRequest) -> None:
        if self.busy:
            self.refused.emit("a benchmark is already running")
            return
        self._starting = True
        self._helper.request(
            request.args,
            lambda started: self._on_started(request, started),
            self._on_refused,
            privileged=False,
        )

    def cancel(self) -> None:
        if self.run_id is not None:
            self._helper.request(
                BenchCancelArgs(), lambda _r: None, lambda _e: None, privileged=False
            )

    def keep_health(self, hardware: HardwareService) -> None:
        """This machine's disk health, read again: each run's context keeps its disks'."""
        self.health = hardware.health_of(hardware.machine)

    def _on_refused(self, message: str) -> None:
        self._starting = False
        self.refused.emit(message)

    def _on_started(self, request: BenchRequest, started: BenchStarted) -> None:
        self._starting = False
        self.run_id, self.request = started.run, request
        self._started, self._began, self._phase_results = started, time.monotonic(), []
        target = started.spec.target
        inventory = self.inventory
        health = self.health
        recorder = RunRecorder(self._history.database, self._history.writer, self)
        recorder.created.connect(self.recorded)
        recorder.saved.connect(self.saved)
        recorder.failed.connect(self.saveFailed)
        recorder.begin(
            RunHeader(
                name=request.name,
                target=target,
                engine=started.engine,
                engine_version=started.engine_version,
                spec=started.spec,
                context=lambda: gather_context(started, request, inventory, health),
                tags=request.tags,
            )
        )
        self.recorder = recorder
        self.started.emit(started)

    def _on_event(self, event: Event) -> None:
        if self.run_id is None or event.run != self.run_id:
            return
        if isinstance(event, Sample):
            if self.recorder is not None:
                self.recorder.add_sample(event)
            self.sampleArrived.emit(event)
        elif isinstance(event, PhaseStarted):
            self.phaseStarted.emit(event)
        elif isinstance(event, PhaseFinished):
            self._phase_results.append(event)
            self.phaseFinished.emit(event)
        elif isinstance(event, SteadyRound):
            self.roundEnded.emit(event)
        elif isinstance(event, RunWarning | RunError):
            self.warningRaised.emit(event)
        elif isinstance(event, RunResult):
            self._end(event)

    def _on_helper_failed(self, message: str) -> None:
        if self.run_id is not None:
            self._end_unreported(RunStatus.ABORTED, f"lost the helper mid-run ({message})")

    def _end_unreported(self, status: RunStatus, message: str) -> None:
        """The run ends without the helper's run_result: file what arrived."""
        assert self._started is not None
        elapsed = time.monotonic() - self._began
        self._end(unfinished_result(status, message, self._phase_results, self._started, elapsed))

    def _end(self, result: RunResult) -> None:
        self.run_id = None
        if self.recorder is not None:
            self.recorder.finish(result)
        self.finished.emit(result)

    def shutdown(self) -> None:
        """Closing the window: the helper stops the run when its stdin closes; file it."""
        if self.run_id is not None:
            self._end_unreported(RunStatus.CANCELLED, "the window was closed")
        if self.recorder is not None:
            self.recorder.wait()

"""A scaling test from the GUI (the Hardware page's Measure Ceiling dialog): `bench.scaling`
through the window's helper, its passes followed on the GUI thread, its answer analysed and
filed as `stripewise bench scaling --save` files it (history/scaling_runs.py), through the
history's writer. Nothing here blocks: replies and events arrive as the helper sends them.

A cancel is the helper's `bench.cancel`, as the CLI's Ctrl-C; a helper that does not end the
run within CANCEL_GRACE_S of it, or that is lost, ends it here: filed with what arrived.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime

from PySide6.QtCore import QObject, QTimer, Signal

from stripewise.history.scaling_runs import outcome_of, save_scaling_run
from stripewise.model.scaling_set import DiskSet
from stripewise.protocol.events import Event, RunError, Sample
from stripewise.protocol.scaling import ScalingArgs, ScalingEnd, ScalingPass, ScalingStarted
from stripewise.protocol.verbs import BenchCancelArgs
from stripewise.protocol.wire import ProtocolError
from stripewise.services.helper_client import HelperClient
from stripewise.services.history import HistoryService

CANCEL_GRACE_S = 5.0  # the helper ends a cancelled pass within a read or two


@dataclass(frozen=True)
class ScalingRequest:
    """What the dialog asks for: the disks, bytes read from each per pass, passes per step."""

    chosen: DiskSet
    size: int
    repeat: int
    block_size: int = 2**20
    sample_rate_hz: float = 2.0


@dataclass(frozen=True)
class ScalingProgress:
    """Where the test is after a pass: pass `done` of `visits`, that pass, and the time left
    (the passes' mean time so far x the passes left)."""

    done: int
    visits: int
    last: ScalingPass
    eta_s: float


class ScalingSession(QObject):
    started = Signal(object)  # ScalingStarted: the plan as the helper resolved it
    progressed = Signal(object)  # ScalingProgress: after each pass
    finished = Signal(object)  # ScalingResult: the answer, also when cancelled or failed
    refused = Signal(str)  # the test did not start: one line
    failed = Signal(str)  # a read error or a lost helper: one line
    saved = Signal(int)  # the history's id of the run
    saveFailed = Signal(str)

    def __init__(
        self, helper: HelperClient, history: HistoryService, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._helper = helper
        self._history = history
        self._request: ScalingRequest | None = None
        self._started: ScalingStarted | None = None
        self._started_at = datetime.now(UTC)
        self._began = 0.0
        self._starting = False
        self._cancelled = False
        self._saving = False
        self.passes: dict[int, list[float]] = {}
        self.samples: list[Sample] = []
        self._done = 0
        self._grace = QTimer(self)
        self._grace.setSingleShot(True)
        self._grace.setInterval(int(CANCEL_GRACE_S * 1000))
        self._grace.timeout.connect(lambda: self._end_here("cancelled", "cancelled"))
        helper.eventReceived.connect(self._on_event)
        helper.failed.connect(self._on_helper_failed)

    @property
    def running(self) -> bool:
        """Asked for, or reading: the helper's until it ends."""
        return self._starting or self._started is not None

    @property
    def busy(self) -> bool:
        """Running, or its run still being filed."""
        return self.running or self._saving

    def start(self, request: ScalingRequest) -> None:
        if self.busy:
            self.refused.emit("a scaling test is already running")
            return
        try:
            args = ScalingArgs.from_json(
                {
                    "devices": list(request.chosen.disks),
                    "size": request.size,
                    "block_size": request.block_size,
                    "repeat": request.repeat,
                    "sample_rate_hz": request.sample_rate_hz,
                }
            )
        except ProtocolError as exc:
            self.refused.emit(str(exc))
            return
        self._request, self._starting, self._cancelled = request, True, False
        self.passes, self.samples, self._done = {}, [], 0
        self._started_at = datetime.now(UTC)
        self._helper.request(args, self._on_started, self._on_refused)

    def cancel(self) -> None:
        """As the CLI's Ctrl-C: the helper's cancel; ended here if it does not answer."""
        if self._started is None or self._cancelled:
            return
        self._cancelled = True
        self._helper.request(BenchCancelArgs(), lambda _r: None, lambda _e: None, privileged=False)
        self._grace.start()

    def shutdown(self) -> None:
        """Closing the window: the helper stops the test when its stdin closes, and no event
        loop will see it say so; what came is filed cancelled now, on the writer the history
        waits for as it closes."""
        if self._started is not None:
            self._end_here("cancelled", "the window was closed")
            self._history.writer.wait()

    def _on_refused(self, message: str) -> None:
        self._starting = False
        self.refused.emit(message or "the helper refused the test")

    def _on_started(self, started: ScalingStarted) -> None:
        self._starting = False
        self._started, self._began = started, time.monotonic()
        self.started.emit(started)

    def _on_event(self, event: Event) -> None:
        started = self._started
        if started is None or getattr(event, "run", None) != started.run:
            return
        if isinstance(event, Sample):
            self.samples.append(event)
        elif isinstance(event, ScalingPass):
            if event.error is None:
                self.passes.setdefault(event.step, []).append(event.mb_s)
            self._done += 1
            mean_pass_s = (time.monotonic() - self._began) / self._done
            left = max(0, started.visits - self._done)
            self.progressed.emit(
                ScalingProgress(self._done, started.visits, event, mean_pass_s * left)
            )
        elif isinstance(event, RunError):
            self.failed.emit(event.message)
        elif isinstance(event, ScalingEnd):
            self._end(event)

    def _on_helper_failed(self, message: str) -> None:
        if self._starting:
            return  # its request fails too: `refused` says it
        self._end_here("failed", f"lost the helper before the test ended ({message})")

    def _end_here(self, status: str, why: str) -> None:
        """The helper said no end (lost, or deaf to the cancel): the run ends with what came,
        as the CLI ends it (`why` is said, not stored: a scaling_result has no error)."""
        if self._started is not None:
            self._end(ScalingEnd(self._started.run, status, 0.0, 0.0, 0, why))

    def _end(self, end: ScalingEnd) -> None:
        started, request = self._started, self._request
        assert started is not None and request is not None
        self._grace.stop()
        self._started = None
        if end.error and end.status == "failed":
            self.failed.emit(end.error)
        result, analysis = outcome_of(started, end, request.chosen, self.passes)
        self.finished.emit(result)
        db, samples, when = self._history.database, list(self.samples), self._started_at

        def save() -> int:
            return save_scaling_run(db, request.chosen, started, result, analysis, when, samples)

        self._saving = True
        self._history.writer.submit(save, self._on_saved, self._on_save_failed)

    def _on_saved(self, run_id: object) -> None:
        assert isinstance(run_id, int)
        self._saving = False
        self.saved.emit(run_id)
        self._history.load_runs()  # the Planner reads measured ceilings again from the listing

    def _on_save_failed(self, exc: Exception) -> None:
        self._saving = False
        self.saveFailed.emit(f"the scaling test was not saved: {exc}")

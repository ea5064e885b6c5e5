"""One group run at a time from the GUI: fio's client mode on every host of a group at once.

`GroupRunner.run()` blocks until every host is done, so it runs in a thread of its own; its
events (each carrying `host`: a host's label, or "total" for the sum of one tick) cross to the
GUI thread in batches, at most every `BATCH_MS`, so eight hosts cost the event loop a few
queued calls per second, not one per sample. Their samples are merged into the plots' lines
on that thread as they arrive (`series`, a `GroupSeries`): the GUI thread only draws them.
When the run ends its outcome and every sample are filed as one group run on the history's
serial writer.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from stripewise.model.bench import BenchSpec
from stripewise.model.host_address import HostAddress
from stripewise.protocol.events import Sample
from stripewise.services.group_series import TOTAL, GroupSeries
from stripewise.services.history import HistoryService

if TYPE_CHECKING:
    from stripewise.history.live_run import Filed
    from stripewise.protocol.group import GroupOutcome

__all__ = ["BATCH_MS", "TOTAL", "GroupBenchService", "GroupRequest"]

BATCH_MS = 100


@dataclass(frozen=True)
class GroupRequest:
    """What the page asks for: the hosts, the spec (its target is the path on each host), the
    group's name when the hosts are a stored group, and the run's name in the history."""

    hosts: tuple[HostAddress, ...]
    spec: BenchSpec
    name: str
    group: str | None = None
    # fio options for benches and tests (the driver allows only harmless ones: ioengine, rate)
    job_overrides: Mapping[str, str] | None = None
    tags: tuple[str, ...] = ()  # the group run's in the history (an experiment's pass)


class GroupBenchService(QObject):
    started = Signal(object)  # GroupRequest
    eventsArrived = Signal(list)  # protocol events, in order, each with `host`
    finished = Signal(object)  # GroupOutcome (protocol.group)
    crashed = Signal(str)  # the driver itself failed: nothing ran, or its outcome is lost
    refused = Signal(str)
    saved = Signal(int)  # history id of the group run
    saveFailed = Signal(str)

    _ended = Signal(object, object)  # from the runner's thread: (outcome or None, exception)
    _announce = Signal(object)  # GroupRequest: `started`, then the thread, from the loop

    def __init__(self, history: HistoryService, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._history = history
        self._runner: Any = None
        self._thread: threading.Thread | None = None
        self._request: GroupRequest | None = None
        self._lock = threading.Lock()
        self._pending: list[object] = []  # events from the runner's thread, not yet handed on
        self.samples: list[Sample] = []  # the run's, for the history
        self.series = GroupSeries()  # the run's lines, merged on the driver's thread
        self.saved_run_id: int | None = None
        self._ending: tuple[GroupOutcome | None, Exception | None] | None = (
            None  # set by the run's thread
        )
        self._flush = QTimer(self)
        self._flush.setInterval(BATCH_MS)
        self._flush.timeout.connect(self._hand_on)
        self._ended.connect(self._on_ended)
        self._announce.connect(self._begin, Qt.ConnectionType.QueuedConnection)

    def warm_up(self) -> None:
        """Import the driver in the background (~12 ms of the GUI thread's time otherwise,
        inside the click on Start)."""
        import importlib

        from stripewise.services.tasks import run_in_background

        run_in_background(lambda: importlib.import_module("stripewise.hosts.group_run"), _nothing)

    @property
    def busy(self) -> bool:
        return self._thread is not None

    def start(self, request: GroupRequest) -> None:
        if self.busy:
            self.refused.emit("a group run is already running")
            return
        if not request.hosts:
            self.refused.emit("no hosts to run on")
            return
        from stripewise.hosts.group_run import GroupRunner

        try:
            self._runner = GroupRunner(
                request.hosts,
                request.spec,
                group=request.group,
                on_event=self._queue,
                job_options=request.job_overrides,
            )
        except ValueError as exc:  # the driver's checks of hosts and spec
            self.refused.emit(str(exc))
            return
        self._request, self.samples, self.saved_run_id = request, [], None
        self.series.reset([*(host.label for host in request.hosts), TOTAL])
        self._ending = None
        with self._lock:
            self._pending = []
        self._thread = threading.Thread(target=self._run, name="group-run", daemon=True)
        self._flush.start()
        # queued: the page's set-up runs in an event of its own, not inside the click, and
        # before the driver's thread starts to compete with it for the interpreter
        self._announce.emit(request)

    def _begin(self, request: GroupRequest) -> None:
        self.started.emit(request)
        if self._thread is not None:
            self._thread.start()

    def cancel(self) -> None:
        """Every host's job is stopped; the run ends as cancelled with what was measured."""
        if self._runner is not None:
            self._runner.cancel()

    def _queue(self, event: object) -> None:
        """The runner's callback, on its thread: a sample merged into its line at once, every
        event kept until the next batch."""
        if isinstance(event, Sample) and event.latency_us is None:  # a late interval's rates
            self.series.add(event)  # are no live figure: only its latency is drawn
        with self._lock:
            self._pending.append(event)

    def _run(self) -> None:
        try:
            outcome, error = self._runner.run(), None
        except Exception as exc:  # shown as one line; the thread must not die silently
            outcome, error = None, exc
        self._ending = (outcome, error)
        self._ended.emit(outcome, error)

    def _hand_on(self) -> None:
        with self._lock:
            events, self._pending = self._pending, []
        if not events:
            return
        self.samples.extend(e for e in events if isinstance(e, Sample))
        self.eventsArrived.emit(events)

    def _on_ended(self, outcome: GroupOutcome | None, error: Exception | None) -> None:
        if self._thread is None:
            return  # handled already, by shutdown()
        self._thread.join()
        self._thread, self._runner = None, None
        self._flush.stop()
        self._hand_on()  # the last events before the outcome
        if error is not None or outcome is None:
            self.crashed.emit(str(error) or type(error).__name__)
            return
        self.finished.emit(outcome)
        self._store(outcome)

    def _store(self, outcome: GroupOutcome) -> None:
        assert self._request is not None
        db, name, samples = self._history.database, self._request.name, list(self.samples)
        tags = self._request.tags

        def file_group_run() -> Filed:
            from stripewise.history.group_filing import file_group_run

            return file_group_run(db.url, outcome, db=db, name=name, samples=samples, tags=tags)

        def filed(where: Filed) -> None:
            if where.run_id is not None:
                self.saved_run_id = where.run_id
                self.saved.emit(where.run_id)
            else:  # kept on this computer until the database takes it, or lost: one line
                self.saveFailed.emit(where.waiting or f"not saved: {where.lost}")

        self._history.writer.submit(
            file_group_run, filed, lambda exc: self.saveFailed.emit(f"not saved: {exc}")
        )

    def shutdown(self, timeout_s: float = 15.0) -> None:
        """Closing the window: every host's job stops, the thread ends; the run is filed."""
        if self._thread is None:
            return
        self.cancel()
        self._thread.join(timeout_s)
        if self._ending is not None:  # the event loop may not run again: end it here
            self._on_ended(*self._ending)
        self._history.writer.wait()


def _nothing(_result: object) -> None:
    pass

"""One benchmark at a time from the GUI: start it through the helper, follow its events, save it.

The helper (started as root or as the user, see `HelperClient`) runs the engine; its events
arrive here on the GUI thread and are re-emitted as typed signals for the page, while a
`RunRecorder` writes the run to the history as it streams. A helper lost mid-run (killed,
crashed) ends the run as `aborted`, with every sample received and the phases that finished.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from stripewise.history.bench_rows import final_status
from stripewise.history.recorder_id import this_recorder
from stripewise.model.run import RunStatus
from stripewise.model.topology import Inventory
from stripewise.protocol.events import Event, event_to_json
from stripewise.services.helper_client import HelperClient
from stripewise.services.history import HistoryService
from stripewise.services.run_recorder import RunHeader, RunRecorder
from stripewise.unfinished_run import unfinished_result

_NOT_RECORDED = ("confirm_serial",)  # typed to allow writing; not part of what was measured


@dataclass(frozen=True)
class BenchRequest:
    """What the page asks for: the helper's `bench.start` arguments plus how to file the run."""

    args: dict[str, Any]  # target, size, phases, ... as docs/protocol.md lists them
    name: str
    array_name: str | None = None  # a planned array this target realises (planner convention)
    tags: tuple[str, ...] = field(default=())


def gather_context(
    target: str,
    test_file: str,
    disks: list[str],
    request: BenchRequest,
    engine: str,
    engine_version: str,
    inventory: Inventory | None,
) -> dict[str, Any]:
    """Runs on the recorder's thread: reads sysfs, mountinfo and /proc."""
    from stripewise.inventory.bench_context import collect_context

    context = collect_context(
        target,
        disks,
        spec={k: v for k, v in request.args.items() if k not in _NOT_RECORDED},
        engine=engine,
        engine_version=engine_version,
        inventory=inventory,
    )
    if test_file != target:
        context["test_file"] = test_file
    context["recorder"] = this_recorder()
    if request.array_name:
        array = dict(context.get("array") or {})
        array["name"] = request.array_name
        context["array"] = array
    return context


class BenchSession(QObject):
    started = Signal(dict)  # bench.start's reply: run, target, disks, engine, engine_version
    phaseStarted = Signal(dict)
    sampleArrived = Signal(dict)
    phaseFinished = Signal(dict)
    warningRaised = Signal(dict)
    finished = Signal(dict)  # run_result, or one made here when the helper was lost
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
        self.run_id: str | None = None  # the helper's id of the running benchmark
        self.recorder: RunRecorder | None = None
        self._starting = False
        self._reply: dict[str, Any] = {}  # bench.start's, for a run_result made here
        self._began = 0.0
        self._phase_results: list[dict[str, Any]] = []
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
            "bench.start",
            request.args,
            lambda reply: self._on_started(request, reply),
            self._on_refused,
            privileged=False,
        )

    def cancel(self) -> None:
        if self.run_id is not None:
            self._helper.request(
                "bench.cancel", {}, lambda _r: None, lambda _e: None, privileged=False
            )

    def _on_refused(self, message: str) -> None:
        self._starting = False
        self.refused.emit(message)

    def _on_started(self, request: BenchRequest, reply: dict[str, Any]) -> None:
        self._starting = False
        self.run_id = str(reply.get("run"))
        self._reply, self._began, self._phase_results = reply, time.monotonic(), []
        target = str(request.args.get("target"))
        test_file = str(reply.get("target") or target)
        disks = [str(d) for d in reply.get("disks") or []]
        engine = str(reply.get("engine") or request.args.get("engine") or "builtin")
        version = str(reply.get("engine_version") or "")
        inventory = self.inventory
        recorder = RunRecorder(self._history.database, self._history.writer, self)
        recorder.created.connect(self.recorded)
        recorder.saved.connect(self.saved)
        recorder.failed.connect(self.saveFailed)
        recorder.begin(
            RunHeader(
                name=request.name,
                target=target,
                engine=engine,
                engine_version=version,
                spec={k: v for k, v in request.args.items() if k not in _NOT_RECORDED},
                context=lambda: gather_context(
                    target, test_file, disks, request, engine, version, inventory
                ),
                tags=request.tags,
            )
        )
        self.recorder = recorder
        self.started.emit(reply)

    def _on_event(self, event: Event) -> None:
        if self.run_id is None or event.run != self.run_id:
            return
        # validated as its type by the client core; the page and the recorder still take
        # the wire's shape
        message = event_to_json(event)
        kind = message.get("event")
        if kind == "sample":
            if self.recorder is not None:
                self.recorder.add_sample(message)
            self.sampleArrived.emit(message)
        elif kind == "phase_started":
            self.phaseStarted.emit(message)
        elif kind == "phase_result":
            self._phase_results.append(message)
            self.phaseFinished.emit(message)
        elif kind in ("warning", "error"):
            self.warningRaised.emit(message)
        elif kind == "run_result":
            self._end(final_status(message), message)

    def _on_helper_failed(self, message: str) -> None:
        if self.run_id is not None:
            self._end_unreported(RunStatus.ABORTED, f"lost the helper mid-run ({message})")

    def _end_unreported(self, status: RunStatus, message: str) -> None:
        """The run ends without the helper's run_result: file what arrived."""
        result = unfinished_result(
            status.value,
            message,
            self._phase_results,
            run=self.run_id,
            engine=str(self._reply.get("engine") or ""),
            engine_version=str(self._reply.get("engine_version") or ""),
            elapsed_s=time.monotonic() - self._began,
        )
        self._end(status, result)

    def _end(self, status: RunStatus, result: Mapping[str, Any]) -> None:
        self.run_id = None
        if self.recorder is not None:
            self.recorder.finish(status, result)
        self.finished.emit(dict(result))

    def shutdown(self) -> None:
        """Closing the window: the helper stops the run when its stdin closes; file it."""
        if self.run_id is not None:
            self._end_unreported(RunStatus.CANCELLED, "the window was closed")
        if self.recorder is not None:
            self.recorder.wait()

"""One pass of an experiment over hosts: a group run through the window's `GroupBenchService`
(it streams on the Benchmark page's group view and is filed as a group run, tagged with the
experiment), judged on the hosts' total as `experiment run --host` judges it
(`protocol.group.visit_figures`). Nothing is applied on the hosts: only workload parameters
vary there, so a pass has nothing to put back.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from stripewise.model.bench import BenchSpec
from stripewise.model.experiment import Objective, Values
from stripewise.model.host_address import HostAddress
from stripewise.protocol.group import GroupOutcome, HostFigures, visit_figures
from stripewise.services.group_bench import GroupBenchService, GroupRequest


@dataclass(frozen=True)
class GroupPassEnd:
    """How a pass ended: its figures, or why it does not count; the group run's id when filed."""

    figures: HostFigures | None
    run_id: int | None
    error: str | None = None


@dataclass(frozen=True)
class GroupPassRequest:
    values: Values
    hosts: tuple[HostAddress, ...]
    spec: BenchSpec  # one repetition; its target is the directory on every host
    name: str
    group: str | None
    tags: tuple[str, ...]
    objective: Objective


class GroupPass(QObject):
    ended = Signal(object)  # GroupPassEnd

    def __init__(self, service: GroupBenchService, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.service = service
        self._request: GroupPassRequest | None = None  # the pass running, None between passes
        self._asking = False  # inside service.start(): a refusal now is this pass's
        self._outcome: GroupOutcome | None = None  # ended, waiting for its save
        service.refused.connect(self._on_refused)
        service.crashed.connect(self._on_crashed)
        service.finished.connect(self._on_finished)
        service.saved.connect(self._on_saved)
        service.saveFailed.connect(self._on_save_failed)

    @property
    def busy(self) -> bool:
        return self.service.busy

    def start(self, request: GroupPassRequest) -> None:
        self._request, self._outcome = request, None
        self._asking = True
        self.service.start(
            GroupRequest(request.hosts, request.spec, request.name, request.group,
                         tags=request.tags)
        )  # fmt: skip
        self._asking = False

    def cancel(self) -> None:
        """Every host's job stops; the pass ends cancelled (it does not count)."""
        if self._request is not None:
            self.service.cancel()

    def forget(self) -> None:
        """The experiment is gone (the window closing): what the service still says is not
        this pass's any more; the service files the group run itself."""
        self._request, self._outcome = None, None

    def _on_refused(self, message: str) -> None:
        if self._request is not None and self._asking:
            self._end(GroupPassEnd(None, None, f"did not start: {message}"))

    def _on_crashed(self, message: str) -> None:
        if self._request is not None:
            self._end(GroupPassEnd(None, None, f"the group run failed: {message}"))

    def _on_finished(self, outcome: object) -> None:
        if self._request is not None and isinstance(outcome, GroupOutcome):
            self._outcome = outcome  # judged once filed: a point cites its run

    def _on_saved(self, run_id: int) -> None:
        self._judge(run_id)

    def _on_save_failed(self, _message: str) -> None:
        self._judge(None)  # the Benchmark page says why; the pass still counts

    def _judge(self, run_id: int | None) -> None:
        """The saved run is this outcome's: the service files one group run at a time, on the
        history's one serial writer, and starts none while this pass holds it."""
        request, outcome = self._request, self._outcome
        if request is None or outcome is None:
            return
        try:
            figures = visit_figures(request.values, outcome, request.objective)
        except ValueError as exc:
            self._end(GroupPassEnd(None, run_id, str(exc)))
            return
        self._end(GroupPassEnd(figures, run_id))

    def _end(self, end: GroupPassEnd) -> None:
        self._request, self._outcome = None, None
        self.ended.emit(end)

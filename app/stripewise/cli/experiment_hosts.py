"""An experiment over several hosts (`experiment run --host ... | --group NAME`): each point is a
group run on every host's fio server at once (`hosts.group_run`), judged on the hosts' total.

Only workload parameters can vary there (block size, queue depth, streams): a host's tunables
would need a helper on that host, and Stripewise runs its helper on this machine only. The
total carries throughput and IOPS, not latency (a sum of latencies means nothing), so the
objective is one of those; each host's own figure of the objective is kept with the point.
"""

from __future__ import annotations

import signal
import threading
from dataclasses import replace

from stripewise.cli.errors import CliError
from stripewise.cli.experiment_design import Prepared
from stripewise.cli.experiment_visit import VisitOutcome
from stripewise.model.experiment import Values, apply_workload, label, problem_on_hosts
from stripewise.model.host_address import HostAddress
from stripewise.protocol.events import Sample
from stripewise.protocol.group import GroupOutcome, HostFigures, visit_figures

_JOIN_S = 0.25  # the main thread wakes this often, so a signal is handled promptly


def check_group_design(
    vary: list[str], metric: str | None, latency_target_us: float | None = None
) -> None:
    """What a group cannot run, refused by name before anything is read or reached."""
    found = problem_on_hosts(vary, metric, latency_target_us)
    if found is None:
        return
    field, line = found
    option = {"vary": "--vary ", "metric": "--metric: ", "latency_target": "--latency-target-us: "}
    raise CliError(option[field] + line)


class GroupVisitor:
    """The same duties as `experiment_visit.Visitor`, with a group run in place of the helper."""

    def __init__(
        self,
        hosts: list[HostAddress],
        prepared: Prepared,
        url: str | None,
        experiment_id: int | None,
        name: str,
        group: str | None,
    ) -> None:
        self.hosts = hosts
        self.prepared = prepared
        self.url = url
        self.experiment_id = experiment_id
        self.name = name
        self.group = group
        self.signal: signal.Signals | None = None
        self.lost = False
        self.notes: list[str] = []
        self.unrestored = ""
        self.per_host: list[HostFigures] = []
        self._runner: object | None = None

    def handle_signal(self, number: int, _frame: object) -> None:
        if self.signal is None:
            self.signal = signal.Signals(number)
        runner = self._runner
        if runner is not None:
            runner.cancel()  # type: ignore[attr-defined]

    def put_back(self) -> bool:
        return True  # nothing was applied: workload parameters only

    def visit(self, values: Values) -> VisitOutcome:
        from stripewise.hosts.group_run import GroupRunError, GroupRunner

        spec = replace(apply_workload(self.prepared.start.spec, values), repetitions=1)
        samples: list[Sample] = []

        def on_event(event: object) -> None:
            if isinstance(event, Sample):
                samples.append(event)

        try:
            runner = GroupRunner(self.hosts, spec, group=self.group, on_event=on_event)
        except GroupRunError as exc:
            self.lost = True
            return VisitOutcome(error=str(exc))
        outcome = self._run(runner)
        if isinstance(outcome, str):
            self.lost = True
            return VisitOutcome(error=outcome)
        run_id = self._save(outcome, samples, values)
        try:
            figures = visit_figures(values, outcome, self.prepared.design.objective)
        except ValueError as exc:
            return VisitOutcome(run_id=run_id, error=str(exc))
        self.per_host.append(figures)
        return VisitOutcome(figures.total, None, run_id, elapsed_s=outcome.elapsed_s)

    def _run(self, runner: object) -> GroupOutcome | str:
        """runner.run() on a worker thread, the main thread free for signals."""
        found: list[GroupOutcome | BaseException] = []

        def work() -> None:
            try:
                found.append(runner.run())  # type: ignore[attr-defined]
            except BaseException as exc:  # handed to the main thread
                found.append(exc)

        self._runner = runner
        if self.signal is not None:
            runner.cancel()  # type: ignore[attr-defined]
        worker = threading.Thread(target=work, name="experiment group run")
        try:
            worker.start()
            while worker.is_alive():
                worker.join(_JOIN_S)
        finally:
            self._runner = None
        (result,) = found
        if isinstance(result, BaseException):
            return f"the group run could not start: {result}"
        return result

    def _save(self, outcome: GroupOutcome, samples: list[Sample], values: Values) -> int | None:
        if self.url is None:
            return None
        from stripewise.cli.errors import open_history
        from stripewise.history.group_runs import store_group_run

        tags = ("experiment", f"experiment:{self.experiment_id}")
        with open_history(self.url) as db:
            return store_group_run(
                db, outcome, name=f"{self.name}: {label(values)}", samples=samples, tags=tags
            )

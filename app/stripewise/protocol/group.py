"""A group run's outcome: each host's ending and result, and the total the driver computes.

The total is the SUM of the hosts' own figures, phase by phase and repetition by repetition,
never fio's "All clients" aggregate (fio issues 1918 and 1881: it miscounts). Latency
percentiles do not add up across hosts, and a worst-of would read as one host's figure, so the
total carries none (each host's row has its own); CPU is per host too. `group_result` is the
last line of `stripewise bench --host/--group --json` (docs/protocol.md, "Group runs").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

import stripewise.protocol.spec  # noqa: F401  (describes BenchSpec's wire shape to the codec)
from stripewise.model.bench import BenchSpec, Phase, PhaseResult, Spread, spread_of
from stripewise.model.experiment import Objective, Values, measured
from stripewise.model.experiment_result import ExperimentResult
from stripewise.protocol.codec import Shape, WireEvent, wire
from stripewise.protocol.events import RunResult

HOST_STATUSES = ("complete", "failed", "cancelled", "refused", "unreachable")
TOTAL_HOST = "total"  # the `host` of the summed samples and of the total's results


@dataclass(frozen=True)
class HostOutcome(WireEvent):
    """How one host's part ended. `refused`: the host answered but would not run it (a fio
    protocol mismatch, a connection refused); `unreachable`: no answer in time; `failed`: it
    started and died or erred; `result` is what it measured (None when it never started)."""

    host: str = field(metadata=wire(check=lambda host: None if host else "host: text expected"))
    status: str = field(metadata=wire(choices=HOST_STATUSES))
    error: str | None = None
    result: RunResult | None = None

    @property
    def complete(self) -> bool:
        return self.status == "complete"


@dataclass(frozen=True)
class GroupOutcome(WireEvent):
    """A run on several hosts at once. `total` sums the hosts that measured (`group_total`);
    `partial` when any host did not complete, so the total lacks it. `status` is written for
    readers, never read back."""

    EVENT: ClassVar[str] = "group_result"
    WIRE_SHAPE = Shape(
        order=(
            "group",
            "status",
            "partial",
            "started_at",
            "elapsed_s",
            "spec",
            "hosts",
            "total",
        )
    )
    group: str | None
    spec: BenchSpec
    hosts: tuple[HostOutcome, ...] = field(metadata=wire(indexed=False))
    total: tuple[PhaseResult, ...]
    partial: bool
    started_at: str  # ISO 8601, UTC
    elapsed_s: float

    @property
    def status(self) -> str:
        """The run's own status: complete, cancelled (any host cancelled), else failed when
        no host completed, else complete with `partial` set."""
        statuses = {host.status for host in self.hosts}
        if "cancelled" in statuses:
            return "cancelled"
        if "complete" not in statuses:
            return "failed"
        return "complete"


def group_total(results: Sequence[RunResult]) -> tuple[PhaseResult, ...]:
    """Per phase, each repetition's MB/s and IOPS summed over the hosts that measured it; the
    total's median/low/high are over those per-repetition sums (with one repetition: exactly
    the sum of the hosts' figures). No latency, CPU or efficiency (see the module's note);
    errors name their host; flags are every host's."""
    phases: dict[Phase, list[tuple[str, PhaseResult]]] = {}
    for result in results:
        for phase_result in result.results:
            phases.setdefault(phase_result.phase, []).append((result.host or "?", phase_result))
    return tuple(_phase_total(phase, found) for phase, found in phases.items())


def _phase_total(phase: Phase, found: list[tuple[str, PhaseResult]]) -> PhaseResult:
    def summed(figure: str) -> list[float]:
        per_repetition: list[float] = []
        for _host, result in found:
            spread: Spread | None = getattr(result, figure)
            each = () if spread is None else (spread.values or (spread.median,))
            for index, value in enumerate(each):
                if index == len(per_repetition):
                    per_repetition.append(0.0)
                per_repetition[index] += value
        return per_repetition

    return PhaseResult(
        phase=phase,
        mb_s=spread_of(summed("mb_s")),
        iops=spread_of(summed("iops")),
        errors=tuple(f"{host}: {error}" for host, result in found for error in result.errors),
        flags=tuple(dict.fromkeys(flag for _host, result in found for flag in result.flags)),
    )


@dataclass(frozen=True)
class HostFigures:
    """One experiment visit over hosts: the objective's figure of the total, and each host's
    own beside it."""

    values: Values
    total: float
    hosts: dict[str, float]


def visit_figures(values: Values, outcome: GroupOutcome, objective: Objective) -> HostFigures:
    """An experiment's visit judged on the hosts' total; ValueError in one line when a host did
    not complete (the total would lack it) or the total did not measure the objective."""
    if outcome.status != "complete" or outcome.partial:
        failed = [f"{h.host}: {h.error or h.status}" for h in outcome.hosts if h.error]
        raise ValueError(f"not every host completed ({'; '.join(failed) or outcome.status})")
    total, _p99 = measured(outcome.total, objective)
    hosts = {
        host.host: measured(host.result.results, objective)[0]
        for host in outcome.hosts
        if host.result is not None
    }
    return HostFigures(values, total, hosts)


def with_hosts(result: ExperimentResult, visits: Sequence[HostFigures]) -> ExperimentResult:
    """The result with each visit's hosts' own figures under `hosts` (docs/experiments.md)."""
    hosts = [{"values": dict(v.values), "hosts": v.hosts} for v in visits]
    return replace(result, extra={**result.extra, "hosts": hosts})

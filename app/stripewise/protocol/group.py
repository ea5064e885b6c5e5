"""A group run's outcome: each host's ending and result, and the total the driver computes.

The total is the SUM of the hosts' own figures, phase by phase and repetition by repetition,
never fio's "All clients" aggregate (fio issues 1918 and 1881: it miscounts). Latency
percentiles do not add up across hosts, and a worst-of would read as one host's figure, so the
total carries none (each host's row has its own); CPU is per host too. `group_result` is the
last line of `stripewise bench --host/--group --json` (docs/protocol.md, "Group runs").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from stripewise.model.bench import BenchSpec, Phase, PhaseResult, Spread, spread_of
from stripewise.protocol.events import RunResult, summary_from_json, summary_to_json
from stripewise.protocol.spec import spec_from_json, spec_to_json
from stripewise.protocol.wire import ProtocolError

HOST_STATUSES = ("complete", "failed", "cancelled", "refused", "unreachable")
TOTAL_HOST = "total"  # the `host` of the summed samples and of the total's results


def _fail(message: str) -> ProtocolError:
    return ProtocolError("bad_event", message)


@dataclass(frozen=True)
class HostOutcome:
    """How one host's part ended. `refused`: the host answered but would not run it (a fio
    protocol mismatch, a connection refused); `unreachable`: no answer in time; `failed`: it
    started and died or erred; `result` is what it measured (None when it never started)."""

    host: str
    status: str
    error: str | None = None
    result: RunResult | None = None

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "status": self.status,
            "error": self.error,
            "result": None if self.result is None else self.result.to_json(),
        }

    @classmethod
    def from_json(cls, data: Any) -> HostOutcome:
        if not isinstance(data, dict):
            raise _fail("hosts: objects expected")
        host, status, error = data.get("host"), data.get("status"), data.get("error")
        if not isinstance(host, str) or not host:
            raise _fail("hosts.host: text expected")
        if status not in HOST_STATUSES:
            raise _fail(f"hosts.status: one of {', '.join(HOST_STATUSES)}")
        if error is not None and not isinstance(error, str):
            raise _fail("hosts.error: text or null expected")
        result = data.get("result")
        if result is not None and not isinstance(result, dict):
            raise _fail("hosts.result: an object or null expected")
        return cls(host, status, error, None if result is None else RunResult.from_json(result))


@dataclass(frozen=True)
class GroupOutcome:
    """A run on several hosts at once. `total` sums the hosts that measured (`group_total`);
    `partial` when any host did not complete, so the total lacks it."""

    EVENT: ClassVar[str] = "group_result"
    group: str | None
    spec: BenchSpec
    hosts: tuple[HostOutcome, ...]
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

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.EVENT,
            "group": self.group,
            "status": self.status,
            "partial": self.partial,
            "started_at": self.started_at,
            "elapsed_s": self.elapsed_s,
            "spec": spec_to_json(self.spec),
            "hosts": [host.to_json() for host in self.hosts],
            "total": [summary_to_json(result) for result in self.total],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GroupOutcome:
        group, spec, hosts, total = (data.get(k) for k in ("group", "spec", "hosts", "total"))
        if group is not None and not isinstance(group, str):
            raise _fail("group: text or null expected")
        if not isinstance(spec, dict):
            raise _fail("spec: an object expected")
        if not isinstance(hosts, list) or not isinstance(total, list):
            raise _fail("hosts and total: lists expected")
        partial, started, elapsed = (data.get(k) for k in ("partial", "started_at", "elapsed_s"))
        if not isinstance(partial, bool) or not isinstance(started, str):
            raise _fail("partial: true or false; started_at: text")
        if isinstance(elapsed, bool) or not isinstance(elapsed, int | float):
            raise _fail("elapsed_s: a number expected")
        try:
            parsed_spec = spec_from_json(spec)
        except ProtocolError as exc:
            raise _fail(f"spec: {exc}") from None
        return cls(
            group,
            parsed_spec,
            tuple(HostOutcome.from_json(item) for item in hosts),
            tuple(summary_from_json(item) for item in total),
            partial,
            started,
            float(elapsed),
        )


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

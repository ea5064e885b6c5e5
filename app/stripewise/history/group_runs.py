"""Group runs in the history: one parent run holding the totals, one child run per host.

The parent's results are the group's total (`protocol.group.group_total`: the sum of the
hosts that completed), its samples the driver's `total` samples, and its context says which
hosts took part and how each ended (`hosts: [{host, status, error}]`, `partial`). Each host's
run is a child (`parent_run_id`, `host_label`) with its own results and samples. The plain
list shows the parent only; `host_runs` gives the children, which comparisons and exports
show beside the totals.

A run that logged latency keeps each host's interval latencies in its child and all hosts'
together in the parent: the late samples that carry them (hosts.group_latency) are stored
with their latency series only, so throughput over time stays the live samples' and the heat
maps and comparisons read them as a one-machine run's (history/latency_rows.py).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from stripewise.history.connection import Database
from stripewise.history.recorder_id import this_recorder
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.latency import latency_series
from stripewise.model.run import RunStatus
from stripewise.model.run_context import GroupHost, RunContext
from stripewise.model.run_naming import run_name
from stripewise.protocol.events import Sample
from stripewise.protocol.group import TOTAL_HOST, GroupOutcome, HostOutcome
from stripewise.system.hostinfo import HostInfo

GROUP_ENGINE = "fio"  # group runs are fio's client/server mode


def store_group_run(
    db: Database,
    outcome: GroupOutcome,
    *,
    name: str | None = None,
    samples: Sequence[Sample] = (),
    host_info: HostInfo | None = None,
    tags: Sequence[str] = (),
    key: str | None = None,
) -> int:
    """The group run and its hosts' runs; returns the parent run's id. `samples`: every
    sample the driver emitted (each host's and the `total` ones), sorted here by host; `tags`
    the parent's (an experiment's pass: `experiment`, `experiment:ID`). With `key` (a group
    run the spool kept) it may be written again over a half-written one: each run is found
    by its key, a sample already there is skipped, the results are replaced."""
    store = HistoryStore(db)
    host_id = store.ensure_host(host_info or HostInfo.current())
    started = datetime.fromisoformat(outcome.started_at)
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    finished = started + timedelta(seconds=outcome.elapsed_s)
    version = next((h.result.engine_version for h in outcome.hosts if h.result), "")
    title = name or default_name(outcome)
    parent = store.create_run(
        host_id,
        name=title,
        target=outcome.spec.target,
        engine=GROUP_ENGINE,
        engine_version=version,
        spec=outcome.spec,
        context=group_context(outcome),
        started_at=started,
        tags=tuple(tags),
        key=key,
    )
    by_host: dict[str, list[Sample]] = {}
    for sample in samples:
        by_host.setdefault(sample.host or TOTAL_HOST, []).append(sample)
    store.add_samples(parent, _rows(by_host.get(TOTAL_HOST, [])))
    store.replace_results(parent, [v for result in outcome.total for v in result.values()])
    for host in outcome.hosts:
        child = store.create_run(
            host_id,
            name=f"{title} · {host.host}",
            target=outcome.spec.target,
            engine=GROUP_ENGINE,
            engine_version=host.result.engine_version if host.result else version,
            spec=outcome.spec,
            context=RunContext(
                group_host=host.host,
                status=host.status,
                error=host.error,
                recorder=this_recorder(),
            ),
            started_at=started,
            parent_run_id=parent,
            host_label=host.host,
            key=key and host_run_key(key, host.host),
        )
        store.add_samples(child, _rows(by_host.get(host.host, [])))
        if host.result is not None:
            store.replace_results(child, host.result.values())
        store.finish_run(child, host_run_status(host), finished_at=finished)
    store.finish_run(parent, RunStatus(outcome.status), finished_at=finished)
    return parent


@dataclass(frozen=True)
class SpooledGroup:
    """A group run the database refused, as the spool keeps it until it can be stored."""

    key: str
    host: HostInfo  # the machine that drove it
    outcome: GroupOutcome
    samples: tuple[Sample, ...]
    name: str | None = None
    tags: tuple[str, ...] = ()

    def store(self, db: Database) -> int:
        return store_group_run(
            db,
            self.outcome,
            name=self.name,
            samples=self.samples,
            host_info=self.host,
            tags=self.tags,
            key=self.key,
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "host": vars(self.host),
                "outcome": self.outcome.to_json(),
                "samples": [sample.to_json() for sample in self.samples],
                "name": self.name,
                "tags": list(self.tags),
            }
        )

    @classmethod
    def from_json(cls, key: str, text: str) -> SpooledGroup:
        fields = json.loads(text)
        return cls(
            key,
            HostInfo(**fields["host"]),
            GroupOutcome.from_json(fields["outcome"]),
            tuple(Sample.from_json(sample) for sample in fields["samples"]),
            fields["name"],
            tuple(fields["tags"]),
        )


def host_run_key(group_key: str, host: str) -> str:
    """A host run's key, from its group run's: the same each time the group is written."""
    return str(uuid.uuid5(uuid.UUID(group_key), host))


def default_name(outcome: GroupOutcome) -> str:
    who = outcome.group or (
        outcome.hosts[0].host if len(outcome.hosts) == 1 else f"{len(outcome.hosts)} hosts"
    )
    return run_name(outcome.spec, f"{who}: {outcome.spec.target}")  # by what sets it apart


def group_context(outcome: GroupOutcome) -> RunContext:
    """The parent's context; it names this process as the recorder, as a one-host run's
    does, so another Stripewise reading the history while this one is still storing the
    group leaves its `running` rows alone instead of filing them `aborted`."""
    return RunContext(
        recorder=this_recorder(),
        group=outcome.group,
        hosts=tuple(GroupHost(h.host, h.status, h.error) for h in outcome.hosts),
        partial=outcome.partial,
        total="sum of the hosts that completed; no latency or CPU (per host only)",
    )


def host_run_status(host: HostOutcome) -> RunStatus:
    """refused and unreachable hosts never ran: their runs are filed as failed."""
    if host.status in ("complete", "cancelled"):
        return RunStatus(host.status)
    return RunStatus.FAILED


def with_host_runs(store: HistoryStore, run_ids: Sequence[int]) -> list[int]:
    """The runs with each group run's host runs right after it (a comparison shows a group
    run's total beside its hosts)."""
    found: list[int] = []
    for run_id in run_ids:
        found.append(run_id)
        found += [child for child, _host in store.host_runs(run_id) if child not in run_ids]
    return found


def _rows(samples: Sequence[Sample]) -> list[SampleRow]:
    return [_row(seq, sample) for seq, sample in enumerate(samples)]


def _row(seq: int, sample: Sample) -> SampleRow:
    """A live sample as it is; a late one (it carries latency: live ones in a group run
    never do) with its latency only, its window's rates left to the live samples."""
    if sample.latency_us is None:
        return SampleRow.of(seq, sample)
    data = latency_series(sample.latency_us, sample.histogram)
    return SampleRow(seq, sample.t_s, sample.phase.value, sample.repetition, dict(data))

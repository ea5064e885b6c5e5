"""One benchmark on several hosts at once through fio's client/server mode.

`GroupRunner(hosts, spec, on_event=...).run()` blocks until every host has ended (the GUI
calls it on a worker thread); `cancel()` may come from any thread. In order:

1. Every host is reached at once: an ssh host gets its fio server started over ssh
   (`SshFioServer`), then each server is probed and its fio protocol version checked against
   this machine's fio. A host that refuses or does not answer is reported by name (`error`
   event with `host`) and left out; the others run.
2. One `fio --client` per host, all started together, with the same job file
   (`stripewise.fio.jobs`). Every tick (the spec's sample rate) each running host's latest live
   rates go out as a `sample` with `host`, then one `sample` with host `total`: their sum.
3. When a host's phase ends, its latency per interval arrives (fio sends its histogram logs
   at each job's end, `hosts.group_latency`): late samples of that host with `latency_us` and
   `histogram`, and once every host has sent the phase, `total` ones summing them.
4. As a host's client ends, its phases (`phase_result`) and its `run_result` go out. A host
   that dies mid-run is `failed`; the others finish. The outcome's total sums the hosts that
   completed (`protocol.group.group_total`), `partial` when any did not.

Cancel stops every host's job (SIGINT to each client: fio's quit command to its server) and
closes the ssh tunnels (their remote fio servers end with the session).
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from stripewise.fio.client import HostClient, section_outcomes
from stripewise.fio.client_output import JobFigures
from stripewise.fio.jobs import Section, group_job_file, sample_period_ms, sections
from stripewise.fio.layout import JobError, planned_bytes
from stripewise.fio.probe import (
    HostUnreachable,
    LocalFioError,
    ProbeRefused,
    local_fio_version,
    probe_fio_server,
)
from stripewise.hosts.group_latency import GroupLatency
from stripewise.hosts.ssh_tunnel import SshFioServer
from stripewise.model.bench import BONNIE_NAMES, BenchSpec, Phase, phase_summaries
from stripewise.model.host_address import HostAddress
from stripewise.model.latency import Stall
from stripewise.model.run import RunStatus
from stripewise.protocol.events import (
    PhaseFinished,
    PhaseStarted,
    RunError,
    RunResult,
    RunWarning,
    Sample,
)
from stripewise.protocol.group import TOTAL_HOST, GroupOutcome, HostOutcome, group_total

PROBE_TIMEOUT_S = 5.0
ENGINE = "fio"
UNCONFINED_WARNING = "fio_unconfined"  # the `warning` code: no Landlock for the fio clients
LATENCY_LOG_LOST = "latency_log_lost"  # the `warning` code: a host's histogram log never came


class GroupRunError(ValueError):
    """A group run that cannot start at all (bad spec for hosts, no local fio): one line."""


@dataclass
class _Host:
    address: HostAddress
    client: HostClient | None = None
    outcome: HostOutcome | None = None
    section: int = -1  # the section whose phase_started went out last

    @property
    def label(self) -> str:
        return self.address.label


class GroupRunner:
    """Drive `hosts` with `spec` (its target: a directory on every host). `job_options`: for
    benches and tests only (`fio.jobs.ALLOWED_OVERRIDES`, e.g. ioengine=null)."""

    def __init__(
        self,
        hosts: Sequence[HostAddress],
        spec: BenchSpec,
        *,
        group: str | None = None,
        on_event: Callable[[object], None],
        job_options: Mapping[str, str] | None = None,
        fio: str = "fio",
    ) -> None:
        labels = [host.label for host in hosts]
        if not hosts or len(set(labels)) != len(labels):
            raise GroupRunError("a group run needs at least one host, each named once")
        problems = spec.problems()
        if spec.cpu_latency_us is not None:  # fio servers take jobs, not PM QoS requests
            problems.append("cpu_latency_us: a group run's hosts cannot be asked to hold it")
        if spec.steady_state:  # fio servers run each phase once; rounds are the helper's
            problems.append("steady_state: a group run's hosts run each phase once, not in rounds")
        if problems:
            raise GroupRunError("; ".join(problems))
        if spec.engine != ENGINE:
            spec = replace(spec, engine=ENGINE)
        self.spec = spec
        self.group = group
        self.run_id = f"group-{secrets.token_hex(6)}"
        self._hosts = [_Host(address) for address in hosts]
        self._emit = on_event
        self._fio = fio
        self._sections = sections(spec)
        try:  # each host its own test file name: hosts sharing a filesystem do not collide
            self._tokens = {host.label: secrets.token_hex(8) for host in hosts}
            self._jobs = {
                label: group_job_file(spec, token, job_options)
                for label, token in self._tokens.items()
            }
        except JobError as exc:
            raise GroupRunError(str(exc)) from None
        self._cancel = threading.Event()
        self._lock = threading.Lock()  # cancel() against the start of the clients
        # each host's jobs as its fio reported them, once its client has ended: for checks
        # against fio's own figures (bench.group_drive), never for results (see fio.client)
        self.fio_jobs: dict[str, list[JobFigures]] = {}
        self._tunnels = contextlib.ExitStack()  # ssh hosts' servers, closed when run() ends
        self._tunnels_lock = threading.Lock()  # hosts are reached on threads of their own
        self._latency: GroupLatency | None = None  # when the spec logs latency, once started

    def cancel(self) -> None:
        """Stop every host's job; returns at once (run() waits for the clients to end and
        then returns with those hosts `cancelled`)."""
        self._cancel.set()
        with self._lock:
            clients = [host.client for host in self._hosts if host.client is not None]
        for client in clients:
            client.interrupt()

    def run(self) -> GroupOutcome:
        started_at = datetime.now(UTC)
        began = time.monotonic()
        try:
            engine_version = local_fio_version().removeprefix("fio-")
        except LocalFioError as exc:
            raise GroupRunError(str(exc)) from None
        workdir = Path(tempfile.mkdtemp(prefix="stripewise-group-"))
        try:
            endpoints = self._reach_all()
            with self._lock:
                if not self._cancel.is_set():
                    self._start_all(endpoints, workdir, time.monotonic() - began)
            self._follow(began, engine_version)
        finally:
            self._stop_all()
            self._tunnels.close()
            shutil.rmtree(workdir, ignore_errors=True)
        outcomes = tuple(self._final_outcome(host) for host in self._hosts)
        complete = [o.result for o in outcomes if o.complete and o.result is not None]
        return GroupOutcome(
            group=self.group,
            spec=self.spec,
            hosts=outcomes,
            total=group_total(complete),
            partial=len(complete) < len(outcomes),
            started_at=started_at.isoformat(),
            elapsed_s=time.monotonic() - began,
        )

    # -- reaching the hosts --------------------------------------------------------------

    def _reach_all(self) -> dict[str, HostAddress]:
        """Each host's fio endpoint, reached and checked at once; the others get an outcome."""
        with ThreadPoolExecutor(len(self._hosts)) as pool:
            reached = list(pool.map(self._reach, self._hosts))
        endpoints = {}
        for host, endpoint in zip(self._hosts, reached, strict=True):
            if endpoint is not None:
                endpoints[host.label] = endpoint
            elif host.outcome is not None:
                self._emit(RunError(self.run_id, host.outcome.error or "", host=host.label))
        return endpoints

    def _reach(self, host: _Host) -> HostAddress | None:
        if self._cancel.is_set():
            host.outcome = HostOutcome(
                host.label, "cancelled", f"{host.label}: cancelled before it started"
            )
            return None
        try:
            endpoint = host.address
            if host.address.kind == "ssh":
                tunnel = SshFioServer(host.address)
                with self._tunnels_lock:  # stopped at the end even if it fails half-started
                    self._tunnels.callback(tunnel.stop)
                endpoint = tunnel.start()
            info = probe_fio_server(endpoint.host, endpoint.port, timeout_s=PROBE_TIMEOUT_S)
        except ProbeRefused as exc:
            host.outcome = HostOutcome(host.label, "refused", _named(host, exc))
            return None
        except (HostUnreachable, LocalFioError, OSError, ValueError) as exc:
            status = "refused" if "refused" in str(exc) else "unreachable"
            host.outcome = HostOutcome(host.label, status, _named(host, exc))
            return None
        if not info.matches:
            host.outcome = HostOutcome(
                host.label,
                "refused",
                f"{host.label}: its fio ({info.fio_version}) speaks protocol "
                f"{info.protocol_version}, this machine's fio {info.local_protocol_version}: "
                "install the same fio version on both",
            )
            return None
        return endpoint

    def _start_all(
        self, endpoints: dict[str, HostAddress], workdir: Path, started_s: float
    ) -> None:
        interval_ms = sample_period_ms(self.spec)
        logs = {}
        for number, host in enumerate(self._hosts):
            endpoint = endpoints.get(host.label)
            if endpoint is None:
                continue
            job = workdir / f"host{number}.fio"
            job.write_text(self._jobs[host.label])
            logs[host.label] = workdir / f"host{number}"  # its logs: the same names on each
            logs[host.label].mkdir()
            host.client = HostClient(
                host.label,
                endpoint,
                job,
                workdir / f"host{number}.terse",
                eta_interval_ms=interval_ms,
                fio=self._fio,
                cwd=logs[host.label],
            )
        if self.spec.logs_latency:
            self._latency = GroupLatency(self.run_id, self.spec, self._sections, logs, started_s)
        self._say_if_unconfined()
        for host in self._hosts:  # started together, after every one is built
            if host.client is not None:
                host.client.start()
        for host in self._hosts:
            if host.client is not None:
                self._announce(host, 0)

    def _say_if_unconfined(self) -> None:
        """Once a run: the fio clients run without Landlock (fio.confine), so a hostile server
        could have them write files outside their directories. Every client is on this
        machine's kernel: they all are, or none is."""
        reasons = [h.client.unconfined_reason for h in self._hosts if h.client is not None]
        reason = next((r for r in reasons if r is not None), None)
        if reason is not None:
            self._emit(
                RunWarning(
                    self.run_id,
                    UNCONFINED_WARNING,
                    f"the fio clients are not confined to their directories ({reason}): a "
                    "hostile fio server could make them write files anywhere you can",
                )
            )

    # -- following the run ---------------------------------------------------------------

    def _follow(self, began: float, engine_version: str) -> None:
        period = 1.0 / self.spec.sample_rate_hz
        next_tick = time.monotonic() + period
        while True:
            running = [h for h in self._hosts if h.client is not None and h.outcome is None]
            for host in running:
                assert host.client is not None
                if host.client.poll() is not None:
                    self._finish(host, time.monotonic() - began, engine_version)
            running = [h for h in running if h.outcome is None]
            self._late_latency(running)
            if not running:
                return
            self._tick(running, time.monotonic() - began)
            next_tick += period
            if next_tick < time.monotonic():  # a slow tick: the next one a period from now
                next_tick = time.monotonic() + period
            if self._cancel.wait(max(0.0, next_tick - time.monotonic())):
                for host in running:
                    assert host.client is not None
                    host.client.interrupt()  # idempotent; clients started after a cancel
                    if host.client.overdue:
                        host.client.kill()
                time.sleep(0.05)  # look again soon, not at the next tick

    def _tick(self, running: list[_Host], t_s: float) -> None:
        samples = []
        for host in running:
            assert host.client is not None
            live = host.client.fresh_rates()
            if live is None:
                continue
            index = min(live.finished_jobs // self.spec.streams, len(self._sections) - 1)
            section = self._sections[index]
            if self._latency is not None:
                self._latency.seen(host.label, index, t_s)
            self._announce(host, index)
            sample = Sample(
                self.run_id, section.phase, section.repetition, t_s,
                live.read_mb_s, live.write_mb_s, live.read_iops, live.write_iops,
                live.progress, None, host=host.label,
            )  # fmt: skip
            samples.append(sample)
            self._emit(sample)
        if samples:
            self._emit(total_sample(self.run_id, t_s, samples))

    def _late_latency(self, running: list[_Host]) -> None:
        """The running hosts' interval latencies of the phases they have left behind, as
        their logs arrive, then the totals no running host is still to send."""
        if self._latency is None:
            return
        for host in running:
            for sample in self._latency.collect(host.label, host.section):
                self._emit(sample)
        for sample in self._latency.totals(host.label for host in running):
            self._emit(sample)

    def _announce(self, host: _Host, index: int) -> None:
        """phase_started for every section up to `index` not yet said, in order: a phase fio
        ran between two of its ETA lines (or after the last) is announced all the same,
        before its result, so no result arrives under a phase never started."""
        for begun in self._sections[host.section + 1 : index + 1]:
            self._emit(
                PhaseStarted(
                    self.run_id,
                    begun.phase,
                    BONNIE_NAMES[begun.phase],
                    begun.repetition,
                    planned_bytes(self.spec, begun.phase),
                    host=host.label,
                )
            )
        host.section = max(host.section, index)

    def _finish(self, host: _Host, elapsed_s: float, engine_version: str) -> None:
        """A host's client has ended: its phases, its result and its outcome."""
        assert host.client is not None
        code = host.client.wait()
        self.fio_jobs[host.label] = host.client.jobs()
        outcomes = section_outcomes(self.spec, self._sections, self.fio_jobs[host.label])
        if self._latency is not None:
            for sample in self._latency.collect(host.label, None):
                self._emit(sample)
            for lost in self._latency.lost(host.label):
                self._emit(
                    RunWarning(
                        self.run_id,
                        LATENCY_LOG_LOST,
                        f"{host.label}: fio sent no latency log of {lost.phase} (pass "
                        f"{lost.repetition}): its latency over time is missing; its figures "
                        "stand",
                        host=host.label,
                    )
                )
        for outcome in outcomes:
            self._announce(host, self._sections.index(Section(outcome.phase, outcome.repetition)))
            self._emit(
                PhaseFinished(
                    self.run_id,
                    outcome.phase,
                    outcome.repetition,
                    outcome.elapsed_s,
                    outcome.mb_s,
                    outcome.iops,
                    outcome.read_bytes,
                    outcome.write_bytes,
                    outcome.lat_p50_us,
                    outcome.lat_p99_us,
                    None,
                    outcome.error,
                    host=host.label,
                    stalls=self._stalls(host, outcome.phase, outcome.repetition),
                )
            )
        whole = len(outcomes) == len(self._sections) and not any(o.error for o in outcomes)
        if host.client.stopped:
            status, error = RunStatus.CANCELLED, f"{host.label}: cancelled"
        elif code == 0 and whole:
            status, error = RunStatus.COMPLETE, None
        else:
            said = host.client.last_words()
            error = f"{host.label}: fio exited with {code}" + (f" ({said})" if said else "")
            if code == 0:  # fio's server dropped the job (or a phase): its client still says 0
                why = host.client.first_complaint()
                error = f"{host.label}: {len(outcomes)} of {len(self._sections)} phases ended well"
                error += f" ({why})" if why else ""
            status = RunStatus.FAILED
        # only the last phase unlinks the test file; a job its server dropped made none
        if error is not None and not (not outcomes and host.client.dropped_the_job()):
            error += f"; {self._test_file(host)} may be left on it"
        result = RunResult(
            self.run_id, status, elapsed_s, ENGINE, engine_version,
            phase_summaries(outcomes), error, host=host.label,
        )  # fmt: skip
        if error is not None and status is RunStatus.FAILED:
            self._emit(RunError(self.run_id, error, host=host.label))
        self._emit(result)
        host.outcome = HostOutcome(host.label, status.value, error, result)

    def _stalls(self, host: _Host, phase: Phase, repetition: int) -> tuple[Stall, ...] | None:
        if self._latency is None:
            return None
        index = self._sections.index(Section(phase, repetition))
        return self._latency.stalls(host.label, index)

    def _test_file(self, host: _Host) -> str:
        return f"{self.spec.target.rstrip('/')}/stripewise-group-{self._tokens[host.label]}"

    def _stop_all(self) -> None:
        """Whatever happened, no client is left running (and so no job on its server)."""
        running = [h.client for h in self._hosts if h.client and h.client.poll() is None]
        for client in running:  # every one told first: hung hosts do not wait in turn
            client.interrupt()
        for client in running:
            client.stop()

    def _final_outcome(self, host: _Host) -> HostOutcome:
        if host.outcome is not None:
            return host.outcome
        return HostOutcome(host.label, "cancelled", f"{host.label}: cancelled")


def total_sample(run_id: str, t_s: float, samples: Sequence[Sample]) -> Sample:
    """The hosts' samples of one tick summed (host "total"); phase and repetition the ones
    most hosts are in (hosts drift apart by a little at phase ends)."""
    phase, repetition = Counter((s.phase, s.repetition) for s in samples).most_common(1)[0][0]
    progress = [s.progress for s in samples if s.progress is not None]
    return Sample(
        run_id, phase, repetition, t_s,
        sum(s.engine_read_mb_s for s in samples), sum(s.engine_write_mb_s for s in samples),
        sum(s.engine_read_iops for s in samples), sum(s.engine_write_iops for s in samples),
        min(progress) if progress else None, None, host=TOTAL_HOST,
    )  # fmt: skip


def _named(host: _Host, error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text if host.label in text else f"{host.label}: {text}"

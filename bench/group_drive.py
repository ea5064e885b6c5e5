"""What driving a group run costs this machine, and whether its total is its hosts' sum.

Eight real `fio --server` processes on loopback (fio's `null` engine, rate-limited so the run
lasts: `bench.group_gui`'s servers and job options), one `GroupRunner` at 2 samples per
second per host, two phases. The driver's cost is this Python process's CPU time (every
thread: the tick loop and the eight ETA readers) over the run's wall time; the `fio --client`
processes it starts are fio's and are reported apart. The total's error is the largest
relative difference, over the phases, between the run's total MB/s and the sum of the hosts'
own MB/s, and the largest relative difference between that total and fio's own bandwidth
figures (each job's terse `bw`, KiB/s) summed over every host's jobs of the phase: the
driver's arithmetic against fio's, independent of how the total is made.
"""

from __future__ import annotations

import resource
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.group_gui import HOSTS, JOB, start_servers, stop_servers

SAMPLE_RATE_HZ = 2.0
PHASE_BYTES = 96 * 2**20  # at 24 MiB/s per host: 4 s a phase


@dataclass(frozen=True)
class DriveFigures:
    driver_core_pct: float  # CPU time of this process / wall time, percent of one core
    clients_core_pct: float  # the fio client processes' CPU, same unit
    total_error_pct: float  # max over phases of |total - sum of hosts| / sum, percent
    vs_fio_pct: float  # max over phases of |total - sum of fio's own job bw| / that, percent
    samples: int


def measure() -> DriveFigures:
    from stripewise.hosts.group_run import GroupRunner
    from stripewise.model.bench import BenchSpec, Phase
    from stripewise.model.host_address import HostAddress
    from stripewise.protocol.events import Sample

    servers = start_servers(HOSTS)
    try:
        with tempfile.TemporaryDirectory(prefix="stripewise-group-drive-") as target:
            spec = BenchSpec(
                target=str(Path(target)),
                size_bytes=PHASE_BYTES,
                direct=False,
                phases=(Phase.SEQ_WRITE, Phase.SEQ_READ),
                sample_rate_hz=SAMPLE_RATE_HZ,
                engine="fio",
            )
            hosts = [HostAddress("fio", "127.0.0.1", port) for _process, port in servers]
            samples: list[object] = []
            runner = GroupRunner(
                hosts,
                spec,
                on_event=lambda e: samples.append(e) if isinstance(e, Sample) else None,
                job_options=JOB,
            )
            children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu_before, wall_before = time.process_time(), time.monotonic()
            outcome = runner.run()
            cpu = time.process_time() - cpu_before
            wall = time.monotonic() - wall_before
            children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        stop_servers(servers)
    if any(host.status != "complete" for host in outcome.hosts):
        raise RuntimeError(f"not every host completed: {[h.status for h in outcome.hosts]}")
    errors, against_fio = [], []
    for phase_total in outcome.total:
        hosts_sum = sum(
            result.mb_s.median
            for host in outcome.hosts
            if host.result is not None
            for result in host.result.results
            if result.phase is phase_total.phase and result.mb_s is not None
        )
        assert phase_total.mb_s is not None
        errors.append(abs(phase_total.mb_s.median - hosts_sum) / hosts_sum * 100)
        section = f"{phase_total.phase.value}.r1"
        fio_sum = sum(
            (job.read_bw_kib_s + job.write_bw_kib_s) * 1024 / 1e6
            for jobs in runner.fio_jobs.values()
            for job in jobs
            if job.section == section
        )
        against_fio.append(abs(phase_total.mb_s.median - fio_sum) / fio_sum * 100)
    client_cpu = (children_after.ru_utime + children_after.ru_stime) - (
        children_before.ru_utime + children_before.ru_stime
    )
    return DriveFigures(
        cpu / wall * 100, client_cpu / wall * 100, max(errors), max(against_fio), len(samples)
    )

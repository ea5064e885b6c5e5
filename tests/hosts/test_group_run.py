"""GroupRunner against real fio servers on loopback: live per-host and total samples, a total
that is the sum of the hosts, one host dying, refusing or of another fio version, cancel."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from stripewise.fio.probe import encode_probe_reply, local_protocol_version
from stripewise.hosts.group_run import GroupRunError, GroupRunner
from stripewise.model.bench import BenchSpec, Phase
from stripewise.model.host_address import HostAddress
from stripewise.protocol.events import PhaseFinished, RunError, RunResult, Sample
from stripewise.protocol.group import GroupOutcome
from tests.fixtures.fio_servers import FioServers, _descendants, fio_processes, free_port
from tests.fixtures.netns import NetnsFioServers as NetFioServers
from tests.fixtures.sshd import SshServer

# null engine, throttled: a phase lasts size / rate on every host, whatever the machine
SLOW = {"ioengine": "null", "rate": "40m"}  # 40 MiB/s per host


def spec(target: Path, size: str = "80M", **changes: object) -> BenchSpec:
    fields: dict[str, object] = {
        "target": str(target),
        "size_bytes": int(size.rstrip("M")) * 2**20,
        "block_bytes": 2**20,
        "direct": False,
        "phases": (Phase.SEQ_WRITE, Phase.SEQ_READ),
        "sample_rate_hz": 4.0,
        "engine": "fio",
    } | changes
    return BenchSpec(**fields)  # type: ignore[arg-type]


class Recorder:
    def __init__(self) -> None:
        self.events: list[object] = []
        self.emitted_at: list[float] = []  # monotonic, one per event
        self.first_sample = threading.Event()

    def __call__(self, event: object) -> None:
        self.events.append(event)
        self.emitted_at.append(time.monotonic())
        if isinstance(event, Sample) and event.host != "total":
            self.first_sample.set()

    def of(self, kind: type, host: str | None = None) -> list:
        return [e for e in self.events if isinstance(e, kind) and (host is None or e.host == host)]


def run_group(
    hosts: list[HostAddress], bench: BenchSpec, **options: object
) -> tuple[GroupOutcome, Recorder]:
    recorder = Recorder()
    runner = GroupRunner(hosts, bench, on_event=recorder, **options)  # type: ignore[arg-type]
    return runner.run(), recorder


def _clients() -> set[int]:
    """fio clients of this test's (other tests may run fio clients at the same time)."""
    found = set()
    for pid in set(_descendants(os.getpid())) & fio_processes():
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # it has just ended
        if any(part.startswith(b"--client=") for part in command):
            found.add(pid)
    return found


def _server_jobs(servers: list) -> list[int]:
    """Per-connection children of the servers still alive (a job left running)."""
    return [pid for server in servers if server.running for pid in _descendants(server.process.pid)]


def assert_nothing_left(servers: list) -> None:
    """No client of ours, and no job on a server: a server's per-connection process takes up
    to about a second and a half to exit after its client is gone (measured), so wait a bit."""
    deadline = time.monotonic() + 5
    while (_clients() or _server_jobs(servers)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _clients(), "a fio client is still running"
    assert not _server_jobs(servers), "a fio server still runs a job"


def test_three_hosts_stream_per_host_and_total_and_the_total_is_their_sum(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    servers = fio_servers(3)
    outcome, seen = run_group([s.address for s in servers], spec(tmp_path), job_options=SLOW)
    labels = {s.label for s in servers}
    assert [h.status for h in outcome.hosts] == ["complete"] * 3 and not outcome.partial
    assert outcome.status == "complete"
    for label in labels:  # live samples and results for every host, by name
        assert seen.of(Sample, label), label
        assert {e.phase for e in seen.of(PhaseFinished, label)} == {Phase.SEQ_WRITE, Phase.SEQ_READ}
        (result,) = seen.of(RunResult, label)
        assert result.status == "complete" and result.host == label
    # each tick: the total sample is the sum of the hosts' samples just before it
    ticks: list[Sample] = []
    for event in seen.events:
        if isinstance(event, Sample) and event.host != "total":
            ticks.append(event)
        elif isinstance(event, Sample):
            assert event.engine_write_mb_s == pytest.approx(sum(s.engine_write_mb_s for s in ticks))
            assert event.engine_read_mb_s == pytest.approx(sum(s.engine_read_mb_s for s in ticks))
            ticks = []
    assert any(s.engine_write_mb_s > 0 for s in seen.of(Sample, "total"))
    # the total is the sum of the hosts' own results (never fio's "All clients")
    for phase_total in outcome.total:
        hosts_sum = sum(
            r.mb_s.median
            for h in outcome.hosts
            for r in h.result.results  # type: ignore[union-attr]
            if r.phase is phase_total.phase and r.mb_s is not None
        )
        assert phase_total.mb_s is not None
        assert phase_total.mb_s.median == pytest.approx(hosts_sum, rel=1e-3)
        assert 3 * 35 < phase_total.mb_s.median < 3 * 50  # three hosts at 40 MiB/s (41.9 MB/s)
    assert_nothing_left(servers)
    assert GroupOutcome.from_json(outcome.to_json()) == outcome


def test_real_files_on_each_host_are_written_read_and_removed(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    servers = fio_servers(2)
    outcome, _seen = run_group([s.address for s in servers], spec(tmp_path, "8M"))
    assert [h.status for h in outcome.hosts] == ["complete", "complete"]
    for host in outcome.hosts:
        (write, read) = host.result.results  # type: ignore[union-attr]
        assert write.mb_s is not None and write.mb_s.median > 0
        assert read.iops is not None and read.iops.median > 0
    assert list(tmp_path.iterdir()) == []  # the last phase unlinked every host's test file


def test_a_host_killed_mid_run_fails_by_name_and_the_others_finish(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    servers = fio_servers(3)
    victim = servers[1]
    recorder = Recorder()
    runner = GroupRunner(
        [s.address for s in servers], spec(tmp_path), on_event=recorder, job_options=SLOW
    )
    killed_at: list[float] = []

    def kill() -> None:
        if recorder.first_sample.wait(20):
            time.sleep(0.5)
            victim.kill()
            killed_at.append(time.monotonic())

    killer = threading.Thread(target=kill)
    killer.start()
    outcome = runner.run()
    killer.join()
    # its last rates must not live on in the plot and the total while its client notices
    late = [
        at
        for at, event in zip(recorder.emitted_at, recorder.events, strict=True)
        if isinstance(event, Sample) and event.host == victim.label and at > killed_at[0] + 2.0
    ]
    assert late == [], "a dead host's samples went on after it died"
    statuses = {h.host: h.status for h in outcome.hosts}
    assert statuses.pop(victim.label) == "failed"
    assert set(statuses.values()) == {"complete"}
    assert outcome.partial and outcome.status == "complete"
    (error,) = recorder.of(RunError, victim.label)
    assert victim.label in error.message
    survivors = [h.result for h in outcome.hosts if h.status == "complete"]
    for phase_total in outcome.total:  # the total is the two survivors' sum
        assert phase_total.mb_s is not None
        assert phase_total.mb_s.median == pytest.approx(
            sum(
                r.results[0 if phase_total.phase is Phase.SEQ_WRITE else 1].mb_s.median
                for r in survivors
            ),  # type: ignore[union-attr]
            rel=1e-3,
        )
    assert not _clients()


def test_a_refusing_host_is_named_and_the_others_run(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    (server,) = fio_servers(1)
    closed = HostAddress("fio", "127.0.0.1", free_port())
    outcome, seen = run_group([server.address, closed], spec(tmp_path, "8M"), job_options=SLOW)
    by_host = {h.host: h for h in outcome.hosts}
    assert by_host[server.label].status == "complete"
    assert by_host[closed.label].status == "refused" and by_host[closed.label].result is None
    assert closed.label in (by_host[closed.label].error or "")
    assert [e.host for e in seen.of(RunError)] == [closed.label]
    assert outcome.partial


@pytest.fixture
def other_version_server() -> Iterator[HostAddress]:
    """A TCP server that answers fio's probe as a fio of the next protocol version (a second
    fio version cannot be installed here); it runs no job."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(4096)
                    conn.sendall(
                        encode_probe_reply(
                            local_protocol_version() + 1, hostname="old", fio_version="fio-9.99"
                        )
                    )
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield HostAddress("fio", "127.0.0.1", port)
    stop.set()
    thread.join(5)
    listener.close()


def test_a_host_of_another_fio_protocol_is_refused_before_anything_starts(
    fio_servers: FioServers, other_version_server: HostAddress, tmp_path: Path
) -> None:
    (server,) = fio_servers(1)
    outcome, seen = run_group(
        [server.address, other_version_server], spec(tmp_path, "8M"), job_options=SLOW
    )
    mismatch = next(h for h in outcome.hosts if h.host == other_version_server.label)
    assert mismatch.status == "refused"
    assert "fio-9.99" in (mismatch.error or "") and "protocol" in (mismatch.error or "")
    assert not seen.of(Sample, other_version_server.label)
    assert outcome.hosts[0].status == "complete" and outcome.partial


def test_cancel_mid_run_stops_every_host_and_leaves_nothing_running(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    servers = fio_servers(3)
    recorder = Recorder()
    runner = GroupRunner(
        [s.address for s in servers], spec(tmp_path, "400M"), on_event=recorder, job_options=SLOW
    )
    canceller = threading.Thread(target=lambda: recorder.first_sample.wait(20) and runner.cancel())
    began = time.monotonic()
    canceller.start()
    outcome = runner.run()
    canceller.join()
    assert time.monotonic() - began < 15  # 400 MiB at 40 MiB/s twice would take 20 s
    assert [h.status for h in outcome.hosts] == ["cancelled"] * 3
    assert outcome.status == "cancelled"
    assert_nothing_left(servers)


def test_what_a_group_run_cannot_measure_is_refused_in_one_line(tmp_path: Path) -> None:
    host = HostAddress("fio", "127.0.0.1", 8765)
    for bad, words in (
        (spec(Path("/dev/sdb")), "raw devices"),
        (spec(Path("/data/$HOME")), "safely"),
    ):
        with pytest.raises(GroupRunError, match=words) as caught:
            GroupRunner([host], bad, on_event=lambda e: None)
        assert "\n" not in str(caught.value)
    with pytest.raises(GroupRunError, match="each named once"):
        GroupRunner([host, host], spec(tmp_path), on_event=lambda e: None)
    with pytest.raises(GroupRunError, match="not allowed"):
        GroupRunner(
            [host], spec(tmp_path), on_event=lambda e: None, job_options={"exec_prerun": "id"}
        )


def test_an_ssh_host_runs_through_its_tunnel_beside_a_fio_host(
    fio_servers: FioServers, sshd: SshServer, tmp_path: Path
) -> None:
    (server,) = fio_servers(1)
    outcome, seen = run_group([sshd.address, server.address], spec(tmp_path), job_options=SLOW)
    ssh_label = sshd.address.label
    assert {h.host: h.status for h in outcome.hosts} == {
        ssh_label: "complete",
        server.label: "complete",
    }
    assert seen.of(Sample, ssh_label) and seen.of(RunResult, ssh_label)
    assert not outcome.partial

    def tunnel_fio() -> set[int]:  # fio under our sshd: the ssh host's server
        ours = {server.process.pid, *_descendants(server.process.pid)}
        return (set(_descendants(os.getpid())) & fio_processes()) - ours

    deadline = time.monotonic() + 10  # the remote fio server ends with the ssh session
    while tunnel_fio() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not tunnel_fio(), "the ssh host's fio server outlived the run"


def test_hosts_with_addresses_of_their_own_and_one_dying(
    netns_fio_servers: NetFioServers, tmp_path: Path
) -> None:
    """Three network namespaces, each a host at its own address on port 8765; one dies."""
    servers = netns_fio_servers(3)
    assert len({s.address.host for s in servers}) == 3
    recorder = Recorder()
    runner = GroupRunner(
        [s.address for s in servers], spec(tmp_path), on_event=recorder, job_options=SLOW
    )
    victim = servers[2]
    killer = threading.Thread(
        target=lambda: recorder.first_sample.wait(20) and (time.sleep(0.5), victim.kill())
    )
    killer.start()
    outcome = runner.run()
    killer.join()
    assert [h.status for h in outcome.hosts] == ["complete", "complete", "failed"]
    assert [h.host for h in outcome.hosts] == [s.label for s in servers]
    assert recorder.of(RunError, victim.label) and outcome.partial
    for label in (servers[0].label, servers[1].label):
        assert recorder.of(Sample, label)


def test_a_target_missing_on_a_host_is_named_with_fios_reason(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    """fio's server drops a job whose directory does not exist and its client exits 0 with no
    result: the host's error quotes why (the root cause, not fio's closing `job dropped`), and
    does not warn of a test file left behind that was never made."""
    (server,) = fio_servers(1)
    missing = tmp_path / "not-there"
    outcome, seen = run_group([server.address], spec(missing, "8M"), job_options=SLOW)
    (host,) = outcome.hosts
    assert host.status == "failed"
    assert f"{missing} is not a directory" in (host.error or ""), host.error
    assert "dropped" not in (host.error or "")
    assert "may be left" not in (host.error or ""), "a job its server refused made no file"
    assert [e.message for e in seen.of(RunError)] == [host.error]

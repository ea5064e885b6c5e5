"""The group run's wire: `host` on events, `group_result`, the total's arithmetic, and what
the driver reads of fio's client output (checked against a real fio client's own figures)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stripewise.fio.client import HostClient, client_address
from stripewise.fio.client_output import parse_eta, parse_terse
from stripewise.fio.jobs import group_job_file as job_file
from stripewise.fio.jobs import sections
from stripewise.fio.layout import JobError
from stripewise.model.bench import BenchSpec, Phase, PhaseResult, Spread
from stripewise.model.host_address import HostAddress
from stripewise.model.run import RunStatus
from stripewise.protocol.events import (
    PhaseStarted,
    RunError,
    RunResult,
    Sample,
    event_from_json,
    event_to_json,
)
from stripewise.protocol.group import GroupOutcome, HostOutcome, group_total
from stripewise.protocol.wire import ProtocolError
from tests.fixtures.fio_servers import FioServers
from tests.fixtures.processes import running


def _sample(host: str | None) -> Sample:
    return Sample("g", Phase.SEQ_READ, 1, 0.5, 10.0, 0.0, 5.0, 0.0, None, None, host=host)


def test_host_is_on_the_wire_only_in_group_runs() -> None:
    assert "host" not in event_to_json(_sample(None))
    for event in (
        _sample("10.0.0.1:8765"),
        _sample("total"),
        PhaseStarted("g", Phase.SEQ_WRITE, "seq_write", 1, 2**20, host="ssh://node-1"),
        RunError("g", "10.0.0.2:8765: refused", host="10.0.0.2:8765"),
    ):
        wire = json.loads(json.dumps(event_to_json(event)))
        assert wire["host"] == event.host
        assert event_from_json(wire) == event
    result = RunResult("g", RunStatus.COMPLETE, 1.0, "fio", "3.33", (), host="a:1")
    assert result.to_json()["host"] == "a:1" and RunResult.from_json(result.to_json()) == result
    with pytest.raises(ProtocolError, match="host"):
        event_from_json(event_to_json(_sample(None)) | {"host": 7})


def _result(host: str, *mb_s: float) -> RunResult:
    spread = Spread(sorted(mb_s)[len(mb_s) // 2], min(mb_s), max(mb_s), len(mb_s), mb_s)
    phase = PhaseResult(Phase.SEQ_WRITE, spread, spread, lat_p99_us=500.0, errors=("slow",))
    return RunResult("g", RunStatus.COMPLETE, 1.0, "fio", "3.33", (phase,), host=host)


def test_the_total_sums_the_hosts_repetition_by_repetition() -> None:
    (total,) = group_total([_result("a:1", 100.0, 110.0, 90.0), _result("b:1", 50.0, 60.0, 70.0)])
    assert total.mb_s is not None and total.mb_s.values == (150.0, 170.0, 160.0)
    assert total.mb_s.median == 160.0 and total.mb_s.n == 3
    assert total.lat_p99_us is None and total.cpu_pct is None  # never summed
    assert total.errors == ("a:1: slow", "b:1: slow")
    assert group_total([]) == ()


def test_a_group_outcome_round_trips_and_bad_ones_are_refused_by_name() -> None:
    spec = BenchSpec("/srv", 2**30, engine="fio")
    done = _result("a:1", 100.0)
    outcome = GroupOutcome(
        "site", spec,
        (HostOutcome("a:1", "complete", None, done),
         HostOutcome("b:1", "unreachable", "b:1: no answer")),
        group_total([done]), True, "2026-11-24T06:00:00+00:00", 3.5,
    )  # fmt: skip
    wire = json.loads(json.dumps(outcome.to_json()))
    assert wire["event"] == "group_result" and wire["status"] == "complete"
    assert GroupOutcome.from_json(wire) == outcome
    for key, value, words in (
        ("hosts", [{"host": "x", "status": "lost"}], "hosts.status"),
        ("partial", "yes", "partial"),
        ("spec", {"target": "/srv"}, "spec"),
    ):
        with pytest.raises(ProtocolError, match=words):
            GroupOutcome.from_json(wire | {key: value})


@pytest.mark.parametrize(
    ("line", "read", "write", "finished", "progress"),
    [
        ("Jobs: 2 (f=2): [_(2),R(2),P(2)][60.0%][r=205M][r=200 IOPS][eta 00m:02s]",
         205 * 1024e3 / 1e6, 0.0, 2, 0.6),
        ("Jobs: 1 (f=1): [m(1)][-.-%][r=500k,w=500k][r=125,w=125 IOPS][eta 00m:00s]",
         0.512, 0.512, 0, None),
        ("Jobs: 1 (f=1): [W(1)][80.0%][w=10.2M][w=10 IOPS][eta 00m:01s]",
         0.0, 10.2 * 1024e3 / 1e6, 0, 0.8),
    ],
)  # fmt: skip
def test_eta_lines(
    line: str, read: float, write: float, finished: int, progress: float | None
) -> None:
    live = parse_eta(line)
    assert live is not None
    assert (live.read_mb_s, live.write_mb_s) == (pytest.approx(read), pytest.approx(write))
    assert live.finished_jobs == finished and live.progress == progress
    assert parse_eta("Jobs: 0 (f=0)") is None


def test_the_eta_units_match_fios_own_final_figures(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    """The ETA's `M` is 1000 KiB/s: a 10 MiB/s job's live rate against its terse bandwidth."""
    (server,) = fio_servers(1)
    job = tmp_path / "rate.fio"
    job.write_text("[rate]\nioengine=null\nrw=write\nbs=64k\nsize=30m\nrate=10m\n")
    output = tmp_path / "out.terse"
    done = subprocess.run(
        ["fio", f"--client={client_address(server.address)}", str(job),
         "--output-format=terse", f"--output={output}", "--eta=always", "--eta-newline=1"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    rates = [
        live.write_mb_s
        for line in done.stdout.replace("\r", "\n").splitlines()
        if (live := parse_eta(line)) is not None and live.write_mb_s > 0
    ]
    (job_figures,) = parse_terse(output.read_text())
    final_mb_s = job_figures.write_bytes / (job_figures.write_runtime_ms / 1000) / 1e6
    assert rates and rates[-1] == pytest.approx(final_mb_s, rel=0.02)
    assert final_mb_s == pytest.approx(10 * 2**20 / 1e6, rel=0.02)


def test_the_job_file_runs_every_section_in_order_and_unlinks_at_the_end() -> None:
    spec = BenchSpec("/srv/x", 2**30, phases=(Phase.SEQ_WRITE, Phase.RANDOM_READ), repetitions=2)
    text = job_file(spec, "abc123")
    names = [s.name for s in sections(spec)]
    assert names == ["seq_write.r1", "random_read.r1", "seq_write.r2", "random_read.r2"]
    assert [line[1:-1] for line in text.splitlines() if line.startswith("[")][1:] == names
    assert text.count("stonewall") == 4 and text.rstrip().endswith("unlink=1")
    assert "directory=/srv/x" in text and "filename=stripewise-group-abc123" in text
    with pytest.raises(JobError, match="token"):
        job_file(spec, "../x")
    assert client_address(HostAddress("fio", "::1", 9000)) == "ip6:::1,9000"


def test_a_host_that_falls_silent_stops_adding_its_last_rates(tmp_path: Path) -> None:
    """A client whose server died may print nothing for seconds before it exits: its last ETA
    line must not stay in the plot and the total as if the host still moved data."""
    silent_fio = tmp_path / "fio"
    silent_fio.write_text(
        "#!/bin/sh\n"
        "echo 'Jobs: 1 (f=1): [W(1)][80.0%][w=10.2M][w=10 IOPS][eta 00m:01s]'\n"
        "exec sleep 30\n"
    )
    silent_fio.chmod(0o755)
    client = HostClient(
        "127.0.0.1:1",
        HostAddress("fio", "127.0.0.1", 1),
        tmp_path / "job.fio",
        tmp_path / "out.terse",
        eta_interval_ms=500,
        fio=str(silent_fio),
    )
    client.start()
    try:
        deadline = time.monotonic() + 5
        while client.fresh_rates() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        rates = client.fresh_rates()
        assert rates is not None and rates.write_mb_s > 0
        time.sleep(1.7)  # three ETA intervals (at least 1.5 s) without a line
        assert client.fresh_rates() is None
    finally:
        client.kill()
        client.wait()


def test_a_client_does_not_outlive_a_killed_stripewise(tmp_path: Path) -> None:
    """kill -9 of the process that drives a run: its fio clients are told to stop (SIGINT),
    not left running their jobs on the hosts."""
    fake_fio = tmp_path / "fio"
    fake_fio.write_text("#!/bin/sh\nexec sleep 60\n")
    fake_fio.chmod(0o755)
    driver = subprocess.Popen(
        [
            sys.executable, "-c",
            "import sys, time\n"
            "from pathlib import Path\n"
            "from stripewise.fio.client import HostClient\n"
            "from stripewise.model.host_address import HostAddress\n"
            "d = Path(sys.argv[1])\n"
            "c = HostClient('127.0.0.1:1', HostAddress('fio', '127.0.0.1', 1), d / 'j.fio',\n"
            "               d / 'o.terse', eta_interval_ms=500, fio=str(d / 'fio'))\n"
            "c.start()\n"
            "print(c.pid, flush=True)\n"
            "time.sleep(60)\n",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert driver.stdout is not None
    client = int(driver.stdout.readline())
    try:
        driver.kill()
        driver.wait()
        deadline = time.monotonic() + 15  # a loaded machine delivers the signal late
        while running(client) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running(client), "the client outlived its driver"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(client, signal.SIGKILL)

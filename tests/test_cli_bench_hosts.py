"""`stripewise bench --host/--group` end to end: real fio servers on loopback, the real CLI in
its own process, a real SQLite history."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from stripewise.cli.bench_hosts import JOB_OPTIONS_ENV
from stripewise.history.database import open_database, path_to_url
from stripewise.history.host_groups import save_group
from stripewise.model.host_group import HostGroup
from tests.fixtures.fio_servers import FioServers, free_port

TIMEOUT_S = 120


def bench(*args: str, job_options: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI in its own process; `job_options` added to the group's fio job."""
    extra = {JOB_OPTIONS_ENV: job_options} if job_options is not None else {}
    return subprocess.run(
        [sys.executable, "-m", "stripewise", "bench", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=os.environ | extra,
    )


def spec_args(target: Path, size: str = "16M") -> list[str]:
    return ["--target", str(target), "--size", size, "--buffered", "--phases", "seq_write,seq_read"]


def lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_two_hosts_stream_with_host_names_and_are_saved_as_one_group_run(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    servers = fio_servers(2)
    db = path_to_url(tmp_path / "history.db")
    hosts = [arg for s in servers for arg in ("--host", s.label)]
    done = bench(*hosts, *spec_args(tmp_path), "--json", "--save", "--db", db)
    assert done.returncode == 0, done.stderr
    events = lines(done.stdout)
    outcome = events[-1]
    assert outcome["event"] == "group_result" and outcome["partial"] is False
    assert [h["host"] for h in outcome["hosts"]] == [s.label for s in servers]
    results = [e for e in events if e["event"] == "run_result"]
    assert sorted(e["host"] for e in results) == sorted(s.label for s in servers)
    per_host = {e["host"]: e for e in results}
    for phase_total in outcome["total"]:  # the total is the hosts' sum
        hosts_sum = sum(
            r["mb_s"]["median"]
            for e in per_host.values()
            for r in e["results"]
            if r["phase"] == phase_total["phase"]
        )
        assert abs(phase_total["mb_s"]["median"] - hosts_sum) <= 1e-3 * hosts_sum
    assert "saved as run 1" in done.stderr
    listing = subprocess.run(
        [sys.executable, "-m", "stripewise", "--db", db, "history", "list", "--json"],
        capture_output=True, text=True, timeout=TIMEOUT_S, check=True,
    )  # fmt: skip
    assert [run["id"] for run in json.loads(listing.stdout)["runs"]] == [1]


def test_a_refusing_host_makes_a_partial_run_exit_3_naming_it(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    (server,) = fio_servers(1)
    closed = f"127.0.0.1:{free_port()}"
    done = bench("--host", server.label, "--host", closed, *spec_args(tmp_path), "--json")
    assert done.returncode == 3, done.stderr
    events = lines(done.stdout)
    errors = [e for e in events if e["event"] == "error"]
    assert [e["host"] for e in errors] == [closed] and closed in errors[0]["message"]
    assert events[-1]["partial"] is True and events[-1]["status"] == "complete"
    db = path_to_url(tmp_path / "history.db")
    text = bench(
        "--host", server.label, "--host", closed, *spec_args(tmp_path), "--save", "--db", db
    )  # fmt: skip
    assert text.returncode == 3 and "partial" in text.stdout and closed in text.stdout
    shown = subprocess.run(
        [sys.executable, "-m", "stripewise", "--db", db, "history", "show", "1"],
        capture_output=True, text=True, timeout=TIMEOUT_S, check=True,
    ).stdout  # fmt: skip
    assert "hosts     2 hosts; the results are their sum" in shown
    assert f"{server.label}  complete" in shown and f"{closed}  " in shown
    assert "partial   not every host completed" in shown
    child = subprocess.run(
        [sys.executable, "-m", "stripewise", "--db", db, "history", "show", "2"],
        capture_output=True, text=True, timeout=TIMEOUT_S, check=True,
    ).stdout  # fmt: skip
    assert "of group run 1" in child
    # measured on its host, not on the machine that drove the group
    assert f"  host      {server.label} (run from " in child


def test_bad_hosts_and_groups_are_refused_in_one_line(tmp_path: Path) -> None:
    db = path_to_url(tmp_path / "history.db")
    for args, words in (
        (["--host=-oProxyCommand=x"], "not a host name"),
        (["--host", "127.0.0.1:99999"], "port"),
        (["--host", "a:1", "--host", "a:1"], "each host once"),
        (["--group", "nowhere", "--db", db], "no host group"),
        (["--host", "127.0.0.1:8765", "--confirm-serial", "X"], "directories only"),
        (["--host", "127.0.0.1:8765", "--cpu-latency-us", "0"], "cannot be asked to hold it"),
    ):
        target = "/dev/sdz" if "--confirm-serial" in args else str(tmp_path)
        done = bench(*args, "--target", target, "--size", "8M")
        assert done.returncode == 2, (args, done.stderr)
        assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "Traceback" not in done.stderr
    raw = bench("--host", "127.0.0.1:8765", "--target", "/dev/sdz", "--size", "8M")
    assert raw.returncode == 2 and "raw devices" in raw.stderr


def test_a_group_from_the_history_runs_on_its_hosts(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    servers = fio_servers(2)
    db_path = tmp_path / "history.db"
    db = open_database(path_to_url(db_path))
    try:
        save_group(db, HostGroup("rack-1", tuple(s.address for s in servers)))
    finally:
        db.close()
    done = bench("--group", "rack-1", *spec_args(tmp_path), "--json", "--db", path_to_url(db_path))
    assert done.returncode == 0, done.stderr
    outcome = lines(done.stdout)[-1]
    assert outcome["group"] == "rack-1"
    assert [h["status"] for h in outcome["hosts"]] == ["complete", "complete"]


def test_a_group_from_a_database_that_cannot_be_opened_says_what_waits(tmp_path: Path) -> None:
    """Like `hosts list` and `history list`: runs kept on this computer for a server that is
    down are named, so nobody takes them for lost."""
    from datetime import UTC, datetime

    from stripewise.history.keyed_runs import KeyedRun
    from stripewise.history.live_run import LiveRun
    from stripewise.history.run_row import RunRow
    from stripewise.history.store import SampleRow
    from stripewise.model.run import RunStatus
    from stripewise.system.hostinfo import HostInfo

    down = f"postgresql+psycopg://bench@127.0.0.1:{free_port()}/stripewise?connect_timeout=3"
    started = datetime(2026, 11, 1, tzinfo=UTC)
    row = RunRow("kept run", "/srv", "fio", "3.33", started)
    live = LiveRun(down, KeyedRun(HostInfo("bench-01", "m-1"), row))
    live.begin()  # the server is down: the run goes to the spool
    live.add_samples([SampleRow(seq, seq * 0.5, "seq_read", 1, {}) for seq in range(3)])
    assert live.finish([], RunStatus.COMPLETE, started).waiting is not None
    done = bench("--group", "rack-1", *spec_args(tmp_path), "--save", "--db", down)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("stripewise: error: cannot open database"), done.stderr
    assert "; 3 samples of 1 run are kept on this computer, waiting to sync to" in done.stderr


def test_ctrl_c_cancels_every_host_and_the_run_is_saved_cancelled(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    servers = fio_servers(2)
    db = path_to_url(tmp_path / "history.db")
    hosts = [arg for s in servers for arg in ("--host", s.label)]
    slow = os.environ | {JOB_OPTIONS_ENV: "ioengine=null,rate=40m"}  # 4 GiB: 100 s a phase
    process = subprocess.Popen(
        [sys.executable, "-m", "stripewise", "bench", *hosts,
         *spec_args(tmp_path, "4G"), "--json", "--save", "--db", db],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=slow,
    )  # fmt: skip
    assert process.stdout is not None
    for line in process.stdout:  # the first live sample: both hosts are writing
        if json.loads(line)["event"] == "sample":
            break
    os.kill(process.pid, signal.SIGINT)
    rest, err = process.communicate(timeout=60)
    assert process.returncode == 1, err
    outcome = lines(rest)[-1]
    assert outcome["status"] == "cancelled"
    assert [h["status"] for h in outcome["hosts"]] == ["cancelled", "cancelled"]
    assert "saved as run 1" in err
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_children(s.process.pid) for s in servers):
        time.sleep(0.1)
    assert not any(_children(s.process.pid) for s in servers), "a server still runs a job"


def test_a_host_that_dies_mid_run_is_named_with_fios_word_and_the_file_it_left(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    """fio says a server went away in its output file, not on stdout: the error carries it,
    and names the test file as the server created it."""
    servers = fio_servers(2)
    hosts = [arg for s in servers for arg in ("--host", s.label)]
    paced = os.environ | {JOB_OPTIONS_ENV: "rate=16m"}  # 64 MiB: 4 s a phase
    process = subprocess.Popen(
        [sys.executable, "-m", "stripewise", "bench", *hosts, *spec_args(tmp_path, "64M"),
         "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=paced,
    )  # fmt: skip
    assert process.stdout is not None
    for line in process.stdout:  # the first live sample: both hosts are writing
        if json.loads(line)["event"] == "sample":
            break
    servers[1].kill()
    rest, err = process.communicate(timeout=90)
    assert process.returncode == 3, err
    (error,) = [e for e in lines(rest) if e["event"] == "error"]
    assert error["host"] == servers[1].label
    assert "disconnected" in error["message"], error["message"]
    left = error["message"].rpartition("; ")[2].removesuffix(" may be left on it")
    assert Path(left).parent == tmp_path and Path(left).is_file(), (left, list(tmp_path.iterdir()))


def _children(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


def test_latency_log_gives_host_and_total_samples_their_interval_latency(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    """--latency-log on hosts: each host's late samples and the total's carry `latency_us` and
    `histogram` (the issue's keys), the total's counts the hosts' sum; each host's
    phase_result its `stalls`; live samples none."""
    servers = fio_servers(2)
    hosts = [arg for s in servers for arg in ("--host", s.label)]
    paced = {**os.environ, JOB_OPTIONS_ENV: "rate=8m"}  # 2 s a phase: several 0.1 s windows
    argv = [sys.executable, "-m", "stripewise", "bench", *hosts, *spec_args(tmp_path),
            "--rate", "10", "--latency-log", "--json"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, env=paced)
    events = lines(done.stdout)
    lost = [e for e in events if e["event"] == "warning" and e["code"] == "latency_log_lost"]
    if lost:  # fio's client lost a histogram log (axboe/fio#274), and the run said so
        assert {w["host"] for w in lost} <= {s.label for s in servers}, lost
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, env=paced)
        events = lines(done.stdout)
    assert done.returncode == 0, done.stderr
    samples = [e for e in events if e["event"] == "sample"]
    late = [s for s in samples if "latency_us" in s]
    assert all(s["progress"] is None for s in late)  # live ones carry no latency
    for host in [s.label for s in servers]:
        mine = [s for s in late if s["host"] == host]
        assert {s["phase"] for s in mine} == {"seq_write", "seq_read"}, host
        assert set(mine[0]["latency_us"]) == {"p50", "p99", "p999"}
        assert set(mine[0]["histogram"]) == {"edges_us", "counts"}
        finished = [e for e in events if e["event"] == "phase_result" and e["host"] == host]
        assert all("stalls" in e for e in finished)
    for phase in ("seq_write", "seq_read"):
        of = [s for s in late if s["phase"] == phase]
        hosts_count = sum(sum(s["histogram"]["counts"]) for s in of if s["host"] != "total")
        total_count = sum(sum(s["histogram"]["counts"]) for s in of if s["host"] == "total")
        assert total_count == hosts_count > 0, phase

"""What `stripewise bench --host ...` prints as text (no --json): real fio servers on loopback
or closed ports, the real CLI in its own process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from stripewise.history.database import open_database, path_to_url
from stripewise.history.store import HistoryStore
from tests.fixtures.fio_servers import FioServers, free_port
from tests.test_cli_bench_hosts import TIMEOUT_S, bench


def bench_text(*args: str) -> subprocess.CompletedProcess[str]:
    return bench(*args, job_options="ioengine=null")  # no bytes to disk: fast phases


def spec_args(target: Path) -> list[str]:
    phases = ["--phases", "seq_write,seq_read"]
    return ["--target", str(target), "--size", "16M", "--buffered", *phases]


def test_a_run_no_host_ran_says_there_is_no_total(tmp_path: Path) -> None:
    """Each host's failure, then one line instead of a "Total" over an empty table (which
    also said "Run failed (fio , 0.1 s)", the version unknown)."""
    closed = [arg for _ in range(2) for arg in ("--host", f"127.0.0.1:{free_port()}")]
    db = path_to_url(tmp_path / "history.db")
    done = bench_text(*closed, *spec_args(tmp_path), "--save", "--db", db)
    assert done.returncode == 1, done.stderr
    assert done.stdout.rstrip().endswith("\nNo total: none of the 2 hosts completed"), done.stdout
    assert "Total of" not in done.stdout and "fio ," not in done.stdout
    # each host is named once: "127.0.0.1:P: refused: 127.0.0.1:P: connection refused" said it twice
    host = closed[1]
    assert f"\n{host}: refused: connection refused (no fio server there)\n" in done.stdout
    shown = subprocess.run(
        [sys.executable, "-m", "stripewise", "history", "show", "1", "--db", db],
        capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    assert f"{host}  failed: connection refused (no fio server there)\n" in shown.stdout, shown


# a repetition's figures as a host's line: "127.0.0.1:4711: Sequential Input, Block
# (repetition 2): 16,777.2 MB/s, 16,000 IOPS in 0.0 s"
RESULT_LINE = re.compile(r"^(?P<host>\S+): (?P<phase>[^:]+): [\d,.]+ MB/s, [\d,]+ IOPS in ")


def test_each_hosts_phase_result_line_names_its_phase(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    """A host's results come when its client ends, after every phase_started it gets (a
    phase over between two of fio's ETA lines gets none): each line names its phase."""
    servers = fio_servers(2)
    hosts = [arg for s in servers for arg in ("--host", s.label)]
    done = bench_text(*hosts, *spec_args(tmp_path), "--repetitions", "2")
    assert done.returncode == 0, done.stderr
    found = [m for line in done.stdout.splitlines() if (m := RESULT_LINE.match(line))]
    expected = sorted(
        f"{name} (repetition {repetition})"
        for name in ("Sequential Output, Block", "Sequential Input, Block")
        for repetition in (1, 2)
    )
    for server in servers:
        named = sorted(m["phase"] for m in found if m["host"] == server.label)
        assert named == expected, done.stdout


def test_a_figure_no_host_measured_claims_no_repetition(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    """A group's total has no latency or CPU, nor a host's run CPU (docs/protocol.md, "Group
    runs"): `history show` and the HTML report give them no repetition; MB/s has its two."""
    (server,) = fio_servers(1)
    db = path_to_url(tmp_path / "history.db")
    spec = [*spec_args(tmp_path), "--repetitions", "2", "--save", "--db", db]
    saved = bench_text("--host", server.label, *spec)
    assert saved.returncode == 0, saved.stderr
    shown = history(db, "show", "1")
    rows = {tuple(line.split()[:2]): line.split() for line in shown.splitlines()}
    assert rows["seq_read", "throughput"][-1] == "2", shown
    for metric in ("latency_p50", "latency_p99", "cpu", "efficiency"):
        assert rows["seq_read", metric][2] == "-" and rows["seq_read", metric][-1] == "-", shown
    page = history(db, "export", "2", "--format", "html")  # the host's run: no CPU measured
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", page[page.index("<td>seq_read</td><td>cpu") :])
    assert cells[:6] == ["seq_read", "cpu", "\u2013", "%", "", "\u2013"], cells[:6]
    with open_database(db) as opened:
        stored = HistoryStore(opened).get_run(1).results
    assert {r.repetitions for r in stored if r.value is None} == {0}


def history(db: str, *args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "stripewise", "history", *args, "--db", db],
        capture_output=True, text=True, timeout=TIMEOUT_S, check=True,
    ).stdout  # fmt: skip


def test_every_phase_is_announced_on_each_host_in_order(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    """Phases over between two of fio's ETA lines (ioengine=null: every one) are announced
    all the same, in the run's order, once each per host."""
    (server,) = fio_servers(1)
    done = bench_text("--host", server.label, *spec_args(tmp_path), "--repetitions", "2",
                      "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    started = [
        (e["phase"], e["repetition"])
        for e in events
        if e.get("event") == "phase_started" and e.get("host") == server.label
    ]
    assert started == [("seq_write", 1), ("seq_read", 1), ("seq_write", 2), ("seq_read", 2)]

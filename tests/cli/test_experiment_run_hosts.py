"""`stripewise experiment run --host ...` on two real fio servers on loopback: every pass a
group run on both at once, judged on their total, each host's own figure kept beside it, the
runs tagged in the history; and what over hosts cannot be asked for, refused before anything
runs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.cli.test_experiment_run import events, experiment
from tests.fixtures.fio_servers import FioServers, fio_servers

__all__ = ["fio_servers"]  # the fixture, used by name


def test_a_sweep_over_two_hosts_is_judged_on_their_total(
    tmp_path: Path, fio_servers: FioServers
) -> None:
    servers = fio_servers(2)
    labels = sorted(server.label for server in servers)
    work = tmp_path / "work"
    work.mkdir()
    db = tmp_path / "history.db"
    done = experiment(
        "--target", str(work), "--vary", "block_size=64k,1M", "--size", "8M",
        "--phases", "seq_read", "--max-passes", "3", "--half-width", "50", "--seed", "3",
        "--json", "--save", "--db", f"sqlite:///{db}",
        "--host", servers[0].label, "--host", servers[1].label,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    stream = events(done)
    result = stream[-1]
    assert result["event"] == "experiment_result" and result["restored"]
    figures = [e["figure"] for e in stream if e["event"] == "point_result"]
    assert len(figures) >= 6 and not result["failed"]
    visits = result["hosts"]
    assert len(visits) == len(figures)
    assert all(sorted(visit["hosts"]) == labels for visit in visits)
    # the total judged is the sum of the hosts' own figures, visit by visit
    assert [round(sum(v["hosts"].values()), 6) for v in visits] == [round(f, 6) for f in figures]

    runs = {e["run"] for e in stream if e["event"] == "point_result"}
    with sqlite3.connect(db) as conn:
        tagged = {
            run
            for (run,) in conn.execute(
                "SELECT run_id FROM run_tags WHERE tag = ?", (f"experiment:{result['experiment']}",)
            )
        }
    assert tagged == runs and None not in runs


def test_a_latency_target_over_hosts_is_refused_before_anything_runs(tmp_path: Path) -> None:
    done = experiment(
        "--target", str(tmp_path), "--vary", "queue_depth=1..16", "--latency-target-us", "500",
        "--size", "16M", "--host", "127.0.0.1:1",
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        "stripewise: error: --latency-target-us: a latency target needs a p99, and the hosts' "
        "total carries none: search on this machine\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("option", "line"),
    [
        (
            ("--vary", "read_ahead_kb=128,512"),
            "--vary read_ahead_kb: over hosts only workload parameters vary (block_size, "
            "queue_depth, streams); a tunable needs the helper, which runs on this machine",
        ),
        (
            ("--vary", "queue_depth=1,4", "--metric", "seq_read:lat_p99_us"),
            "--metric: over hosts the total is throughput (mb_s) or IOPS (iops)",
        ),
    ],
)
def test_what_hosts_cannot_vary_or_judge_is_refused_in_one_line(
    tmp_path: Path, option: tuple[str, ...], line: str
) -> None:
    done = experiment(
        "--target", str(tmp_path), "--size", "16M", "--phases", "seq_read", *option,
        "--host", "127.0.0.1:1",
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (2, f"stripewise: error: {line}\n")

"""`stripewise experiment run` as an admin runs it: the real helper, real knobs on loop devices,
the real built-in engine. Each sweep is kept short (few passes, a wide half-width) but its
effect is real: read-ahead visibly changes buffered sequential reads of small blocks."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from stripewise.model.experiment import TUNABLES, WORKLOAD
from tests.fixtures.loops import MiB, loop_device, mounted, needs_loop

STATE: list[str] = []  # the helpers' journal: this module's own, never the machine's


@pytest.fixture(scope="module", autouse=True)
def own_journal(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every helper these tests start keeps its journal in a folder of the module's: a killed
    helper's entry, put back by the next, is no note in the machine's journal afterwards."""
    state = tmp_path_factory.mktemp("helper-state")
    state.chmod(0o755)
    STATE[:] = ["--state-dir", str(state)]


def experiment(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stripewise", "experiment", "run", *args, *STATE],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def events(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in done.stdout.splitlines()]


def knob(name: str, key: str) -> str:
    return Path(f"/sys/block/{name}/queue/{key}").read_text().strip()


def test_a_workload_sweep_streams_points_and_ends_with_the_result(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    db = tmp_path / "history.db"
    done = experiment(
        "--target", str(work), "--vary", "queue_depth=1,8", "--size", "16M",
        "--block-size", "4k", "--phases", "random_read", "--engine", "builtin",
        "--max-passes", "3", "--half-width", "50", "--seed", "7", "--json", "--save",
        "--db", f"sqlite:///{db}",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    stream = events(done)
    assert stream[0]["event"] == "experiment_started"
    result = stream[-1]
    assert result["event"] == "experiment_result"
    assert set(result) >= {
        "experiment", "metric", "points", "baseline", "drift_pct", "recommendation", "restored",
    }  # fmt: skip
    assert result["metric"] == {"phase": "random_read", "metric": "mb_s", "unit": "MB/s"}
    assert result["restored"] is True
    # queue depth 1 is the starting workload: the baseline is that point, not an extra one
    assert [p["values"] for p in result["points"]] == [{"queue_depth": 1}, {"queue_depth": 8}]
    assert result["baseline"]["values"] == {"queue_depth": 1}
    for point in result["points"]:
        assert point["passes"] >= 3 and len(point["runs"]) == point["passes"]
        low, high = point["ci95"]
        assert low <= point["mean"] <= high
    rec = result["recommendation"]
    assert rec["verdict"] in ("better", "no_better", "cant_tell") and rec["reason"]
    # the first and the last visit measure the starting settings
    started = [e["values"] for e in stream if e["event"] == "point_started"]
    assert started[0] == started[-1] == {"queue_depth": 1}
    # every point's run is in the history, tagged with the experiment
    runs = [r for p in result["points"] for r in p["runs"]]
    with sqlite3.connect(db) as conn:
        tags = dict(conn.execute("SELECT id, tags FROM runs").fetchall())
    assert set(runs) <= set(tags)
    assert all(f"experiment:{result['experiment']}" in json.loads(tags[r]) for r in runs)
    # named as the Experiment page names them, its name what it varies (--name's help)
    assert stream[0]["name"] == "queue_depth"
    with sqlite3.connect(db) as conn:
        names = {name for (name,) in conn.execute("SELECT name FROM runs")}
    assert names == {
        "Experiment queue_depth: queue_depth=1",
        "Experiment queue_depth: queue_depth=8",
    }


@needs_loop
def test_read_ahead_changes_buffered_reads_and_is_put_back() -> None:
    with loop_device(256 * MiB) as loop, mounted(loop, "ext4") as mountpoint:
        before = knob(loop.name, "read_ahead_kb")
        done = experiment(
            "--target", mountpoint, "--vary", "read_ahead_kb=0,1024", "--size", "64M",
            "--block-size", "4k", "--buffered", "--phases", "seq_read", "--engine", "builtin",
            "--max-passes", "3", "--half-width", "50", "--json",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert knob(loop.name, "read_ahead_kb") == before
    result = events(done)[-1]
    assert result["restored"] is True
    means = {p["values"]["read_ahead_kb"]: p["mean"] for p in result["points"]}
    # no read-ahead: every 4 KiB read waits for the device; 1 MiB of read-ahead does not
    assert means[0] < 0.7 * means[1024], means
    # 64 MiB buffered on a machine of more RAM: each point carries the guard its runs tripped,
    # and the answer says so (a caution: the page cache may answer reads)
    assert all("small_buffered_file" in p["guards"] for p in result["points"]), result["points"]
    reason = result["recommendation"]["reason"]
    assert "caution, guards tripped: buffered file under 2 x RAM at read_ahead_kb=" in reason


@needs_loop
def test_a_scheduler_sweep_on_a_raw_device_is_put_back() -> None:
    with loop_device(128 * MiB) as loop:
        offered = knob(loop.name, "scheduler")
        if "mq-deadline" not in offered:
            pytest.skip(f"{loop.name} offers {offered}")
        before = offered
        done = experiment(
            "--target", loop.device, "--confirm-serial", loop.image,
            "--vary", "scheduler=none,mq-deadline", "--size", "32M", "--block-size", "64k",
            "--phases", "seq_read", "--engine", "builtin", "--max-passes", "3",
            "--half-width", "50", "--json",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert knob(loop.name, "scheduler") == before
    result = events(done)[-1]
    assert {p["values"]["scheduler"] for p in result["points"]} == {"none", "mq-deadline"}
    assert all(p["passes"] >= 3 for p in result["points"])


@needs_loop
def test_queue_depth_on_a_ram_backed_device() -> None:
    with loop_device(128 * MiB) as loop:
        done = experiment(
            "--target", loop.device, "--confirm-serial", loop.image,
            "--vary", "queue_depth=1,16", "--size", "64M", "--block-size", "4k",
            "--phases", "random_read", "--metric", "random_read:iops", "--engine", "builtin",
            "--max-passes", "3", "--half-width", "50", "--json",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = events(done)[-1]
    assert result["metric"]["unit"] == "IOPS"
    points = {p["values"]["queue_depth"]: p for p in result["points"]}
    assert points[1]["p99_us"] is not None and points[16]["p99_us"] is not None


@needs_loop
def test_a_point_whose_runs_fail_is_named_and_the_rest_go_on() -> None:
    # fio's 512-byte O_DIRECT reads on a device of 4 KiB sectors fail: only that point's
    # (the built-in engine would fall back to buffered I/O and say so)
    if shutil.which("fio") is None:
        pytest.skip("needs fio")
    with loop_device(64 * MiB, "--sector-size", "4096") as loop:
        done = experiment(
            "--target", loop.device, "--confirm-serial", loop.image,
            "--vary", "block_size=512,4k,64k", "--size", "16M", "--phases", "seq_read",
            "--engine", "fio", "--max-passes", "3", "--half-width", "50", "--json",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    stream = events(done)
    failed = [e for e in stream if e["event"] == "point_failed"]
    assert [e["values"] for e in failed] == [{"block_size": 512}]
    result = stream[-1]
    assert "block_size=512" in " ".join(result["failed"])
    assert {p["values"]["block_size"] for p in result["points"] if p["passes"] >= 3} == {
        4096, 65536, 2**20,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("vary", "says"),
    [
        ("bogus=1,2", "unknown parameter 'bogus'"),
        ("read_ahead_kb=-5,128", "out of range"),
        ("scheduler=none,cfq", "'cfq' is not offered"),
        ("stripe_cache_size=256,512", "only on md RAID"),
        ("read_ahead_kb=128,128", "listed twice"),
        ("read_ahead_kb=128,512", "acts only on reads through the page cache"),  # --direct
    ],
)
@needs_loop
def test_bad_input_is_one_line_exit_2_and_nothing_applied(vary: str, says: str) -> None:
    with loop_device(64 * MiB) as loop:
        before = {k: knob(loop.name, k) for k in ("read_ahead_kb", "scheduler")}
        done = experiment(
            "--target", loop.device, "--confirm-serial", loop.image, "--vary", vary,
            "--size", "16M",
        )  # fmt: skip
        assert done.returncode == 2
        assert {k: knob(loop.name, k) for k in before} == before
    assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("target", "options", "says"),
    [
        ("file", (), "is a file, neither a directory nor a block device"),
        ("loop", ("--size", "1G"), "holds 64.0 MiB, less than the 1.0 GiB asked"),
        ("loop", ("--size", "16M", "--phases", "seq_write"), "writing destroys everything"),
    ],
)
@needs_loop
def test_options_the_benchmark_refuses_are_one_line_exit_2_and_nothing_kept(
    tmp_path: Path, target: str, options: tuple[str, ...], says: str
) -> None:
    """As `bench` refuses them: the first benchmark, the starting settings, is refused before
    any I/O, so no point could run; the experiment is neither judged nor kept."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    with loop_device(64 * MiB) as loop:
        path = str(tmp_path / "file.img") if target == "file" else loop.device
        Path(tmp_path / "file.img").write_bytes(b"\0" * 4096)
        before = knob(loop.name, "read_ahead_kb")
        done = experiment(
            "--db", url, "--target", path, "--vary", f"read_ahead_kb=128,{int(before) * 2}",
            "--buffered", "--save", "--json", *options,
        )  # fmt: skip
        assert knob(loop.name, "read_ahead_kb") == before
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("stripewise: error: the benchmark did not start: ") and says in line
    assert line.endswith("; nothing was applied")
    assert [e["event"] for e in events(done)] == [
        "experiment_started",
        "point_started",
        "point_failed",
    ]
    kept = sqlite3.connect(tmp_path / "history.db").execute("SELECT count(*) FROM experiments")
    assert kept.fetchone() == (0,)


def test_the_help_names_every_parameter_vary_takes() -> None:
    """What --help lists is what --vary accepts (vm.dirty_* said once, as a pattern)."""
    shown = " ".join(experiment("--help").stdout.split())
    for name in (*WORKLOAD, *TUNABLES):
        assert (name if not name.startswith("vm.dirty_") else "vm.dirty_*") in shown, name


def test_over_hosts_only_workload_parameters_vary(tmp_path: Path) -> None:
    done = experiment(
        "--target", str(tmp_path), "--vary", "read_ahead_kb=128,512", "--size", "16M",
        "--host", "127.0.0.1:1",
    )  # fmt: skip
    assert done.returncode == 2
    assert "only workload parameters" in done.stderr
    assert os.listdir(tmp_path) == []


@needs_loop
def test_a_value_the_device_refuses_fails_that_point_only() -> None:
    # with scheduler none, nr_requests cannot pass the hardware queue's depth (nr_tags)
    with loop_device(64 * MiB) as loop:
        tags = int(Path(f"/sys/block/{loop.name}/mq/0/nr_tags").read_text())
        if knob(loop.name, "scheduler").split()[0] != "[none]" or tags * 2 > 2048:
            pytest.skip(f"{loop.name}: scheduler {knob(loop.name, 'scheduler')}, {tags} tags")
        before = knob(loop.name, "nr_requests")
        done = experiment(
            "--target", loop.device, "--confirm-serial", loop.image,
            "--vary", f"nr_requests=16,{tags * 2}", "--size", "16M", "--block-size", "64k",
            "--phases", "seq_read", "--engine", "builtin", "--max-passes", "3",
            "--half-width", "50", "--json",
        )  # fmt: skip
        assert knob(loop.name, "nr_requests") == before
    assert done.returncode == 0, done.stderr
    stream = events(done)
    failed = [e for e in stream if e["event"] == "point_failed"]
    assert [e["values"] for e in failed] == [{"nr_requests": tags * 2}]
    assert "queue" in failed[0]["message"] or "nr_requests" in failed[0]["message"]
    result = stream[-1]
    assert result["restored"] is True
    assert f"nr_requests={tags * 2}" in " ".join(result["failed"])
    judged = {p["values"]["nr_requests"] for p in result["points"] if p["passes"] >= 3}
    assert judged == {16, int(before)}


def _until_a_point_is_applied(process: subprocess.Popen[str], baseline: int) -> None:
    """Reads the JSON events until a point other than the starting settings has begun."""
    assert process.stdout is not None
    for line in process.stdout:
        event = json.loads(line)
        if event["event"] == "point_started" and event["values"]["read_ahead_kb"] != baseline:
            time.sleep(0.3)  # its apply is done and its run going
            return
    raise AssertionError("the experiment ended before a point was applied")


def _long_read_ahead_sweep(loop_target: str, values: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "stripewise",
            "experiment",
            "run",
            *STATE,
            "--target",
            loop_target,
            "--vary",
            f"read_ahead_kb={values}",
            "--size",
            "96M",
            "--block-size",
            "4k",
            "--buffered",
            "--phases",
            "seq_read",
            "--engine",
            "builtin",
            "--max-passes",
            "20",
            "--half-width",
            "0.5",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def _wait_for(condition: Callable[[], bool], timeout_s: float = 30) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@needs_loop
def test_a_killed_cli_leaves_nothing_applied() -> None:
    """SIGKILL gives the CLI no chance to revert: its helper's session ends (stdin closed)
    and the helper puts the experiment's values back itself."""
    with loop_device(256 * MiB) as loop, mounted(loop, "ext4") as mountpoint:
        before = int(knob(loop.name, "read_ahead_kb"))
        values = ",".join(str(v) for v in (16, 2048) if v != before)
        process = _long_read_ahead_sweep(mountpoint, values)
        try:
            _until_a_point_is_applied(process, before)
            helpers = psutil.Process(process.pid).children(recursive=True)
            assert int(knob(loop.name, "read_ahead_kb")) != before
            process.kill()
            process.wait(timeout=30)
            psutil.wait_procs(helpers, timeout=30)
            assert int(knob(loop.name, "read_ahead_kb")) == before
        finally:
            process.kill()
            process.wait()


@needs_loop
def test_a_killed_helpers_values_are_put_back_by_the_next_helper() -> None:
    with loop_device(256 * MiB) as loop, mounted(loop, "ext4") as mountpoint:
        before = int(knob(loop.name, "read_ahead_kb"))
        values = ",".join(str(v) for v in (16, 2048) if v != before)
        process = _long_read_ahead_sweep(mountpoint, values)
        try:
            _until_a_point_is_applied(process, before)
            helpers = psutil.Process(process.pid).children(recursive=True)
            helper = next(p for p in helpers if "stripewise.helper" in " ".join(p.cmdline()))
            helper.kill()
            assert process.wait(timeout=60) == 1  # the helper was lost mid-experiment
            left = int(knob(loop.name, "read_ahead_kb"))
            assert left != before  # nobody was left to put it back
            # the next helper to start, for whatever verb, puts it back as it starts
            shown = subprocess.run(
                [sys.executable, "-m", "stripewise", "tune", "verify", *STATE],
                capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
            assert _wait_for(lambda: int(knob(loop.name, "read_ahead_kb")) == before), shown
        finally:
            process.kill()
            process.wait()

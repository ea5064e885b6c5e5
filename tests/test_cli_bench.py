"""`stripewise bench` as an admin runs it, through the real helper and engines."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stripewise", "bench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_json_events_end_with_the_run_result(tmp_path: Path) -> None:
    done = bench(
        "--target",
        str(tmp_path),
        "--size",
        "32M",
        "--phases",
        "seq_write,seq_read",
        "--rate",
        "10",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["event"] == "run_result" and events[-1]["status"] == "complete"
    assert {e["event"] for e in events} >= {"phase_started", "sample", "phase_result"}
    assert [r["phase"] for r in events[-1]["results"]] == ["seq_write", "seq_read"]


def test_table_and_saved_run(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    db = f"sqlite:///{tmp_path / 'history.db'}"
    done = bench(
        "--target",
        str(work),
        "--size",
        "32M",
        "--phases",
        "seq_write,random_read",
        "--save",
        "--db",
        db,
    )
    assert done.returncode == 0, done.stderr
    assert "Sequential Output, Block" in done.stdout and "Random Seeks" in done.stdout
    listing = subprocess.run(
        [sys.executable, "-m", "stripewise", "--db", db, "history", "show", "1", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    run = json.loads(listing.stdout)
    assert run["status"] == "complete" and run["sample_count"] > 0
    metrics = {(r["phase"], r["metric"]): r for r in run["results"]}
    assert metrics[("seq_write", "throughput")]["unit"] == "MB/s"
    assert metrics[("seq_write", "throughput")]["value"] > 0
    assert run["context"]["filesystem"] and run["context"]["target"] == str(work)


@pytest.mark.parametrize(
    "args, words",
    [
        (["--size", "lots"], "size"),
        (["--phases", "seq_write,defrag"], "phases"),
        (["--rate", "50"], "--rate: 1 to 10"),
        (["--cpu-latency-us", "-1"], "must be 0 or more"),
        (["--streams", "-1"], "must be 1 or more"),
        (["--cpu-latency-us", "20000"], "--cpu-latency-us: 0 to 10,000 us"),
    ],
)
def test_invalid_input_exits_2(tmp_path: Path, args: list[str], words: str) -> None:
    done = bench("--target", str(tmp_path), "--size", "32M", *args)
    assert done.returncode == 2 and words in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root to run as nobody"
)
def test_a_bad_spec_is_refused_before_any_helper_starts(tmp_path: Path) -> None:
    """As a user with no privileges set up, a typo must not first meet a password prompt or a
    note about privileges: one line, naming the field."""
    argv = [sys.executable, "-m", "stripewise", "bench", "--target", str(tmp_path)]
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv, "--size", "lots"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd="/",
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "stripewise: error: --size: not a size: 'lots' (use e.g. 8G, 512M, 4k)"
    ]


def test_system_directories_are_refused(tmp_path: Path) -> None:
    done = bench("--target", "/etc", "--size", "32M")
    assert done.returncode == 2 and "/etc" in done.stderr


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_fio_engine_through_the_same_path(tmp_path: Path) -> None:
    done = bench(
        "--target",
        str(tmp_path),
        "--size",
        "64M",
        "--engine",
        "fio",
        "--phases",
        "seq_write,seq_read",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["engine"] == "fio" and result["status"] == "complete"
    assert all(r["mb_s"]["median"] > 0 for r in result["results"])


@pytest.mark.skipif(os.geteuid() != 0, reason="PM QoS requests need root")
def test_a_run_that_held_the_cpu_latency_is_filed_with_it(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'history.db'}"
    work = tmp_path / "work"
    work.mkdir()
    done = bench(
        "--target", str(work), "--size", "16M", "--phases", "seq_write", "--cpu-latency-us", "0",
        "--save", "--db", db, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = subprocess.run(
        [sys.executable, "-m", "stripewise", "history", "show", "1", "--db", db, "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(shown.stdout)["spec"]["cpu_latency_us"] == 0

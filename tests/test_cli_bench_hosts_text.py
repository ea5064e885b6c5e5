"""What `stripewise bench --host ...` prints as text (no --json): real fio servers on loopback
or closed ports, the real CLI in its own process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from stripewise.cli.bench_hosts import JOB_OPTIONS_ENV
from tests.fixtures.fio_servers import free_port

TIMEOUT_S = 120


def bench_text(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stripewise", "bench", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=os.environ | {JOB_OPTIONS_ENV: "ioengine=null"},  # no bytes to disk: fast phases
    )


def spec_args(target: Path) -> list[str]:
    phases = ["--phases", "seq_write,seq_read"]
    return ["--target", str(target), "--size", "16M", "--buffered", *phases]


def test_a_run_no_host_ran_says_fio_without_an_empty_version(tmp_path: Path) -> None:
    closed = [arg for _ in range(2) for arg in ("--host", f"127.0.0.1:{free_port()}")]
    done = bench_text(*closed, *spec_args(tmp_path))
    assert done.returncode == 1, done.stderr
    assert "Run failed (fio, " in done.stdout, done.stdout
    assert "fio ," not in done.stdout

"""Issue 13, finding 6: `kill -9` of the helper at random moments of fio and built-in runs.

The engine dies with the helper (no engine process 0.5 s later: fio through its parent-death
signal, the built-in engine's threads with the process), the client files the run `aborted`
with its samples, and the next helper to start removes the test file the dead one recorded.
Real CLI, helper, engines and history; the moments are drawn from a seeded random source.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from stripewise.model.run import RunStatus
from stripewise.protocol import wire as protocol
from tests.fixtures.bench_process import Bench

SEED = 1313
MOMENTS_PER_ENGINE = 3
ENGINES = [
    "builtin",
    pytest.param(
        "fio", marks=pytest.mark.skipif(shutil.which("fio") is None, reason="fio missing")
    ),
]
pytestmark = pytest.mark.skipif(
    not hasattr(signal, "SIGKILL") or psutil.Process().uids().effective != 0,
    reason="the CLI's helper runs as root here only when the test does",
)


def alive(processes: list[psutil.Process]) -> list[str]:
    found = []
    for process in processes:
        try:
            if process.status() != psutil.STATUS_ZOMBIE:
                found.append(f"{process.pid} {' '.join(process.cmdline())[:120]}")
        except psutil.NoSuchProcess:
            pass
    return found


def next_helper_sweeps() -> list[str]:
    """Start a helper the way the CLI does (root, default state directory) and ask what it
    removed at start."""
    helper = subprocess.Popen(
        [sys.executable, "-m", "stripewise.helper.server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert helper.stdin is not None and helper.stdout is not None
    helper.stdin.write(protocol.hello_request(1))
    helper.stdin.write(protocol.encode({"id": 2, "verb": "capabilities", "args": {}}))
    helper.stdin.flush()
    replies = [json.loads(helper.stdout.readline()) for _ in range(2)]
    helper.stdin.close()
    assert helper.wait(10) == 0
    removed: list[str] = replies[1]["result"]["removed_at_start"]
    return removed


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("moment", range(MOMENTS_PER_ENGINE))
def test_kill_9_at_a_random_moment_leaves_no_engine_no_file_and_an_aborted_run(
    tmp_path: Path, engine: str, moment: int
) -> None:
    delay = random.Random(f"{SEED}-{engine}-{moment}").uniform(0.0, 1.5)
    bench = Bench(tmp_path, "--json", engine=engine)
    try:
        bench.wait_for(lambda: len(bench.events("sample")) >= 1)
        time.sleep(delay)
        bench.wait_for(lambda: True)  # the helper and whatever it runs at this moment
        family = bench.spawned
        bench.helper().send_signal(signal.SIGKILL)
        time.sleep(0.5)
        left = alive(family)
        code, stderr = bench.finish(timeout_s=10)
    finally:
        bench.stop()
    test_files = [str(p) for p in bench.target.iterdir()]
    print(f"{engine} killed {delay:.2f} s after the first sample; left behind: {test_files}")
    assert left == [], f"still running 0.5 s after kill -9 of the helper: {left}"
    assert code == 1 and any("lost the helper mid-run" in line for line in stderr), stderr
    run = bench.stored()
    assert run["status"] == RunStatus.ABORTED.value
    assert run["sample_count"] == len(bench.events("sample")) > 0
    removed = next_helper_sweeps()
    # another helper starting meanwhile (a parallel session) may have swept it first
    assert all(path in removed or not Path(path).exists() for path in test_files)
    assert list(bench.target.iterdir()) == []

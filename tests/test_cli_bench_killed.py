"""Issue 28, point 1: `stripewise bench --save` killed by SIGKILL keeps what it had. The run
row is written when the run starts, samples as they come and each phase's results as it
finishes, as the GUI's recorder does; the next command that reads the history finds the
killed CLI's `running` run and files it `aborted`, with its finished phases and samples.

Real CLI, helper and engine; the CLI really gets SIGKILL, with no chance to clean up."""

from __future__ import annotations

import json
import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.bench_process import Bench
from tests.fixtures.cancelled_run import stripewise


@pytest.fixture
def leftovers(tmp_path: Path) -> Iterator[Path]:
    """The helper removes its test file when its CLI is gone; should it not, the test does."""
    yield tmp_path / "target"
    for leftover in (tmp_path / "target").glob("*"):
        leftover.unlink(missing_ok=True)


def finished(events: list[dict[str, Any]]) -> Counter[str]:
    return Counter(e["phase"] for e in events if e["event"] == "phase_result" and not e["error"])


def test_a_killed_cli_leaves_its_run_aborted_with_what_it_had(
    tmp_path: Path, leftovers: Path
) -> None:
    bench = Bench(tmp_path, "--json")
    try:
        # passes alternate (seq_write 1, seq_read 1, seq_write 2...): two of one phase
        bench.wait_for(lambda: finished(bench.events())["seq_write"] >= 2)
        seen = bench.events()  # a phase_result printed is a phase result saved
        bench.process.send_signal(signal.SIGKILL)
        bench.process.wait(10)
        deadline = time.monotonic() + 15
        while bench.left_running() and time.monotonic() < deadline:
            time.sleep(0.1)  # the helper sees its CLI gone, stops the engine and exits
        assert bench.left_running() == []
    finally:
        bench.stop()
    assert bench.process.returncode == -signal.SIGKILL

    listed = stripewise(bench.db, "history", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [run] = json.loads(listed.stdout)["runs"]
    assert run["status"] == "aborted", run

    shown = stripewise(bench.db, "history", "show", str(run["id"]), "--json")
    assert shown.returncode == 0, shown.stderr
    stored = json.loads(shown.stdout)
    assert stored["status"] == "aborted"
    repetitions = {
        r["phase"]: r["repetitions"] for r in stored["results"] if r["metric"] == "throughput"
    }
    assert repetitions["seq_write"] >= finished(seen)["seq_write"] >= 2
    assert all(r["value"] > 0 for r in stored["results"] if r["metric"] == "throughput")
    samples_by_then = sum(e["event"] == "sample" for e in seen[: _last_result(seen)])
    assert stored["sample_count"] >= samples_by_then > 0
    assert "recorder" in stored["context"]  # whose run it was: a live one is never aborted

    text = stripewise(bench.db, "history", "list")
    assert "aborted" in text.stdout and "running" not in text.stdout


def _last_result(events: list[dict[str, Any]]) -> int:
    return max(i for i, e in enumerate(events) if e["event"] == "phase_result")

"""Issue 13, client side: a run outlives neither its helper nor its client unrecorded.

`stripewise bench --save` whose helper is killed mid-run files the run `aborted` with every
sample it received; told to stop by SIGTERM, SIGHUP or SIGINT it cancels the run through the
helper and files it `cancelled`, leaving no process and no test file behind. The GUI's services
file a killed helper's run `aborted` the same way. Real CLI, helper and engine; nothing mocked.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stripewise import environment
from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore
from stripewise.model.run import RunStatus
from stripewise.protocol.events import PhaseFinished, RunResult, Sample, event_to_json
from stripewise.protocol.verbs import BenchStartArgs
from stripewise.services.bench_session import BenchRequest, BenchSession
from stripewise.services.helper_client import HelperClient
from stripewise.services.history import HistoryService
from tests.fixtures.bench_process import PHASES, REPETITIONS, SIZE, Bench


@pytest.fixture
def leftovers(tmp_path: Path) -> Iterator[Path]:
    """A SIGKILLed helper cannot remove its test file: the test does, unless the next helper
    started (by another test) swept it first."""
    yield tmp_path / "target"
    for leftover in (tmp_path / "target").glob("*"):
        leftover.unlink(missing_ok=True)


def repetitions_stored(run: dict[str, Any]) -> dict[str, int]:
    return {r["phase"]: r["repetitions"] for r in run["results"] if r["metric"] == "throughput"}


def finished_phases(events: list[dict[str, Any]]) -> Counter[str]:
    return Counter(e["phase"] for e in events if e["event"] == "phase_result" and not e["error"])


def test_a_killed_helper_files_the_run_aborted_with_every_sample_received(
    tmp_path: Path, leftovers: Path
) -> None:
    bench = Bench(tmp_path, "--json")
    try:
        bench.wait_for(
            lambda: len(bench.events("phase_result")) >= 3 and len(bench.events("sample")) >= 5
        )
        killed = time.monotonic()
        bench.helper().send_signal(signal.SIGKILL)
        code, stderr = bench.finish(timeout_s=10)
        took = time.monotonic() - killed
    finally:
        bench.stop()
    assert code == 1 and took < 5
    assert len(stderr) == 1, stderr
    assert "lost the helper mid-run (killed by SIGKILL)" in stderr[0]
    assert "run 1 saved as aborted" in stderr[0]
    events = bench.events()
    samples = [e for e in events if e["event"] == "sample"]
    assert events[-1]["event"] == "helper_lost" and events[-1]["status"] == "aborted"
    assert events[-1]["samples"] == len(samples)
    run = bench.stored()
    assert run["status"] == RunStatus.ABORTED.value
    assert run["sample_count"] == len(samples) > 0  # every sample the CLI received
    assert repetitions_stored(run) == finished_phases(events)  # the phases finished so far
    assert all(r["value"] > 0 for r in run["results"] if r["metric"] == "throughput")
    assert bench.left_running() == []


def test_a_killed_helper_is_one_line_in_a_terminal_run(tmp_path: Path, leftovers: Path) -> None:
    bench = Bench(tmp_path)
    try:
        bench.wait_for(lambda: sum(" MB/s, " in line for line in bench.lines) >= 2)
        bench.helper().send_signal(signal.SIGKILL)
        code, stderr = bench.finish(timeout_s=10)
    finally:
        bench.stop()
    assert code == 1
    assert len(stderr) == 1 and "lost the helper mid-run" in stderr[0], stderr
    run = bench.stored()
    assert run["status"] == RunStatus.ABORTED.value and run["sample_count"] > 0
    assert sum(repetitions_stored(run).values()) >= 2


@pytest.mark.parametrize(
    "number", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda number: number.name
)
def test_a_signalled_cli_cancels_the_run_and_files_it_cancelled(
    tmp_path: Path, number: signal.Signals
) -> None:
    bench = Bench(tmp_path, "--json")
    try:
        bench.wait_for(
            lambda: len(bench.events("phase_result")) >= 1 and len(bench.events("sample")) >= 5
        )
        bench.process.send_signal(number)
        code, stderr = bench.finish(timeout_s=15)
    finally:
        bench.stop()
    assert code == 1, stderr  # a cancelled run, as Ctrl-C has always ended
    assert f"stripewise: cancelled by {number.name}" in stderr
    events = bench.events()
    assert events[-1]["event"] == "run_result" and events[-1]["status"] == "cancelled"
    run = bench.stored()
    assert run["status"] == RunStatus.CANCELLED.value
    assert run["sample_count"] == len(bench.events("sample")) > 0
    assert repetitions_stored(run) == finished_phases(events)
    time.sleep(1)
    assert bench.left_running() == []
    assert list(bench.target.iterdir()) == []


def test_the_bench_session_files_a_killed_helpers_run_aborted(
    qtbot: Any, db_url: str, tmp_path: Path, leftovers: Path
) -> None:
    """The GUI's path: the real HelperClient, BenchSession and RunRecorder."""
    target = tmp_path / "target"
    target.mkdir()
    history = HistoryService.open(db_url)
    helper = HelperClient(options=["--state-dir", str(tmp_path / "helper-state")])
    helper.set_privileges(environment.probe_privileges())
    session = BenchSession(helper, history)
    samples: list[Sample] = []
    phases: list[PhaseFinished] = []
    finished: list[RunResult] = []
    session.sampleArrived.connect(samples.append)
    session.phaseFinished.connect(phases.append)
    session.finished.connect(finished.append)
    try:
        session.start(
            BenchRequest(
                args=BenchStartArgs.from_json(
                    {
                        "target": str(target),
                        "size": SIZE,
                        "phases": list(PHASES),
                        "repetitions": REPETITIONS,
                        "sample_rate_hz": 10,
                        "engine": "builtin",
                    }
                ),
                name="lost helper",
            )
        )
        qtbot.waitUntil(lambda: len(phases) >= 3 and len(samples) >= 5, timeout=60_000)
        pid = helper.process_id()
        assert pid is not None
        with qtbot.waitSignal(session.saved, timeout=15_000) as saved:
            os.kill(pid, signal.SIGKILL)
        run_id, status = saved.args
    finally:
        helper.stop()
    assert status == RunStatus.ABORTED.value
    assert finished[-1].status is RunStatus.ABORTED
    assert finished[-1].error == "lost the helper mid-run (the helper was killed by SIGKILL)"
    db = open_database(db_url)
    try:
        store = HistoryStore(db)
        detail, stored_samples = store.get_run(run_id), len(store.samples(run_id))
    finally:
        db.close()
        history.close()
    assert detail.summary.status is RunStatus.ABORTED
    assert stored_samples == len(samples) > 0
    throughput = {v.phase: v.repetitions for v in detail.results if v.metric == "throughput"}
    assert throughput == finished_phases([event_to_json(p) for p in phases])

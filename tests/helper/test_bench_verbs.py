"""Benchmarks through the real helper process: events stream, cancel, cleanup, refusals."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from tests.fixtures.bench_specs import spec
from tests.fixtures.helper_process import Helper


@pytest.fixture
def helper():
    started = Helper()
    yield started
    if started.process.poll() is None:
        started.close()


def test_run_streams_events_and_removes_its_file(helper: Helper, tmp_path: Path) -> None:
    started = helper.ask(
        "bench.start", spec(tmp_path, phases=["seq_write", "rewrite", "seq_read", "random_read"])
    )
    assert started["ok"], started
    result = helper.until_result()
    assert result["status"] == "complete"
    kinds = [e["event"] for e in helper.events]
    assert kinds.count("phase_started") == 4 and kinds.count("phase_result") == 4
    samples = [e for e in helper.events if e["event"] == "sample"]
    assert samples and all("cpu" in s and "engine_write_mb_s" in s for s in samples)
    phases = {r["phase"]: r for r in result["results"]}
    assert set(phases) == {"seq_write", "rewrite", "seq_read", "random_read"}
    assert phases["seq_write"]["mb_s"]["median"] > 0
    assert phases["random_read"]["iops"]["median"] > 0
    assert list(tmp_path.iterdir()) == [], "the test file must be removed"
    # the summary is of the figures each pass reported, as rounded there: a one-pass phase's
    # line and its table read the same (1,112.2 MB/s against 1,112.1 before)
    reported = {e["phase"]: e for e in helper.events if e["event"] == "phase_result"}
    for phase, summary in phases.items():
        assert summary["mb_s"]["median"] == reported[phase]["mb_s"], phase
        assert summary["iops"]["median"] == reported[phase]["iops"], phase


def test_cancel_stops_within_a_second(helper: Helper, tmp_path: Path) -> None:
    assert helper.ask("bench.start", spec(tmp_path, size="4G", phases=["seq_write"], direct=False))[
        "ok"
    ]
    while not any(e["event"] == "sample" for e in helper.events):
        helper.events.append(helper.read())
    asked = time.monotonic()
    assert helper.ask("bench.cancel", {})["ok"]
    result = helper.until_result()
    assert time.monotonic() - asked < 1.5
    assert result["status"] == "cancelled"
    assert list(tmp_path.iterdir()) == []


def test_stdin_closing_stops_the_run_and_cleans_up(tmp_path: Path) -> None:
    helper = Helper()
    assert helper.ask("bench.start", spec(tmp_path, size="4G", phases=["seq_write"], direct=False))[
        "ok"
    ]
    helper.events.append(helper.read())
    assert helper.close() == 0
    assert list(tmp_path.iterdir()) == []


def test_one_run_at_a_time_and_strict_arguments(helper: Helper, tmp_path: Path) -> None:
    assert helper.ask("bench.start", spec(tmp_path, size="1G", phases=["seq_write"], direct=False))[
        "ok"
    ]
    busy = helper.ask("bench.start", spec(tmp_path))
    assert busy["error"]["code"] == "busy"
    helper.ask("bench.cancel", {})
    helper.until_result()
    for bad, words in (
        ({"size": "lots"}, "size"),
        ({"phases": ["seq_write", "defrag"]}, "phases"),
        ({"sample_rate_hz": 50}, "sample_rate_hz"),
        ({"streams": 0}, "streams"),
        ({"block_size": "3k"}, "block_size"),
        ({"engine": "dd"}, "engine"),
        ({"shell": "rm -rf /"}, "unknown arguments"),
    ):
        refused = helper.ask("bench.start", spec(tmp_path, **bad))
        assert refused["error"]["code"] == "bad_args" and words in refused["error"]["message"]
    assert helper.ask("capabilities", {})["ok"], "the helper keeps serving"


def test_garbage_and_floods_leave_the_helper_serving(helper: Helper) -> None:
    import threading

    assert helper.process.stdin is not None
    stdin = helper.process.stdin

    def flood() -> None:  # written while replies are read: neither pipe may fill up
        stdin.write(b"{not json\n" * 500 + b"x" * 200_000 + b"\n")
        stdin.flush()

    writer = threading.Thread(target=flood)
    writer.start()
    errors = [helper.read() for _ in range(501)]
    writer.join()
    assert all(e["ok"] is False for e in errors)
    assert errors[-1]["error"]["code"] == "too_large"
    caps = helper.ask("capabilities", {})["result"]
    assert "builtin" in caps["engines"] and caps["ram_bytes"] > 0


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root to start a helper as nobody",
)
def test_privileged_verbs_refused_when_not_root(tmp_path: Path) -> None:
    helper = Helper("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
    try:
        refused = helper.ask("drop_caches", {})
        assert refused["error"]["code"] == "not_privileged"
        assert helper.ask("capabilities", {})["result"]["privileged"] is False
    finally:
        helper.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping caches needs root")
def test_drop_caches_as_root(helper: Helper) -> None:
    assert helper.ask("drop_caches", {})["result"] == {"dropped": True}


@pytest.mark.parametrize("number", [signal.SIGHUP, signal.SIGTERM])
def test_signals_stop_the_run_and_clean_up(tmp_path: Path, number: int) -> None:
    """A closed terminal (SIGHUP) or a kill must not leave a multi-gigabyte file behind."""
    helper = Helper()
    assert helper.ask("bench.start", spec(tmp_path, size="4G", phases=["seq_write"], direct=False))[
        "ok"
    ]
    while not list(tmp_path.iterdir()):
        time.sleep(0.05)
    helper.process.send_signal(number)
    assert helper.process.wait(timeout=10) == 128 + number
    assert list(tmp_path.iterdir()) == []


def test_client_sees_a_killed_helper_at_once(tmp_path: Path) -> None:
    """SIGKILL cannot be caught: the client notices the closed pipe immediately."""
    helper = Helper()
    assert helper.ask("bench.start", spec(tmp_path, size="4G", phases=["seq_write"], direct=False))[
        "ok"
    ]
    helper.process.kill()
    killed = time.monotonic()
    assert helper.process.stdout is not None
    while helper.process.stdout.readline():
        pass
    assert time.monotonic() - killed < 1.0
    for leftover in tmp_path.iterdir():  # SIGKILL leaves the file: remove it here
        leftover.unlink()


@pytest.mark.parametrize("engine", ["builtin", "fio"])
@pytest.mark.parametrize("first", ["rewrite", "random_write", "mixed", "random_read"])
def test_a_first_phase_other_than_seq_write_gets_the_file_laid_out(
    helper: Helper, tmp_path: Path, first: str, engine: str
) -> None:
    if engine == "fio" and shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    assert helper.ask("bench.start", spec(tmp_path, size="8M", phases=[first], engine=engine))["ok"]
    result = helper.until_result()
    assert result["status"] == "complete", [e for e in helper.events if e["event"] == "error"]
    (layout,) = [e for e in helper.events if e.get("code") == "layout"]
    assert layout["message"] == "writing the 8 MiB test file first"  # as --size 8M said it
    assert list(tmp_path.iterdir()) == []


def test_cancel_during_layout_is_cancelled_not_failed(helper: Helper, tmp_path: Path) -> None:
    assert helper.ask("bench.start", spec(tmp_path, size="4G", phases=["seq_read"], direct=False))[
        "ok"
    ]
    while not any(e.get("code") == "layout" for e in helper.events):
        helper.events.append(helper.read())
    time.sleep(0.2)
    assert helper.ask("bench.cancel", {})["ok"]
    result = helper.until_result()
    assert result["status"] == "cancelled"
    assert not any(e["event"] == "error" for e in helper.events)
    assert list(tmp_path.iterdir()) == []


def test_a_target_no_file_can_be_named_is_bad_input_not_internal(
    helper: Helper, tmp_path: Path
) -> None:
    reply = helper.ask("bench.start", spec(tmp_path / "\ud800"))
    assert reply["error"]["code"] == "refused" and "not a valid path" in reply["error"]["message"]

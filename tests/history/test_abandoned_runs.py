"""A run left `running` is aborted at the next start only when its recorder is really gone."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from typing import Any

from tests.history.conftest import HOST

from stripewise.history.recorder_id import recorder_alive, this_recorder
from stripewise.history.store import HistoryStore
from stripewise.model.run import RunStatus
from stripewise.model.run_context import Recorder, RunContext
from stripewise.system.hostinfo import HostInfo


def running_run(store: HistoryStore, host_id: int, name: str, recorder: Any) -> int:
    context = {} if recorder is None else {"recorder": stored(recorder)}
    return store.create_run(
        host_id,
        name=name,
        target="/srv",
        engine="builtin",
        engine_version="1",
        context=RunContext.from_json(context),
    )


def stored(recorder: Any) -> Any:
    """A recorder as runs.context holds it."""
    if isinstance(recorder, Recorder):
        return RunContext(recorder=recorder).to_json()["recorder"]
    return recorder


def read(recorder: Any) -> Recorder | None:
    """A recorder as a run's context reads it back."""
    return RunContext.from_json({"recorder": recorder}).recorder


def gone_recorder() -> dict[str, Any]:
    """A real process's identity, taken while it lived; it has exited since."""
    child = subprocess.Popen(["sleep", "5"])
    try:
        import stripewise.history.recorder_id as ids

        identity = {
            "pid": child.pid,
            "start_ticks": ids._start_ticks(child.pid),
            "boot_id": ids._boot_id(),
        }
        assert recorder_alive(read(identity))
    finally:
        child.kill()
        child.wait()
    assert not recorder_alive(read(identity))
    return identity


def test_only_dead_recorders_of_this_machine_are_aborted(store: HistoryStore, host_id: int) -> None:
    other = store.ensure_host(HostInfo("node9", "f" * 32, "6.1", "Xeon", 8, 2**34))
    live = running_run(store, host_id, "still being recorded", this_recorder())
    dead = running_run(store, host_id, "crashed", gone_recorder())
    legacy = running_run(store, host_id, "no recorder recorded", None)
    reused = running_run(store, host_id, "pid reused", replace(this_recorder(), start_ticks=1))
    elsewhere = running_run(store, other, "another host's run", None)

    assert store.mark_abandoned_runs_aborted(HOST.machine_id) == sorted([dead, legacy, reused])

    status = {run: store.get_run(run).summary.status for run in (live, elsewhere, dead)}
    assert status == {
        live: RunStatus.RUNNING,
        elsewhere: RunStatus.RUNNING,
        dead: RunStatus.ABORTED,
    }


def test_malformed_recorder_entries_count_as_gone() -> None:
    for bad in ("pid 5", {"pid": "5"}, {"pid": -1, "start_ticks": 1, "boot_id": ""}, None):
        assert recorder_alive(read(bad)) is False

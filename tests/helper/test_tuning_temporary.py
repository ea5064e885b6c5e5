"""A temporary apply (an experiment's values, issue 31): put back when the helper's session ends,
however its client went away, and by the next helper when the helper itself was killed. Real
loop devices, read back from /sys; a plain apply beside it is left as it was."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from stripewise.helper.tuning.journal import JOURNAL_NAME
from tests.fixtures.helper_process import TuningHelper
from tests.fixtures.loops import Loop, MiB, loop_device, needs_loop


@pytest.fixture
def state() -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp(prefix="stripewise-state-"))
    try:
        yield directory
    finally:
        shutil.rmtree(directory)


@pytest.fixture
def loop() -> Iterator[Loop]:
    with loop_device(16 * MiB) as device:
        yield device


def read_ahead(loop: Loop) -> int:
    return int(Path(f"/sys/block/{loop.name}/queue/read_ahead_kb").read_text())


def nr_requests(loop: Loop) -> int:
    return int(Path(f"/sys/block/{loop.name}/queue/nr_requests").read_text())


def journal(state: Path) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = json.loads((state / JOURNAL_NAME).read_text())["entries"]
    return entries


def temporary(loop: Loop, value: int) -> dict[str, object]:
    return {
        "settings": [{"key": "read_ahead_kb", "value": value, "device": loop.name}],
        "label": "experiment: read_ahead_kb",
        "temporary": True,
    }


def other_value(current: int) -> int:
    return 512 if current != 512 else 1024


pytestmark = needs_loop


def test_the_session_ending_puts_a_temporary_apply_back(state: Path, loop: Loop) -> None:
    before, requests = read_ahead(loop), nr_requests(loop)
    helper = TuningHelper(state)
    try:
        applied = helper.result("tuning.apply", temporary(loop, other_value(before)))
        plain = {"settings": [{"key": "nr_requests", "value": 64, "device": loop.name}]}
        helper.result("tuning.apply", plain)  # not temporary: it stays
        assert read_ahead(loop) == other_value(before)
    finally:
        helper.close()  # stdin closed: the session ends
    assert read_ahead(loop) == before
    entries = {e["id"]: e for e in journal(state)}
    assert entries[applied["journal"]]["state"] == "reverted"
    assert entries[applied["journal"]]["temporary"] is True
    try:
        assert nr_requests(loop) == 64
    finally:
        undo = TuningHelper(state)
        try:
            undo.result("tuning.revert", {})
        finally:
            undo.close()
    assert nr_requests(loop) == requests


def test_an_ending_signal_puts_it_back_too(state: Path, loop: Loop) -> None:
    before = read_ahead(loop)
    helper = TuningHelper(state)
    helper.result("tuning.apply", temporary(loop, other_value(before)))
    helper.process.send_signal(signal.SIGTERM)
    helper.process.wait(timeout=30)
    assert read_ahead(loop) == before


def test_a_killed_helpers_temporary_apply_is_put_back_by_the_next(state: Path, loop: Loop) -> None:
    before = read_ahead(loop)
    helper = TuningHelper(state)
    applied = helper.result("tuning.apply", temporary(loop, other_value(before)))
    os.kill(helper.process.pid, signal.SIGKILL)
    helper.process.wait(timeout=30)
    assert read_ahead(loop) == other_value(before)  # nobody was left to put it back
    assert journal(state)[-1]["state"] == "applied"
    following = TuningHelper(state)
    try:
        told = following.result("capabilities", {})["restored_at_start"]
        assert read_ahead(loop) == before
    finally:
        following.close()
    assert [(t["journal"], t["device"], t["key"]) for t in told] == [
        (applied["journal"], loop.name, "read_ahead_kb")
    ]
    assert journal(state)[-1]["state"] == "restored"


def test_another_live_sessions_temporary_apply_is_left_alone(state: Path, loop: Loop) -> None:
    before = read_ahead(loop)
    first = TuningHelper(state)
    try:
        first.result("tuning.apply", temporary(loop, other_value(before)))
        second = TuningHelper(state)  # its start-up put-back sees a live helper's entry
        try:
            assert second.result("capabilities", {})["restored_at_start"] == []
            assert read_ahead(loop) == other_value(before)
        finally:
            second.close()
        assert read_ahead(loop) == other_value(before)  # the second session set nothing
    finally:
        first.close()
    assert read_ahead(loop) == before

"""An apply whose helper was killed half-way (issue 28, point 4): the next root helper puts
back what it had written as soon as it starts, says so, and a new apply never takes the
half-applied values for the ones to go back to.

The kill is real: a helper SIGKILLed while blocked in write(2) of a loop device's scheduler
(the device's I/O held by a frozen filesystem, see `tests/fixtures/stalled_loop.py`), so the
writes before it are done and the ones after it are not, on real loop devices read back.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stripewise.helper.session import Session
from stripewise.helper.tuning.journal import JOURNAL_NAME, boot_id
from stripewise.helper.tuning.revert import handle_revert
from stripewise.protocol.wire import ProtocolError, Request
from stripewise.system.block_tunables import Tree
from tests.fixtures.helper_process import TuningHelper
from tests.fixtures.killed_apply import Killed, entries, killed_apply, setting
from tests.fixtures.loops import needs_loop
from tests.fixtures.stalled_loop import needs_fsfreeze
from tests.fixtures.tuning_state import device_values, fake_root, text_of

AS_NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")


@pytest.fixture
def state() -> Iterator[Path]:
    """World-readable (pytest's tmp_path is not), so a helper running as nobody can read the
    journal as an unprivileged `tuning.verify` does."""
    directory = Path(tempfile.mkdtemp(prefix="stripewise-state-"))
    directory.chmod(0o755)
    try:
        yield directory
    finally:
        shutil.rmtree(directory)


@pytest.fixture
def killed(state: Path) -> Iterator[Killed]:
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv")
    with killed_apply(state) as done:
        yield done


@needs_loop
@needs_fsfreeze
def test_an_apply_killed_midway_is_put_back_when_the_next_helper_starts(
    killed: Killed, state: Path
) -> None:
    helper = TuningHelper(state)
    try:
        capabilities = helper.result("capabilities", {})
        for loop in killed.loops:
            assert device_values(loop) == killed.found[loop.name], loop.name
        restored = capabilities["restored_at_start"]
        assert {(r["device"], r["key"]) for r in restored} >= {
            (killed.first.name, "scheduler"),
            (killed.stalled.name, "scheduler"),
        }
        assert all(r["journal"] == killed.journal for r in restored)
        entry = entries(state)[-1]
        assert entry["id"] == killed.journal and entry["state"] == "restored"

        nothing = helper.error("tuning.verify", {})
        assert nothing["code"] == "nothing_to_verify" and "interrupted" in nothing["message"]

        # a new apply starts from the values in force before the killed one: one revert
        first = killed.first.name
        applied = helper.result(
            "tuning.apply", {"settings": [setting("read_ahead_kb", 1024, first)]}
        )
        assert applied["settings"][0]["before"] == int(killed.found[first]["read_ahead_kb"])
        assert applied["restored_at_start"] == restored
        helper.result("tuning.revert", {})
        assert helper.error("tuning.revert", {})["code"] == "nothing_to_revert"
    finally:
        helper.close()
    for loop in killed.loops:
        assert device_values(loop) == killed.found[loop.name], loop.name


@needs_loop
@needs_fsfreeze
def test_verify_tells_knobs_an_interrupted_apply_never_wrote(killed: Killed, state: Path) -> None:
    """A helper that cannot write (so restores nothing) verifies the killed apply: the knobs it
    wrote are as written, the ones it never reached are said so, not "changed by something
    else"."""
    nobody = TuningHelper(state, prefix=AS_NOBODY)
    try:
        verified = nobody.result("tuning.verify", {})
    finally:
        nobody.close()
    assert verified["journal"] == killed.journal and verified["state"] == "interrupted"
    reasons = {(m["device"], m["key"]): m["reason"] for m in verified["mismatches"]}
    assert not any("something else" in reason for reason in reasons.values()), reasons
    for loop in killed.loops:
        assert "interrupted before" in reasons[(loop.name, "read_ahead_kb")]
    assert "interrupted before" in reasons[(killed.last.name, "nr_requests")]
    written = {(s["device"], s["key"]) for s in verified["settings"] if s["matches"]}
    assert written == {(killed.first.name, "scheduler"), (killed.stalled.name, "scheduler")}


# --- journals written by hand, as an earlier version wrote them, under a fake root -----------
def dead_pid() -> int:
    """A process's pid once it has ended."""
    done = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True, check=True)
    return int(done.stdout)


def interrupted_entry(root: Path, journal: str) -> dict[str, Any]:
    """What an earlier version journaled before writing sdq's read_ahead_kb (done, below)
    and nr_requests (never reached): no pid_start, no put_back."""
    return {
        "id": journal,
        "label": "preset streaming-throughput",
        "created": "2026-11-28T03:00:00+0000",
        "boot_id": boot_id(),
        "root": str(root),
        "pid": dead_pid(),
        "state": "pending",
        "devices": {"sdq": {"diskseq": Tree.under(root).diskseq("sdq")}},
        "changes": [
            {
                "key": key,
                "device": "sdq",
                "unit": unit,
                "before": before,
                "written": written,
                "after": None,
                "restore": [{"key": key, "value": before}],
                "side_effects": [],
            }
            for key, unit, before, written in (
                ("read_ahead_kb", "KiB", 128, 4096),
                ("nr_requests", "requests", 64, 32),
            )
        ],
    }


def add_entry(state: Path, entry: dict[str, Any]) -> None:
    path = state / JOURNAL_NAME
    old = json.loads(path.read_text())["entries"] if path.exists() else []
    path.write_text(json.dumps({"version": 1, "entries": [*old, entry]}))


@pytest.mark.skipif(shutil.which("chattr") is None, reason="needs chattr")
def test_an_interrupted_apply_that_cannot_be_put_back_blocks_the_next_apply(
    tmp_path: Path, state: Path
) -> None:
    root = fake_root(tmp_path)
    read_ahead = root / "sys/block/sdq/queue/read_ahead_kb"
    add_entry(state, interrupted_entry(root, "20261128T030000-aaaaaa"))
    read_ahead.write_text("4096\n")  # the one write the killed helper made
    if subprocess.run(["chattr", "+i", str(read_ahead)], check=False).returncode != 0:
        pytest.skip("this filesystem has no immutable flag")  # refuses even root: EPERM
    helper = TuningHelper(state, "--root", str(root))
    try:
        assert helper.result("capabilities", {})["restored_at_start"] == []
        entry = entries(state)[-1]
        assert entry["state"] == "pending" and "EPERM" in entry["restore_error"]

        verified = helper.result("tuning.verify", {})
        assert verified["state"] == "interrupted"
        assert [(m["key"], m["reason"]) for m in verified["mismatches"]] == [
            ("nr_requests", "not written: the apply was interrupted before it")
        ]

        one = {"settings": [setting("read_ahead_kb", 512, "sdq")]}
        refused = helper.error("tuning.apply", one)
        assert refused["code"] == "refused"
        assert "20261128T030000-aaaaaa" in refused["message"] and "EPERM" in refused["message"]
        assert len(entries(state)) == 1 and text_of(root, "sys/block/sdq/queue/read_ahead_kb") == (
            "4096"
        )

        subprocess.run(["chattr", "-i", str(read_ahead)], check=True)
        applied = helper.result("tuning.apply", one)  # puts the interrupted one back first
        assert applied["restored_at_start"] == [
            {
                "journal": "20261128T030000-aaaaaa",
                "key": "read_ahead_kb",
                "device": "sdq",
                "was": 4096,
                "value": 128,
            }
        ]
        assert applied["settings"][0]["before"] == 128
        assert [e["state"] for e in entries(state)] == ["restored", "applied"]
        helper.result("tuning.revert", {})
    finally:
        subprocess.run(["chattr", "-i", str(read_ahead)], check=False)
        helper.close()
    assert text_of(root, "sys/block/sdq/queue/read_ahead_kb") == "128"
    assert text_of(root, "sys/block/sdq/queue/nr_requests") == "64"


def test_revert_after_a_put_back_leaves_the_apply_before_it_alone(
    tmp_path: Path, state: Path
) -> None:
    """The revert asked for after a crash is the killed apply's, which the helper already put
    back as it started: the earlier apply stays until it is named."""
    root = fake_root(tmp_path)
    first = TuningHelper(state, "--root", str(root))
    try:
        earlier = first.result(
            "tuning.apply", {"settings": [{"key": "vm.dirty_ratio", "value": 35}]}
        )
    finally:
        first.close()
    add_entry(state, interrupted_entry(root, "20261128T030000-bbbbbb") | {"pid_start": 1})
    (root / "sys/block/sdq/queue/read_ahead_kb").write_text("4096\n")

    helper = TuningHelper(state, "--root", str(root))
    try:
        refused = helper.error("tuning.revert", {})
        assert refused["code"] == "nothing_to_revert"
        assert "20261128T030000-bbbbbb" in refused["message"] and "put back" in refused["message"]
        assert text_of(root, "sys/block/sdq/queue/read_ahead_kb") == "128"
        assert text_of(root, "proc/sys/vm/dirty_ratio") == "35"
        reverted = helper.result("tuning.revert", {"journal": earlier["journal"]})
        assert reverted["restored_at_start"][0]["journal"] == "20261128T030000-bbbbbb"
    finally:
        helper.close()
    assert text_of(root, "proc/sys/vm/dirty_ratio") == "20"


def test_a_revert_that_beats_the_start_up_put_back_puts_back_the_same(
    tmp_path: Path, state: Path
) -> None:
    """A revert sent right after hello can take the journal's lock before the start-up thread:
    it puts the interrupted apply back itself and answers as the thread would have."""
    if os.geteuid() != 0:
        pytest.skip("reverting needs a root helper")
    root = fake_root(tmp_path)
    add_entry(state, interrupted_entry(root, "20261128T030000-dddddd"))
    (root / "sys/block/sdq/queue/read_ahead_kb").write_text("4096\n")
    session = Session(io.BytesIO(), root=str(root), state_dir=str(state))  # no start-up thread
    try:
        with pytest.raises(ProtocolError) as refused:
            handle_revert(session, Request(2, "tuning.revert", {}))
    finally:
        session.close()
    assert refused.value.code == "nothing_to_revert" and "put back" in str(refused.value)
    assert text_of(root, "sys/block/sdq/queue/read_ahead_kb") == "128"
    assert [e["state"] for e in entries(state)] == ["restored"]


def test_an_unprivileged_helper_puts_nothing_back(state: Path) -> None:
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv")
    root = fake_root(state)  # where nobody can read it (tmp_path is root's alone)
    add_entry(state, interrupted_entry(root, "20261128T030000-cccccc"))
    (root / "sys/block/sdq/queue/read_ahead_kb").write_text("4096\n")
    before = sorted(p.name for p in state.iterdir())
    nobody = TuningHelper(state, "--root", str(root), prefix=AS_NOBODY)
    try:
        assert nobody.result("capabilities", {})["restored_at_start"] == []
        assert nobody.result("tuning.verify", {})["state"] == "interrupted"
    finally:
        nobody.close()
    assert text_of(root, "sys/block/sdq/queue/read_ahead_kb") == "4096"
    assert sorted(p.name for p in state.iterdir()) == before  # no lock file, no new journal

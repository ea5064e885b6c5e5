"""`stripewise tune set|apply|verify|revert` on a real loop device, through the real helper.

The commands are parsed as cli/tune.py does once `add_write_commands` joins the `tune` group;
the helper is the real process the CLI starts (as root here), with its journal in a temp folder.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from stripewise import environment
from stripewise.cli import main
from stripewise.cli.tune_write import add_write_commands
from tests.fixtures.killed_apply import killed_apply
from tests.fixtures.stalled_loop import freezable_loop, io_held, needs_fsfreeze
from tests.fixtures.tuning_state import queue
from tests.helper.test_builtin_engine import Loop
from tests.helper.test_tuning_verbs import VM, device_values, restore_vm, restored_loop, vm_now

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("losetup") is None, reason="needs root and losetup"
)


def tune(state: Path, *argv: str) -> int:
    parser = argparse.ArgumentParser(prog="stripewise")
    commands = parser.add_subparsers(dest="command")
    actions = commands.add_parser("tune").add_subparsers(dest="tune_command")
    add_write_commands(actions)
    args = parser.parse_args(["tune", *argv, "--state-dir", str(state)])
    code: int = args.tune_run(args)
    return code


@pytest.fixture
def loop() -> Iterator[Loop]:
    with restored_loop() as attached:
        yield attached


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def vm_values() -> Iterator[dict[str, int]]:
    found = vm_now()
    try:
        yield found
    finally:
        restore_vm(found)


def test_set_verify_revert(loop: Loop, state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = device_values(loop)
    assert tune(state, "set", "read_ahead_kb=4096", "nr_requests=64", "--device", loop.device) == 0
    out = capsys.readouterr().out
    assert f"{loop.name}: read_ahead_kb: {found['read_ahead_kb']} -> 4096 KiB" in out
    assert f"{loop.name}: nr_requests: {found['nr_requests']} -> 64 requests" in out
    assert "undo with `stripewise tune revert`" in out
    assert device_values(loop) == {**found, "read_ahead_kb": "4096", "nr_requests": "64"}

    assert tune(state, "verify") == 0
    assert "all 2 as written" in capsys.readouterr().out
    Path(f"/sys/block/{loop.name}/queue/nr_requests").write_text("32")
    assert tune(state, "verify", "--json") == 1
    mismatches = json.loads(capsys.readouterr().out)["mismatches"]
    assert [(m["key"], m["now"]) for m in mismatches] == [("nr_requests", 32)]

    assert tune(state, "revert") == 0
    out = capsys.readouterr().out
    assert f"{loop.name}: read_ahead_kb: 4096 -> {found['read_ahead_kb']} KiB" in out
    assert device_values(loop) == found

    assert tune(state, "revert") == 1, "nothing left to revert"
    assert "no applied tuning" in capsys.readouterr().err


def test_apply_a_preset_and_revert_it(
    loop: Loop, state: Path, vm_values: dict[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    restore_vm({**vm_values, "dirty_bytes": 0, "dirty_background_bytes": 0})  # ratio mode
    before_vm, before_device = vm_now(), device_values(loop)
    if before_vm["dirty_ratio"] == 10 and before_vm["dirty_background_ratio"] == 3:
        (VM / "dirty_ratio").write_text("20")  # so that the preset changes something
        before_vm = vm_now()
    assert tune(state, "apply", "latency-sensitive", "--device", loop.name) == 0
    out = capsys.readouterr().out
    assert "vm.dirty_ratio" in out and "vm.dirty_background_ratio: " in out
    assert vm_now()["dirty_ratio"] == 10 and vm_now()["dirty_background_ratio"] == 3
    assert device_values(loop)["scheduler"] == "mq-deadline"
    assert tune(state, "revert") == 0
    assert vm_now() == before_vm and device_values(loop) == before_device


def test_a_pair_says_which_half_it_wrote(
    state: Path, vm_values: dict[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    """The kernel keeps one of dirty_ratio and dirty_bytes: writing one zeroes the other, and
    reverting writes back the half that was in force, which the line names."""
    restore_vm({**vm_values, "dirty_ratio": 20, "dirty_bytes": 0})
    assert tune(state, "set", "vm.dirty_ratio=30") == 0
    assert capsys.readouterr().out.splitlines()[0] == "vm.dirty_ratio: 20 -> 30 %"  # 0 -> 0 unsaid
    assert tune(state, "revert") == 0
    assert capsys.readouterr().out.splitlines()[0] == "vm.dirty_ratio: 30 -> 20 %"

    assert tune(state, "set", "vm.dirty_bytes=536870912") == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "vm.dirty_bytes: 0 -> 536870912 bytes (512 MiB); vm.dirty_ratio 20 -> 0"
    )
    assert tune(state, "revert") == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "vm.dirty_bytes: 536870912 -> 0 bytes (vm.dirty_ratio 20 % written back, the half in "
        "force before)"
    )
    assert (vm_now()["dirty_ratio"], vm_now()["dirty_bytes"]) == (20, 0)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["set", "read_ahead_kb=-1", "--device", "LOOP"], "out of range"),
        (["set", "read_ahead_kb=4096"], "add --device"),
        (["set", "readahead=4096", "--device", "LOOP"], "unknown tunable"),
        (["set", "read_ahead_kb", "--device", "LOOP"], "KEY=VALUE"),
        (["set", "vm.dirty_bytes=0"], "refuses 0"),
        (["set", "read_ahead_kb=4096", "--device", "../etc"], "not a device name"),
        (["set", "read_ahead_kb=4096", "--device", "nosuchdisk9"], "does not exist"),
        (["set", "nr_requests=2048", "--device", "LOOP"], "hardware queue depth"),
        (["set", "scheduler=cfq", "--device", "LOOP"], "LOOP: scheduler: 'cfq' is not offered"),
        (["apply", "no-such-preset", "--device", "LOOP"], "unknown preset"),
    ],
)
def test_invalid_input_exits_2_with_nothing_written(
    loop: Loop,
    state: Path,
    vm_values: dict[str, int],
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    words: str,
) -> None:
    if device_values(loop)["scheduler"] != "none":
        Path(f"/sys/block/{loop.name}/queue/scheduler").write_text("none")
    found = device_values(loop)
    argv = [a.replace("LOOP", loop.name) for a in argv]
    assert tune(state, *argv) == 2
    assert words.replace("LOOP", loop.name) in capsys.readouterr().err
    assert device_values(loop) == found and vm_now() == vm_values
    assert not (state / "tuning-journal.json").exists()


def test_a_loop_device_whose_file_was_detached_is_refused(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Previewed, then `losetup -d`: the node stays, with no medium. Its knobs would be
    journaled for whatever file is attached next, so nothing is written."""
    with restored_loop() as gone:
        pass
    if Path(f"/sys/block/{gone.name}/size").read_text().strip() != "0":
        pytest.skip(f"{gone.name} was taken again by another test")
    assert tune(state, "set", "read_ahead_kb=4096", "--device", gone.device) == 2
    err = capsys.readouterr().err
    assert f"/dev/{gone.name} has no medium (0 bytes): nothing to tune" in err
    assert err.count("\n") == 1
    assert not (state / "tuning-journal.json").exists()


def test_without_a_way_to_root_it_exits_1_and_writes_nothing(
    loop: Loop,
    state: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    none = environment.Privileges(environment.PrivilegeMode.NONE, "no privileged actions: test")
    monkeypatch.setattr(environment, "probe_privileges", lambda: none)
    found = device_values(loop)
    assert tune(state, "set", "read_ahead_kb=4096", "--device", loop.name) == 1
    assert "needs root" in capsys.readouterr().err
    assert tune(state, "revert") == 1
    assert device_values(loop) == found and not state.exists()
    # nothing to change needs no root, and no helper is started for it
    scheduler = found["scheduler"]
    assert tune(state, "set", f"scheduler={scheduler}", "--device", loop.name) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{loop.name}: scheduler: {scheduler}, already in force",
        "nothing to change: every value is already in place",
    ]


@pytest.mark.skipif(shutil.which("fsfreeze") is None, reason="needs fsfreeze")
def test_an_apply_killed_midway_is_told_by_show_and_put_back_by_the_next_command(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A helper SIGKILLed in the middle of an apply (tests/fixtures/killed_apply.py): `tune
    show` says what it left in force; the next command's helper puts it back and says so."""
    state.mkdir(mode=0o755)
    with killed_apply(state) as killed:
        devices = [arg for loop in killed.loops for arg in ("--device", loop.name)]
        assert main(["tune", "show", *devices, "--state-dir", str(state)]) == 0
        shown = capsys.readouterr().out
        assert f"note: journal {killed.journal}: an apply was interrupted half-way" in shown
        first, stalled = killed.first.name, killed.stalled.name
        was, now = killed.found[first]["scheduler"], killed.schedulers[first]
        assert f"{first}: scheduler {was} -> {now}" in shown

        assert tune(state, "verify") == 1  # nothing left to verify once put back
        out, err = capsys.readouterr()
        assert out.startswith("restored ") and f"(journal {killed.journal}): " in out
        was, now = killed.schedulers[stalled], killed.found[stalled]["scheduler"]
        assert f"{stalled}: scheduler {was} -> {now}" in out
        assert len(out.splitlines()) == 1 and "was interrupted half-way" in err
        # show named each value left in force once (a scheduler switch's nr_requests too,
        # which the kernel resets; the helper writes the scheduler, and it comes back along)
        left = re.search(r"left (\d+) values? in force: (.*?); the next", shown)
        assert left is not None, shown
        items = left[2].split(", ")
        assert len(items) == len(set(items)) == int(left[1])
        written = out.partition("): ")[2].strip().split(", ")
        assert {" ".join(w.split()[:2]) for w in written} <= {
            " ".join(i.split()[:2]) for i in items
        }
        for loop in killed.loops:
            assert device_values(loop) == killed.found[loop.name]

        assert main(["tune", "show", *devices, "--state-dir", str(state), "--json"]) == 0
        notes = json.loads(capsys.readouterr().out)["notes"]
        # history now: show itself puts nothing back (`tune verify`'s helper did)
        assert len(notes) == 1, notes
        assert notes[0].startswith(f"note: journal {killed.journal} was put back at ")


@needs_fsfreeze
def test_a_helper_killed_under_the_cli_says_what_may_be_left_and_how_it_goes(
    state: Path,
) -> None:
    """`tune set` whose helper dies half-way: one line says values may be in force and which
    command puts them back, and that command does."""
    with restored_loop() as first, freezable_loop() as (stalled, mountpoint):
        found = {loop.name: device_values(loop) for loop in (first, stalled)}
        wanted = next(s for s in ("mq-deadline", "none") if s != found[first.name]["scheduler"])
        devices = ["--device", first.name, "--device", stalled.name]
        argv = [sys.executable, "-m", "stripewise", "tune", "set", f"scheduler={wanted}",
                *devices, "--state-dir", str(state)]  # fmt: skip
        with io_held(stalled, mountpoint):
            cli = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 30
            helper = None
            while helper is None or queue(first, "scheduler") != wanted:
                assert cli.poll() is None and time.monotonic() < deadline, cli.communicate()
                children = psutil.Process(cli.pid).children()
                helper = children[0] if children else None
                time.sleep(0.02)
            helper.kill()
        out, err = cli.communicate(timeout=60)
        assert cli.returncode == 1, (out, err)
        assert err.count("\n") == 1 and err.startswith("stripewise: error: the helper stopped")
        assert "values the apply wrote before it stopped may be in force" in err
        assert "the next `stripewise tune verify` (or set, apply, revert) puts them back" in err
        assert queue(first, "scheduler") == wanted  # left in force by the killed helper
        assert tune(state, "verify") == 1  # nothing left to verify once put back
        for loop in (first, stalled):
            assert device_values(loop) == found[loop.name]


def test_a_value_already_in_force_is_neither_written_nor_journaled(
    loop: Loop, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = device_values(loop)
    scheduler = found["scheduler"]
    assert tune(state, "set", f"scheduler={scheduler}", "--device", loop.name) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"{loop.name}: scheduler: {scheduler}, already in force",
        "nothing to change: every value is already in place",
    ]
    assert tune(state, "revert") == 1  # no journal entry was made
    assert "no applied tuning" in capsys.readouterr().err

    argv = [f"scheduler={scheduler}", "read_ahead_kb=4096", "--device", loop.name]
    assert tune(state, "set", *argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{loop.name}: scheduler: {scheduler}, already in force"
    assert out[1] == f"{loop.name}: read_ahead_kb: {found['read_ahead_kb']} -> 4096 KiB"
    assert tune(state, "revert") == 0
    assert capsys.readouterr().out.splitlines()[:-1] == [
        f"{loop.name}: read_ahead_kb: 4096 -> {found['read_ahead_kb']} KiB"
    ]  # the scheduler is in no journal
    assert device_values(loop) == found


def test_verify_says_what_the_kernel_kept(
    loop: Loop, state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """read_ahead_kb=130 is kept as 128 (whole 4 KiB pages): the apply says so, and verify
    finds it in force instead of failing for good."""
    assert tune(state, "set", "read_ahead_kb=130", "--device", loop.name) == 0
    assert "(the kernel stored 128)" in capsys.readouterr().out
    assert tune(state, "verify") == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        f"{loop.name}: read_ahead_kb: 128 KiB, as written (what the kernel keeps of 130)"
    )
    assert tune(state, "revert") == 0


def test_a_value_a_killed_apply_left_is_the_admins_once_put_back(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tune set` of the value a killed apply left in force: judged after the helper's
    start-up put it back, so it is written and journaled, not called already in force and
    then undone."""
    state.mkdir(mode=0o755)
    with killed_apply(state) as killed:
        first = killed.first.name
        left = killed.schedulers[first]
        assert tune(state, "set", f"scheduler={left}", "--device", first) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0].startswith("restored ") and "already in force" not in "\n".join(out)
        assert out[1] == f"{first}: scheduler: {killed.found[first]['scheduler']} -> {left}"
        assert queue(killed.first, "scheduler") == left
        assert tune(state, "revert") == 0  # journaled: the admin's own, undone on request
        assert queue(killed.first, "scheduler") == killed.found[first]["scheduler"]


def test_nothing_to_change_under_json_is_still_json(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ratio = int(Path("/proc/sys/vm/dirty_ratio").read_text())
    assert tune(state, "set", f"vm.dirty_ratio={ratio}", "--json") == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == {  # an apply reply's keys (docs/protocol.md), nothing written
        "journal": None,
        "label": f"stripewise tune set vm.dirty_ratio={ratio}",
        "settings": [],
        "warnings": [],
        "restored_at_start": [],
    }
    assert "already in force" in err and "nothing to change" in err

"""Tuning verbs through the real helper process, on real loop devices and the real /proc/sys/vm.

Every loop device is detached and every vm.dirty_* value put back as found in finally blocks
(fixtures), also when a test fails. `--root` is used only where the kernel cannot help: md's
stripe_cache_size (no md here), the files persist writes under /etc, and a write that fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stripewise.helper.tuning.journal import JOURNAL_NAME
from stripewise.protocol.tuning import MAX_SETTINGS
from stripewise.system.block_tunables import Tree
from tests.fixtures.helper_process import TuningHelper
from tests.fixtures.loops import Loop, MiB, needs_loop
from tests.fixtures.tuning_state import (
    VM,
    VM_KEYS,
    device_values,
    fake_root,
    queue,
    restore_vm,
    restored_loop,
    text_of,
    vm_now,
)

AS_NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")


@pytest.fixture
def state(tmp_path: Path) -> Path:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o755)
    return directory


@pytest.fixture
def helper(state: Path) -> Iterator[TuningHelper]:
    started = TuningHelper(state)
    yield started
    if started.process.poll() is None:
        started.close()


@pytest.fixture
def loop() -> Iterator[Loop]:
    with restored_loop() as attached:
        yield attached


@pytest.fixture
def vm_values() -> Iterator[dict[str, int]]:
    """The machine's vm.dirty_* values, put back afterwards whatever the test did."""
    found = {key: int((VM / key).read_text()) for key in VM_KEYS}
    try:
        yield found
    finally:
        restore_vm(found)
        assert {key: int((VM / key).read_text()) for key in VM_KEYS} == found


def journal(state: Path) -> list[dict[str, Any]]:
    return json.loads((state / JOURNAL_NAME).read_text())["entries"]


def setting(key: str, value: object, device: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"key": key, "value": value}
    if device is not None:
        item["device"] = device
    return item


# --- apply, verify, revert on a loop device --------------------------------------------------
@needs_loop
def test_apply_verify_revert_restores_a_loop_device_exactly(
    helper: TuningHelper, loop: Loop, state: Path
) -> None:
    found = device_values(loop)
    other = next(s for s in ("mq-deadline", "kyber", "none") if s != found["scheduler"])
    max_sectors = int(queue(loop, "max_hw_sectors_kb")) // 2
    applied = helper.result(
        "tuning.apply",
        {
            "settings": [
                setting("read_ahead_kb", 4096, loop.name),
                setting("nr_requests", 64, loop.device),
                setting("scheduler", other, loop.name),
                setting("max_sectors_kb", max_sectors, loop.name),
            ],
            "label": "test",
        },
    )
    # the scheduler goes first: switching it resets nr_requests
    assert applied["settings"][0]["key"] == "scheduler"
    assert all(s["matches"] for s in applied["settings"]), applied
    before = {s["key"]: str(s["before"]) for s in applied["settings"]}
    assert before == found
    assert device_values(loop) == {
        "read_ahead_kb": "4096",
        "nr_requests": "64",
        "scheduler": other,
        "max_sectors_kb": str(max_sectors),
    }
    entry = journal(state)[-1]
    assert entry["id"] == applied["journal"] and entry["state"] == "applied"
    assert entry["label"] == "test"

    verified = helper.result("tuning.verify", {})
    assert verified["journal"] == applied["journal"] and verified["mismatches"] == []

    Path(f"/sys/block/{loop.name}/queue/read_ahead_kb").write_text("256")  # someone else
    mismatches = helper.result("tuning.verify", {"journal": applied["journal"]})["mismatches"]
    assert [(m["key"], m["now"]) for m in mismatches] == [("read_ahead_kb", 256)]
    assert "changed since the apply" in mismatches[0]["reason"]

    reverted = helper.result("tuning.revert", {})
    assert reverted["journal"] == applied["journal"] and reverted["skipped"] == []
    assert device_values(loop) == found
    assert journal(state)[-1]["state"] == "reverted"

    again = helper.error("tuning.revert", {})
    assert again["code"] == "nothing_to_revert" and "reverted" in again["message"]


@needs_loop
def test_verify_takes_what_the_kernel_rounded_as_in_force(
    helper: TuningHelper, loop: Loop, state: Path
) -> None:
    found = queue(loop, "read_ahead_kb")
    applied = helper.result("tuning.apply", {"settings": [setting("read_ahead_kb", 5, loop.name)]})
    item = applied["settings"][0]
    assert item["written"] == 5 and item["after"] == 4 and item["matches"] is False
    verified = helper.result("tuning.verify", {})  # in force as the kernel keeps it
    assert verified["mismatches"] == []
    (kept,) = verified["settings"]
    assert (kept["written"], kept["now"], kept["matches"]) == (5, 4, True)
    Path(f"/sys/block/{loop.name}/queue/read_ahead_kb").write_text("8")  # changed since
    mismatch = helper.result("tuning.verify", {})["mismatches"][0]
    assert mismatch["now"] == 8 and "changed since" in mismatch["reason"]
    helper.result("tuning.revert", {})
    assert queue(loop, "read_ahead_kb") == found


@needs_loop
def test_revert_skips_a_device_that_is_another_one_now(
    helper: TuningHelper, loop: Loop, state: Path
) -> None:
    helper.result("tuning.apply", {"settings": [setting("read_ahead_kb", 1024, loop.name)]})
    subprocess.run(["losetup", "-d", loop.device], check=True)  # new media: new diskseq
    reverted = helper.result("tuning.revert", {})
    assert reverted["restored"] == []
    assert [s["device"] for s in reverted["skipped"]] == [loop.name]
    assert "another device" in reverted["skipped"][0]["reason"]
    assert queue(loop, "read_ahead_kb") == "1024", "not written: it is another device now"


# --- the global knobs on the real /proc/sys/vm ------------------------------------------------
@pytest.mark.skipif(os.geteuid() != 0, reason="writing /proc/sys/vm needs root")
def test_global_apply_and_revert_with_the_ratio_bytes_rule(
    helper: TuningHelper, vm_values: dict[str, int], state: Path
) -> None:
    # start from the kernel's ratio mode, whatever the machine had
    restore_vm({**vm_values, "dirty_bytes": 0, "dirty_background_bytes": 0})
    ratios = vm_now()
    applied = helper.result(
        "tuning.apply",
        {
            "settings": [
                setting("vm.dirty_bytes", 256 * MiB),
                setting("dirty_background_bytes", 64 * MiB),  # the vm. prefix is optional
                setting("vm.dirty_expire_centisecs", ratios["dirty_expire_centisecs"] + 111),
            ]
        },
    )
    now = vm_now()
    assert now["dirty_bytes"] == 256 * MiB and now["dirty_ratio"] == 0
    assert now["dirty_background_bytes"] == 64 * MiB and now["dirty_background_ratio"] == 0
    effects = applied["settings"][0]["side_effects"]
    assert effects == [{"key": "vm.dirty_ratio", "before": ratios["dirty_ratio"], "after": 0}]
    # the bytes knobs read 0 before: their ratios were in force, so those are journaled
    restores = [c["restore"][0] for c in journal(state)[-1]["changes"]]
    assert restores[:2] == [
        {"key": "vm.dirty_ratio", "value": ratios["dirty_ratio"]},
        {"key": "vm.dirty_background_ratio", "value": ratios["dirty_background_ratio"]},
    ]
    helper.result("tuning.revert", {})
    assert vm_now() == ratios

    # and the other way round: bytes in force, a ratio applied, the bytes come back
    (VM / "dirty_bytes").write_text(str(128 * MiB))
    in_bytes = vm_now()
    assert in_bytes["dirty_ratio"] == 0
    helper.result("tuning.apply", {"settings": [setting("vm.dirty_ratio", 30)]})
    assert vm_now()["dirty_ratio"] == 30 and vm_now()["dirty_bytes"] == 0
    helper.result("tuning.revert", {})
    assert vm_now() == in_bytes


# --- a write that fails midway ---------------------------------------------------------------
@pytest.mark.skipif(shutil.which("chattr") is None, reason="needs chattr")
def test_a_write_failing_midway_rolls_back_the_earlier_ones(tmp_path: Path, state: Path) -> None:
    """An immutable file refuses even root (EPERM): the third write fails after two worked."""
    root = fake_root(tmp_path)
    immutable = root / "sys/block/sdq/queue/max_sectors_kb"
    if subprocess.run(["chattr", "+i", str(immutable)], check=False).returncode != 0:
        pytest.skip("this filesystem has no immutable flag")
    helper = TuningHelper(state, "--root", str(root))
    try:
        error = helper.error(
            "tuning.apply",
            {
                "settings": [
                    setting("read_ahead_kb", 4096, "sdq"),
                    setting("vm.dirty_ratio", 35),
                    setting("max_sectors_kb", 256, "sdq"),
                ]
            },
        )
    finally:
        subprocess.run(["chattr", "-i", str(immutable)], check=True)
        helper.close()
    assert error["code"] == "write_failed"
    assert "sdq: max_sectors_kb" in error["message"] and "EPERM" in error["message"]
    assert "2 earlier changes were rolled back" in error["message"]
    assert text_of(root, "sys/block/sdq/queue/read_ahead_kb") == "128"
    assert text_of(root, "proc/sys/vm/dirty_ratio") == "20"
    entry = journal(state)[-1]  # journaled before the first write, then marked
    assert entry["state"] == "rolled_back" and "EPERM" in entry["error"]
    assert [c["before"] for c in entry["changes"]] == [128, 20, 512]


@needs_loop
def test_reverting_a_scheduler_switch_brings_nr_requests_back(loop: Loop, state: Path) -> None:
    """Switching the scheduler resets nr_requests to the new one's default, and switching back
    to the old one's: the journal keeps nr_requests with the scheduler and writes it after."""
    Path(f"/sys/block/{loop.name}/queue/nr_requests").write_text("32")
    found = device_values(loop)
    assert found["nr_requests"] == "32"
    helper = TuningHelper(state, "--root", "/")
    target = next(s for s in ("mq-deadline", "kyber", "none") if s != found["scheduler"])
    try:
        applied = helper.result(
            "tuning.apply",
            {"settings": [setting("scheduler", target, loop.name)], "label": "switch"},
        )
        assert applied["settings"][0]["after"] == target
        assert queue(loop, "nr_requests") != "32", "the switch reset it"
        helper.result("tuning.revert", {})
    finally:
        helper.close()
    assert device_values(loop) == found


@needs_loop
def test_nothing_is_written_when_the_journal_cannot_be(loop: Loop, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    found = device_values(loop)
    helper = TuningHelper(blocker)
    try:
        error = helper.error(
            "tuning.apply", {"settings": [setting("read_ahead_kb", 4096, loop.name)]}
        )
    finally:
        helper.close()
    assert error["code"] == "io_error" and str(blocker) in error["message"]
    assert device_values(loop) == found


# --- crash recovery --------------------------------------------------------------------------
@needs_loop
def test_a_new_helper_reverts_after_the_first_one_was_killed(
    loop: Loop, state: Path, vm_values: dict[str, int]
) -> None:
    found = device_values(loop)
    first = TuningHelper(state)
    applied = first.result(
        "tuning.apply",
        {
            "settings": [
                setting("read_ahead_kb", 2048, loop.name),
                setting("scheduler", "mq-deadline", loop.name),
                setting("vm.dirty_writeback_centisecs", vm_values["dirty_writeback_centisecs"] + 7),
            ]
        },
    )
    first.process.kill()
    first.process.wait(timeout=10)
    assert device_values(loop)["read_ahead_kb"] == "2048"

    second = TuningHelper(state)
    try:
        assert second.result("tuning.verify", {})["journal"] == applied["journal"]
        reverted = second.result("tuning.revert", {"journal": applied["journal"]})
        assert {r["key"] for r in reverted["restored"]} == {
            "read_ahead_kb",
            "scheduler",
            "vm.dirty_writeback_centisecs",
        }
    finally:
        second.close()
    assert device_values(loop) == found
    assert vm_now() == vm_values


# --- refusals: each refused with nothing written ---------------------------------------------
BAD = [
    ([setting("read_ahead_kb", -1, "LOOP")], "bad_args", "out of range"),
    ([setting("nr_requests", 4096, "LOOP")], "bad_args", "out of range"),
    ([setting("nr_requests", 2048, "LOOP")], "bad_args", "hardware queue depth"),
    ([setting("max_sectors_kb", 10**6, "LOOP")], "bad_args", "out of range"),
    ([setting("max_sectors_kb", 2, "LOOP")], "bad_args", "out of range"),
    ([setting("scheduler", "cfq", "LOOP")], "bad_args", "not offered"),
    ([setting("vm.dirty_ratio", 101)], "bad_args", "out of range"),
    ([setting("vm.dirty_bytes", 4096)], "bad_args", "two pages"),
    ([setting("vm.dirty_bytes", 0)], "bad_args", "refuses 0"),
    ([setting("vm.dirty_ratio", 30), setting("vm.dirty_bytes", 2**30)], "bad_args", "not both"),
    ([setting("read_ahead_kb", 512, "LOOP")], "bad_args", "given twice"),
    ([setting("swappiness", 10)], "bad_args", "unknown tunable"),
    ([setting("read_ahead_kb", 512, "../../etc")], "bad_args", "not a device name"),
    ([setting("read_ahead_kb", 512, "LOOP/../../x")], "bad_args", "not a device name"),
    ([setting("read_ahead_kb", 512, "/dev/..")], "bad_args", "not a device name"),
    ([setting("read_ahead_kb", 512, "sdzz9")], "not_found", "does not exist"),
    ([setting("read_ahead_kb", 512)], "bad_args", "per device"),
    ([setting("vm.dirty_ratio", 30, "LOOP")], "bad_args", "global"),
    ([setting("stripe_cache_size", 4096, "LOOP")], "bad_args", "md RAID"),
    ([setting("read_ahead_kb", True, "LOOP")], "bad_args", "number or a name"),
    ([{"key": "read_ahead_kb", "value": 512, "device": "LOOP", "path": "/etc"}], "bad_args", ""),
    ([setting("read_ahead_kb", 512, "LOOP")] * (MAX_SETTINGS + 1), "bad_args", "at most 256"),
    ([], "bad_args", "non-empty"),
]


@needs_loop
@pytest.mark.parametrize(("bad", "code", "words"), BAD)
def test_bad_input_is_refused_with_nothing_written(
    helper: TuningHelper,
    loop: Loop,
    state: Path,
    vm_values: dict[str, int],
    bad: list[dict[str, Any]],
    code: str,
    words: str,
) -> None:
    found = device_values(loop)
    if queue(loop, "scheduler") != "none":
        Path(f"/sys/block/{loop.name}/queue/scheduler").write_text("none")
        found = device_values(loop)
    first = setting("read_ahead_kb", 8192, loop.name)  # valid: it must not be written either
    bad = [dict(item) for item in bad]  # the table is shared between the cases
    for item in bad:
        if isinstance(item.get("device"), str) and "LOOP" in item["device"]:
            item["device"] = item["device"].replace("LOOP", loop.name)
    settings = bad if len(bad) > MAX_SETTINGS or not bad else [first, *bad]
    error = helper.error("tuning.apply", {"settings": settings})
    assert error["code"] == code and words in error["message"], error
    assert device_values(loop) == found
    assert vm_now() == vm_values
    assert not (state / JOURNAL_NAME).exists(), "refused before anything was journaled"


def test_requests_without_an_apply_are_refused_clearly(helper: TuningHelper) -> None:
    assert helper.error("tuning.revert", {})["code"] == "nothing_to_revert"
    assert helper.error("tuning.verify", {})["code"] == "nothing_to_verify"
    assert helper.error("tuning.revert", {"journal": "20250101T000000-abcdef"})["code"] == (
        "not_found"
    )
    assert helper.error("tuning.revert", {"journal": "../x"})["code"] == "bad_args"
    outside = [setting("read_ahead_kb", 512, "../sda")]
    assert helper.error("tuning.persist", {"action": "preview", "settings": outside})["code"] == (
        "bad_args"
    )
    assert helper.error("tuning.apply", {"settings": [], "shell": "x"})["code"] == "bad_args"
    assert helper.error("tuning.persist", {"action": "burn"})["code"] == "bad_args"


# --- unprivileged ----------------------------------------------------------------------------
@needs_loop
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv")
def test_an_unprivileged_helper_reads_but_changes_nothing(loop: Loop, state: Path) -> None:
    found = device_values(loop)
    helper = TuningHelper(state, prefix=AS_NOBODY)
    try:
        assert helper.result("hello", {"protocol": 1})["euid"] == 65534
        one = [setting("read_ahead_kb", 4096, loop.name)]
        for verb, args in (
            ("tuning.apply", {"settings": one}),
            ("tuning.revert", {}),
            ("tuning.persist", {"action": "write", "settings": one}),
            ("tuning.persist", {"action": "remove"}),
        ):
            assert helper.error(verb, args)["code"] == "not_privileged", verb
        preview = helper.result("tuning.persist", {"action": "preview", "settings": one})
        assert f'KERNEL=="{loop.name}"' in preview["files"][1]["text"]
    finally:
        helper.close()
    assert device_values(loop) == found
    assert list(state.iterdir()) == []


# --- md stripe cache and persist under --root ------------------------------------------------
def test_md_stripe_cache_apply_and_revert_under_a_root(tmp_path: Path, state: Path) -> None:
    root = fake_root(tmp_path)
    helper = TuningHelper(state, "--root", str(root))
    try:
        tree = Tree.under(root)  # what the helper reads there, read the helper's way
        assert tree.device_values("md0")["stripe_cache_size"] == 256
        assert tree.device_values("md0")["scheduler"] == "none"
        assert "stripe_cache_size" not in tree.device_values("sdq")
        refused = helper.error(
            "tuning.apply", {"settings": [setting("stripe_cache_size", 16, "md0")]}
        )
        assert "out of range" in refused["message"]
        refused = helper.error(
            "tuning.apply", {"settings": [setting("max_sectors_kb", 2048, "sdq")]}
        )
        assert "1024" in refused["message"], "the device's own max_hw_sectors_kb"
        helper.result("tuning.apply", {"settings": [setting("stripe_cache_size", 8192, "md0")]})
        assert text_of(root, "sys/block/md0/md/stripe_cache_size") == "8192"
        helper.result("tuning.revert", {})
        assert text_of(root, "sys/block/md0/md/stripe_cache_size") == "256"
    finally:
        helper.close()


EXPECTED_SYSCTL = """\
# Written by Stripewise (tuning.persist); rewritten or removed by it, edits are lost.
# Read at boot by systemd-sysctl.
vm.dirty_ratio = 40
vm.dirty_background_ratio = 5
"""
EXPECTED_RULES = """\
# Written by Stripewise (tuning.persist); rewritten or removed by it, edits are lost.
# Applied by udev when each disk appears, keyed on its identity.
# sdq: ID_WWN 0x5000c500a1b2c3d4
ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ENV{ID_WWN}=="0x5000c500a1b2c3d4", \
ATTR{queue/scheduler}="none", ATTR{queue/read_ahead_kb}="4096", ATTR{queue/nr_requests}="32"
# sdr: ID_SERIAL_SHORT WD-WCC4E1234567
ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", \
ENV{ID_SERIAL_SHORT}=="WD-WCC4E1234567", ATTR{queue/read_ahead_kb}="4096"
# md0: MD_UUID 3f0f5e9a:0c6e4c1d:9b7e1a2b:3c4d5e6f
ACTION=="add|change", SUBSYSTEM=="block", KERNEL=="md*", \
ENV{MD_UUID}=="3f0f5e9a:0c6e4c1d:9b7e1a2b:3c4d5e6f", ATTR{md/stripe_cache_size}="8192"
"""


def test_persist_preview_write_and_remove_under_a_root(tmp_path: Path, state: Path) -> None:
    root = fake_root(tmp_path)
    settings = [
        setting("read_ahead_kb", 4096, "sdq"),
        setting("nr_requests", 32, "sdq"),
        setting("scheduler", "none", "sdq"),
        setting("vm.dirty_ratio", 40),
        setting("read_ahead_kb", 4096, "sdr"),
        setting("stripe_cache_size", 8192, "md0"),
        setting("vm.dirty_background_ratio", 5),
    ]
    sysctl = root / "etc/sysctl.d/90-stripewise.conf"
    rules = root / "etc/udev/rules.d/90-stripewise.rules"
    helper = TuningHelper(state, "--root", str(root))
    try:
        preview = helper.result("tuning.persist", {"action": "preview", "settings": settings})
        texts = {f["kind"]: f["text"] for f in preview["files"]}
        assert texts == {"sysctl": EXPECTED_SYSCTL, "udev": EXPECTED_RULES}
        assert [f["path"] for f in preview["files"]] == [str(sysctl), str(rules)]
        assert any("sysfs" in w for w in preview["warnings"])
        assert not sysctl.exists() and not rules.exists()

        written = helper.result("tuning.persist", {"action": "write", "settings": settings})
        assert written["written"] == [str(sysctl), str(rules)]
        assert sysctl.read_text() == EXPECTED_SYSCTL and rules.read_text() == EXPECTED_RULES
        assert {oct(p.stat().st_mode & 0o777) for p in (sysctl, rules)} == {"0o644"}
        assert sorted(p.name for p in sysctl.parent.iterdir()) == [sysctl.name], "no temp files"
        shown = helper.result("tuning.persist", {"action": "show"})["files"]
        assert [(f["path"], f["text"]) for f in shown] == [
            (str(sysctl), EXPECTED_SYSCTL),
            (str(rules), EXPECTED_RULES),
        ]
        assert helper.error("tuning.persist", {"action": "show", "settings": []})["code"] == (
            "bad_args"
        )

        # only globals now: the rules file goes, so no stale rule applies at boot
        only_globals = [setting("vm.dirty_ratio", 40), setting("vm.dirty_background_ratio", 5)]
        again = helper.result("tuning.persist", {"action": "write", "settings": only_globals})
        assert again["removed"] == [str(rules)] and not rules.exists()

        removed = helper.result("tuning.persist", {"action": "remove"})
        assert removed == {"removed": [str(sysctl)], "absent": [str(rules)]}
        assert not sysctl.exists()
        shown = helper.result("tuning.persist", {"action": "show"})["files"]
        assert [f["text"] for f in shown] == [None, None]
        bad = helper.error(
            "tuning.persist", {"action": "write", "settings": [setting("read_ahead_kb", -5, "sdq")]}
        )
        assert bad["code"] == "bad_args" and not sysctl.exists()
    finally:
        helper.close()
    assert text_of(root, "sys/block/sdq/queue/read_ahead_kb") == "128", "persist never applies"


@needs_loop
def test_persist_falls_back_to_the_kernel_name_with_a_warning(
    helper: TuningHelper, loop: Loop
) -> None:
    preview = helper.result(
        "tuning.persist",
        {"action": "preview", "settings": [setting("read_ahead_kb", 4096, loop.name)]},
    )
    assert preview["files"][0]["text"] is None
    assert (
        f'KERNEL=="{loop.name}", ATTR{{queue/read_ahead_kb}}="4096"' in preview["files"][1]["text"]
    )
    assert any("kernel name" in w and loop.name in w for w in preview["warnings"])


# --- the helper's own options ----------------------------------------------------------------
def test_root_and_state_dir_are_refused_through_sudo(tmp_path: Path) -> None:
    for option in ("--root", "--state-dir"):
        done = subprocess.run(
            [sys.executable, "-m", "stripewise.helper.server", option, str(tmp_path)],
            input=b"",
            capture_output=True,
            env={**os.environ, "SUDO_UID": "1000"},
            timeout=30,
            check=False,
        )
        assert done.returncode == 2 and b"refused when started through sudo" in done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "stripewise.helper.server", "--root", "relative"],
        input=b"",
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2 and b"absolute" in done.stderr

"""Each kind of knob's get / set / verify and what it journals, under a copy of the trees
(the real devices are tested through the helper in test_tuning_verbs)."""

from __future__ import annotations

import os
from pathlib import Path

from stripewise.helper.tuning.journal import KnobTarget, PairEffect
from stripewise.helper.tuning.sysfs import Machine, MdKnobs, QueueKnobs, VmSysctls
from tests.fixtures.tuning_state import fake_root, text_of


def test_each_knob_is_read_written_and_verified_by_its_kind(tmp_path: Path) -> None:
    machine = Machine(str(fake_root(tmp_path)))
    assert isinstance(machine.knob("read_ahead_kb"), QueueKnobs)
    assert isinstance(machine.knob("stripe_cache_size"), MdKnobs)
    assert isinstance(machine.knob("dirty_ratio"), VmSysctls)
    assert machine.get("scheduler", "sdq") == "mq-deadline"  # the name in brackets
    machine.set("stripe_cache_size", "md0", 4096)
    assert text_of(Path(machine.root), "sys/block/md0/md/stripe_cache_size") == "4096"
    assert machine.verify("stripe_cache_size", "md0", 4096).matches
    machine.set("vm.dirty_ratio", None, 30)
    verdict = machine.verify("vm.dirty_ratio", None, 35)
    assert verdict.now == 30 and not verdict.matches and not verdict.in_force


def test_read_ahead_is_kept_in_whole_pages_and_verify_names_it(tmp_path: Path) -> None:
    machine = Machine(str(fake_root(tmp_path)))
    page_kb = os.sysconf("SC_PAGESIZE") // 1024
    machine.set("read_ahead_kb", "sdq", page_kb)  # what the kernel keeps of page_kb + 1
    verdict = machine.verify("read_ahead_kb", "sdq", page_kb + 1)
    assert verdict.kept == page_kb and verdict.in_force and not verdict.matches
    assert verdict.rounding == f"read_ahead_kb is kept in whole {page_kb} KiB pages"
    assert machine.verify("read_ahead_kb", "sdq", 2 * page_kb).rounding is None


def test_what_each_kind_journals_before_a_write(tmp_path: Path) -> None:
    machine = Machine(str(fake_root(tmp_path)))
    queue = machine.knob("scheduler")
    assert queue.journaled("scheduler", "sdq", "mq-deadline", "none") == (
        [KnobTarget("scheduler", "mq-deadline"), KnobTarget("nr_requests", 64)],
        [],
    )
    vm = machine.knob("vm.dirty_bytes")
    # the bytes knob reads 0: its ratio is in force, and is what goes back
    assert vm.journaled("vm.dirty_bytes", None, 0, 2**28) == (
        [KnobTarget("vm.dirty_ratio", 20)],
        [PairEffect("vm.dirty_ratio", 20)],
    )
    assert vm.journaled("vm.dirty_ratio", None, 20, 30) == (
        [KnobTarget("vm.dirty_ratio", 20)],
        [PairEffect("vm.dirty_bytes", 0)],
    )

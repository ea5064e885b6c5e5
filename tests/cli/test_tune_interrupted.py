"""`tune show`'s note on an apply a killed helper left half-done, read from the journal and a
sysfs tree: each value left in force named once, with its count."""

from __future__ import annotations

from pathlib import Path

from stripewise.cli.tune_interrupted import _notes
from stripewise.helper.tuning.journal import PENDING, JournalChange, JournalEntry, KnobTarget
from stripewise.model.tunables import Setting
from stripewise.system.block_tunables import Tree


def test_a_knob_two_changes_restore_is_counted_once(tmp_path: Path) -> None:
    """A scheduler switch resets nr_requests, so its change restores nr_requests too; the
    preset's own nr_requests change restores it as well: one value left, not two."""
    queue = tmp_path / "sys" / "block" / "loop1" / "queue"
    queue.mkdir(parents=True)
    (queue / "scheduler").write_text("[none] mq-deadline\n")
    (queue / "nr_requests").write_text("256\n")
    scheduler = JournalChange(
        Setting("scheduler", "none", "loop1"),
        "",
        "mq-deadline",
        (KnobTarget("scheduler", "mq-deadline"), KnobTarget("nr_requests", 64)),
    )
    requests = JournalChange(
        Setting("nr_requests", 256, "loop1"), "requests", 64, (KnobTarget("nr_requests", 64),)
    )
    entry = JournalEntry(
        "20261129T110000-abcdef", None, "2026-11-29T11:00:00+00:00", None, str(tmp_path),
        None, None, PENDING, {"loop1": None}, (scheduler, requests),
    )  # fmt: skip
    (note,) = _notes(entry, Tree.under(tmp_path))
    assert "left 2 values in force: " in note, note
    assert note.count("loop1: nr_requests 64 -> 256") == 1
    assert note.count("loop1: scheduler mq-deadline -> none") == 1

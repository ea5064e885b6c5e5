"""`tune show`'s note on an apply a killed helper left half-done, read from the journal and a
sysfs tree: each value left in force named once, with its count; one a helper put back earlier
told as history, of the devices asked about."""

from __future__ import annotations

from pathlib import Path

from stripewise.cli.tune_interrupted import _notes, journal_notes
from stripewise.helper.tuning.journal import (
    PENDING,
    RESTORED,
    Journal,
    JournalChange,
    JournalEntry,
    KnobTarget,
)
from stripewise.model.tunables import Setting
from stripewise.protocol.tuning_replies import PutBack
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


def test_a_put_back_by_an_earlier_helper_is_history_of_the_devices_asked_about(
    tmp_path: Path,
) -> None:
    """The field report: `tune show --device loop1` said "note: restored 1 value an
    interrupted apply had left (journal ...): loop0: read_ahead_kb 16 -> 128 KiB" on every
    run, of another session's helper's put-back, for a device not asked about; show starts no
    helper and restores nothing."""
    journal = "20261129T171210-9929c7"
    change = JournalChange(
        Setting("read_ahead_kb", 16, "loop0"), "KiB", 128, (KnobTarget("read_ahead_kb", 128),)
    )
    entry = JournalEntry(
        journal, None, "2026-11-29T17:12:10+0000", None, str(tmp_path), None, None, RESTORED,
        {"loop0": None}, (change,), restored="2026-11-29T17:12:15+0000",
        put_back=(PutBack(journal, "read_ahead_kb", "loop0", 16, 128),),
    )  # fmt: skip
    state = tmp_path / "state"
    state.mkdir()
    Journal(str(state)).save([entry])
    assert journal_notes(str(state), tmp_path, ["loop1"]) == []
    (note,) = journal_notes(str(state), tmp_path, ["loop0", "loop1"])
    assert note.startswith(f"note: journal {journal} was put back at 2026-11-29 "), note
    assert note.endswith(": loop0: read_ahead_kb 16 -> 128 KiB"), note
    assert "restored" not in note

"""The tuning journal's codec: entries as earlier versions wrote them read back and are
written again key for key, and a journal with an entry that cannot be read is set aside."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stripewise.helper.tuning.journal import (
    JOURNAL_NAME,
    PENDING,
    Journal,
    entry_from_json,
    entry_to_json,
)

APPLIED_ENTRY: dict[str, Any] = {  # as an apply of a ratio over bytes left it
    "id": "20261128T030000-abcdef",
    "label": "preset streaming-throughput",
    "created": "2026-11-28T03:00:00+0000",
    "boot_id": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
    "root": "/",
    "pid": 4242,
    "pid_start": 123456,
    "state": "reverted",
    "devices": {"sdq": {"diskseq": "17"}},
    "changes": [
        {
            "key": "scheduler",
            "device": "sdq",
            "unit": "name",
            "before": "mq-deadline",
            "written": "none",
            "after": "none",
            "restore": [
                {"key": "scheduler", "value": "mq-deadline"},
                {"key": "nr_requests", "value": 64},
            ],
            "side_effects": [],
        },
        {
            "key": "vm.dirty_ratio",
            "device": None,
            "unit": "%",
            "before": 0,
            "written": 30,
            "after": 30,
            "restore": [{"key": "vm.dirty_bytes", "value": 134217728}],
            "side_effects": [{"key": "vm.dirty_bytes", "before": 134217728, "after": 0}],
        },
    ],
    "reverted": "2026-11-28T03:10:00+0000",
}

PUT_BACK_ENTRY: dict[str, Any] = {  # an earlier version's: no pid_start; restored later
    "id": "20261128T040000-123456",
    "label": None,
    "created": "2026-11-28T04:00:00+0000",
    "boot_id": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
    "root": "/",
    "pid": 99,
    "state": "restored",
    "devices": {},
    "changes": [
        {
            "key": "vm.dirty_ratio",
            "device": None,
            "unit": "%",
            "before": 20,
            "written": 35,
            "after": None,
            "restore": [{"key": "vm.dirty_ratio", "value": 20}],
            "side_effects": [{"key": "vm.dirty_bytes", "before": 0}],
        }
    ],
    "restored": "2026-11-28T04:05:00+0000",
    "put_back": [
        {"journal": "20261128T040000-123456", "key": "vm.dirty_ratio", "device": None,
         "was": 35, "value": 20},
    ],
}  # fmt: skip


def test_entries_of_earlier_versions_read_back_and_are_written_key_for_key() -> None:
    for written in (APPLIED_ENTRY, PUT_BACK_ENTRY):
        entry = entry_from_json(json.loads(json.dumps(written)))
        again = entry_to_json(entry)
        assert again == written | {"pid_start": written.get("pid_start")}
    pending = entry_from_json(PUT_BACK_ENTRY | {"state": PENDING})
    assert pending.changes[0].side_effects[0].after_read is False
    assert "after" not in entry_to_json(pending)["changes"][0]["side_effects"][0]  # type: ignore[index]


def test_a_journal_with_an_entry_that_cannot_be_read_is_set_aside(tmp_path: Path) -> None:
    broken = APPLIED_ENTRY | {"changes": [{"key": "scheduler", "device": "sdq"}]}
    path = tmp_path / JOURNAL_NAME
    path.write_text(json.dumps({"version": 1, "entries": [PUT_BACK_ENTRY, broken]}))
    journal = Journal(str(tmp_path))
    assert journal.load(set_aside=False) == [] and path.exists()
    assert "cannot be read" in journal.warnings[0] and "changes[0]" in journal.warnings[0]
    assert journal.load() == [] and not path.exists()
    assert "moved to" in journal.warnings[-1]


def test_saving_writes_the_format_earlier_versions_read(tmp_path: Path) -> None:
    journal = Journal(str(tmp_path))
    entries = [entry_from_json(APPLIED_ENTRY), entry_from_json(PUT_BACK_ENTRY)]
    journal.save(entries)
    data = json.loads((tmp_path / JOURNAL_NAME).read_text())
    assert data["version"] == 1
    assert data["entries"][0] == APPLIED_ENTRY
    assert journal.load() == entries

"""Slot labels survive restarts, are per host, and blank means "no label"."""

from __future__ import annotations

import pytest

from stripewise.history.database import Database
from stripewise.history.labels import MAX_LABEL_LENGTH, SlotLabelStore


def test_labels_are_per_host_and_can_be_renamed_and_cleared(db: Database) -> None:
    labels = SlotLabelStore(db)
    labels.set_label("machine:a", "0000:01:01.0/ata-1", "Bay 12")
    labels.set_label("machine:b", "0000:01:01.0/ata-1", "Front left")
    labels.set_label("machine:a", "0000:01:01.0/ata-1", "  Bay   13 ")
    assert labels.labels("machine:a") == {"0000:01:01.0/ata-1": "Bay 13"}
    assert labels.labels("machine:b") == {"0000:01:01.0/ata-1": "Front left"}
    labels.set_label("machine:a", "0000:01:01.0/ata-1", "   ")
    assert labels.labels("machine:a") == {}
    assert labels.labels("machine:b") == {"0000:01:01.0/ata-1": "Front left"}


def test_overlong_label_is_refused(db: Database) -> None:
    with pytest.raises(ValueError, match=str(MAX_LABEL_LENGTH)):
        SlotLabelStore(db).set_label("machine:a", "slot", "x" * (MAX_LABEL_LENGTH + 1))

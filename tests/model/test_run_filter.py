"""Finding runs by the tuning values, filesystem or words recorded with them."""

from __future__ import annotations

from stripewise.model.run_context import RunContext
from stripewise.model.run_filter import matches, parse_filter

CONTEXT = {
    "filesystem": "xfs",
    "disks": [
        {"name": "sdb", "tuning": {"read_ahead_kb": 4096, "scheduler": "mq-deadline"}},
        {"name": "sdc", "tuning": {"read_ahead_kb": 128, "scheduler": "none"}},
    ],
    "dirty": {"dirty_ratio_pct": 40},
}


def test_key_value_terms_match_the_last_part_of_a_dotted_key() -> None:
    assert matches(RunContext.from_json(CONTEXT), parse_filter("read_ahead_kb=4096"))
    assert matches(RunContext.from_json(CONTEXT), parse_filter("read_ahead_kb=128 filesystem=XFS"))
    assert matches(
        RunContext.from_json(CONTEXT), parse_filter("disks[sdb].tuning.scheduler=mq-deadline")
    )
    assert not matches(RunContext.from_json(CONTEXT), parse_filter("read_ahead_kb=8192"))
    assert not matches(
        RunContext.from_json(CONTEXT), parse_filter("dirty_ratio_pct=40 filesystem=ext4")
    )  # all terms
    assert not matches(
        RunContext.from_json(CONTEXT), parse_filter("ahead_kb=4096")
    )  # a whole key part, not a suffix


def test_bare_words_search_keys_values_and_run_fields() -> None:
    assert matches(RunContext.from_json(CONTEXT), parse_filter("deadline"))
    assert matches(RunContext(), parse_filter("nightly"), {"name": "nightly xfs run"})
    assert not matches(RunContext.from_json(CONTEXT), parse_filter("btrfs"))
    assert parse_filter(" = a=b c ") == [("a", "b"), ("c", None)]

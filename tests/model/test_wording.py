"""Counts in words, the one helper every count on screen and in the CLI goes through."""

from __future__ import annotations

import pytest

from stripewise.model.wording import count_noun, noun_for, plural_of


@pytest.mark.parametrize(
    ("noun", "plural"),
    [
        ("disk", "disks"),
        ("pass", "passes"),
        ("entry", "entries"),
        ("array", "arrays"),
        ("box", "boxes"),
        ("switch", "switches"),
        ("failed disk", "failed disks"),
    ],
)
def test_regular_plurals(noun: str, plural: str) -> None:
    assert plural_of(noun) == plural


def test_one_takes_the_singular_and_every_other_count_the_plural() -> None:
    assert count_noun(1, "disk") == "1 disk"
    assert count_noun(0, "disk") == "0 disks"
    assert count_noun(2, "pass") == "2 passes"
    assert count_noun(3, "datum", "data") == "3 data"
    assert noun_for(1, "run") == "run" and noun_for(4, "run") == "runs"

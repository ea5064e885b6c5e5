"""Counts in words: "1 disk", "2 disks", "1 pass", "3 passes", for the GUI and the CLI alike."""

from __future__ import annotations

_SIBILANT_ENDINGS = ("s", "x", "z", "ch", "sh")  # pass -> passes, box -> boxes
_VOWELS = frozenset("aeiou")


def plural_of(noun: str) -> str:
    """The regular English plural of a lower-case noun: disk -> disks, pass -> passes,
    entry -> entries, array -> arrays. Irregular ones are given to `count_noun` instead."""
    if noun.endswith(_SIBILANT_ENDINGS):
        return f"{noun}es"
    if len(noun) > 1 and noun.endswith("y") and noun[-2] not in _VOWELS:
        return f"{noun[:-1]}ies"
    return f"{noun}s"


def noun_for(count: int, noun: str, plural: str | None = None) -> str:
    """The noun in the number `count` takes, without the count: "moved runs 3, 4"."""
    return noun if count == 1 else (plural or plural_of(noun))


def count_noun(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and the noun in the number it takes: "1 disk", "0 disks", "2 passes".
    `plural` for nouns the rule does not cover ("1 datum", "2 data")."""
    return f"{count} {noun_for(count, noun, plural)}"

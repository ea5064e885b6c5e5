"""What tells compared runs apart when their names do not: a generated name says the engine,
the target and the spec, so runs of one benchmark on ext4, ext4 data=writeback and xfs all
read "fio on /mnt/b (1 MiB blocks, QD 1, 128 MiB, direct)". Their context does differ: the
first settings that differ between them, with only what differs of an option list."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from stripewise.model.compare_context import ContextDifference
from stripewise.model.setting_labels import setting_label, setting_text

# Groups in the order a difference is the likelier reason for a change: the tuning and the
# filesystem before the disks' own facts
_TELLING_ORDER = (
    "tuning",
    "array",
    "filesystem",
    "workload",
    "kernel",
    "engine",
    "machine",
    "disks",
    "other",
)
# values that say what they are without their setting's name ("ext4", "data=writeback")
_SELF_EXPLAINING = frozenset(
    ("filesystem", "mount_options", "superblock_options", "host", "kernel", "engine")
)
_OPTION_LISTS = frozenset(("mount_options", "superblock_options"))
MAX_TELLING = 40  # characters: a column header or a legend entry, not a paragraph


def telling_apart(names: Sequence[str], context: Sequence[ContextDifference]) -> list[str]:
    """Per run, what sets it apart from the runs of the same name ("" for a name no other run
    has, and where nothing recorded differs): settings added one by one, each to the runs it
    still has to tell apart, until every run of the name reads differently."""
    told = [""] * len(names)
    by_name: dict[str, list[int]] = defaultdict(list)
    for index, name in enumerate(names):
        by_name[name].append(index)
    ranked = sorted(context, key=lambda d: _TELLING_ORDER.index(d.group))
    for same in (runs for runs in by_name.values() if len(runs) > 1):
        parts: dict[int, list[str]] = {index: [] for index in same}
        for difference in ranked:
            alike = _alike(same, parts)
            if not alike:
                break
            values = [difference.values[i] for i in alike]
            if any(v is None for v in values) or len(set(map(str, values))) < 2:
                continue  # a run without it, or the same in these runs: tells nothing here
            for index, text in zip(alike, _texts(difference.key, values), strict=True):
                parts[index].append(text)
        for index in same:
            told[index] = _elided(", ".join(parts[index]))
    return told


def _alike(runs: list[int], parts: dict[int, list[str]]) -> list[int]:
    """The runs whose telling so far is the same as another's."""
    seen: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for index in runs:
        seen[tuple(parts[index])].append(index)
    return [index for group in seen.values() if len(group) > 1 for index in group]


def _texts(key: str, values: list[Any]) -> list[str]:
    """Each value as it reads in What differs; of an option list (rw,relatime,data=ordered)
    only the options not in all of them."""
    texts = [setting_text(key, value) for value in values]
    if key in _OPTION_LISTS:
        lists = [text.split(",") for text in texts]
        common = set.intersection(*(set(options) for options in lists))
        kept = [",".join(o for o in options if o not in common) for options in lists]
        texts = [own or text for own, text in zip(kept, texts, strict=True)]
    if key in _SELF_EXPLAINING:
        return texts
    return [f"{setting_label(key)} {text}" for text in texts]


def _elided(text: str) -> str:
    return text if len(text) <= MAX_TELLING else f"{text[: MAX_TELLING - 1]}\u2026"

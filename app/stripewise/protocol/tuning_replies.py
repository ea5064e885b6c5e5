"""The tuning verbs' replies as typed values (their arguments are in `tuning`).

Each is a `WireValue`: `from_json(data)` fails as `bad_reply` naming the field and accepts keys
it does not know, so a newer helper of the same protocol may add one; `restored_at_start` is
absent from helpers before it was added, and reads as none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from stripewise.model.wording import count_noun
from stripewise.protocol.codec import WireValue, is_none, wire
from stripewise.protocol.fields import Knob


@dataclass(frozen=True)
class SideEffect(WireValue):
    """The pair knob the kernel zeroed when its counterpart was written."""

    key: str
    before: Knob
    after: Knob


@dataclass(frozen=True)
class PutBack(WireValue):
    """A value an interrupted apply (its helper killed half-way) had left, written back by a
    later helper: as it started, or before an apply."""

    journal: str  # the interrupted apply's entry
    key: str
    device: str | None
    was: Knob  # what the interrupted apply had left
    value: Knob  # written back: the value before it


def restored_summary(
    items: Iterable[PutBack],
    shown: Callable[[str, Knob], str] = lambda _key, value: str(value),
    before: Callable[[str, Knob], str] = lambda _key, value: str(value),
) -> list[str]:
    """One sentence per interrupted apply, for the CLI and the GUI: `restored 2 values an
    interrupted apply had left (journal ID): loop2: scheduler mq-deadline -> none, ...`;
    `shown` writes the value put back (with its unit), `before` the one it had left."""
    by_journal: dict[str, list[PutBack]] = {}
    for item in items:
        by_journal.setdefault(item.journal, []).append(item)
    return [
        f"restored {count_noun(len(put), 'value')} an interrupted apply had left "
        f"(journal {journal}): "
        + ", ".join(
            f"{p.device + ': ' if p.device else ''}{p.key} "
            f"{before(p.key, p.was)} -> {shown(p.key, p.value)}"
            for p in put
        )
        for journal, put in by_journal.items()
    ]


@dataclass(frozen=True)
class AppliedSetting(WireValue):
    key: str
    device: str | None
    unit: str
    before: Knob
    written: int | str
    after: Knob  # re-read: the kernel may round (read_ahead_kb in whole pages)
    matches: bool
    side_effects: tuple[SideEffect, ...] = field(default=())


@dataclass(frozen=True)
class ApplyReply(WireValue):
    journal: str  # the entry's id, for verify and revert
    label: str | None
    settings: tuple[AppliedSetting, ...]  # in the order written
    warnings: tuple[str, ...]
    # what this helper put back of interrupted applies (at its start, or before this one)
    restored_at_start: tuple[PutBack, ...] = ()


@dataclass(frozen=True)
class VerifiedSetting(WireValue):
    """A journaled write against the kernel's value now; `reason` only for a mismatch."""

    key: str
    device: str | None
    unit: str
    written: Knob
    now: Knob
    matches: bool
    reason: str | None = field(default=None, metadata=wire(omit=is_none))


@dataclass(frozen=True)
class VerifyReply(WireValue):
    journal: str
    state: str | None  # the entry's: applied, partial, reverted, interrupted, ...
    settings: tuple[VerifiedSetting, ...]
    mismatches: tuple[VerifiedSetting, ...]
    restored_at_start: tuple[PutBack, ...] = ()  # as ApplyReply's


@dataclass(frozen=True)
class KnobValue(WireValue):
    key: str
    value: Knob


@dataclass(frozen=True)
class RestoredSetting(WireValue):
    key: str
    device: str | None
    unit: str
    was: Knob
    now: Knob
    restored: KnobValue  # what was written back (a pair's counterpart, when it was in force)


@dataclass(frozen=True)
class SkippedSetting(WireValue):
    key: str
    device: str | None
    reason: str


@dataclass(frozen=True)
class RevertReply(WireValue):
    journal: str
    restored: tuple[RestoredSetting, ...]
    skipped: tuple[SkippedSetting, ...]  # devices gone or replaced since the apply
    restored_at_start: tuple[PutBack, ...] = ()  # as ApplyReply's


@dataclass(frozen=True)
class PersistFile(WireValue):
    kind: str  # sysctl or udev
    path: str
    text: str | None  # None: no such settings (preview, write), or absent (show)


@dataclass(frozen=True)
class PersistReply(WireValue):
    """What each action answers, the rest None (left off the wire): `show` files; `preview`
    files and warnings; `write` those plus written and removed; `remove` removed and absent."""

    files: tuple[PersistFile, ...] | None = field(default=None, metadata=wire(omit=is_none))
    warnings: tuple[str, ...] | None = field(default=None, metadata=wire(omit=is_none))
    written: tuple[str, ...] | None = field(default=None, metadata=wire(omit=is_none))
    removed: tuple[str, ...] | None = field(default=None, metadata=wire(omit=is_none))
    absent: tuple[str, ...] | None = field(default=None, metadata=wire(omit=is_none))


TuningReply = ApplyReply | VerifyReply | RevertReply | PersistReply

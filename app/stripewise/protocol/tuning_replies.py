"""The tuning verbs' replies as typed values (their arguments are in `tuning`).

Each parses with `from_json(data)`, failing as `bad_reply` naming the field, and accepts keys
it does not know, so a newer helper of the same protocol may add one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stripewise.model.wording import count_noun
from stripewise.protocol.fields import Fields, Knob


@dataclass(frozen=True)
class SideEffect:
    """The pair knob the kernel zeroed when its counterpart was written."""

    key: str
    before: Knob
    after: Knob

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "before": self.before, "after": self.after}

    @classmethod
    def from_json(cls, read: Fields) -> SideEffect:
        return cls(read.text("key"), read.knob("before"), read.knob("after"))


@dataclass(frozen=True)
class PutBack:
    """A value an interrupted apply (its helper killed half-way) had left, written back by a
    later helper: as it started, or before an apply."""

    journal: str  # the interrupted apply's entry
    key: str
    device: str | None
    was: Knob  # what the interrupted apply had left
    value: Knob  # written back: the value before it

    def to_json(self) -> dict[str, Any]:
        return {
            "journal": self.journal,
            "key": self.key,
            "device": self.device,
            "was": self.was,
            "value": self.value,
        }

    @classmethod
    def from_json(cls, read: Fields) -> PutBack:
        return cls(
            read.text("journal"),
            read.text("key"),
            read.optional_text("device"),
            read.knob("was"),
            read.knob("value"),
        )


def restored_summary(
    items: Iterable[PutBack], shown: Callable[[str, Knob], str] = lambda _key, value: str(value)
) -> list[str]:
    """One sentence per interrupted apply, for the CLI and the GUI: `restored 2 values an
    interrupted apply had left (journal ID): loop2: scheduler mq-deadline -> none, ...`;
    `shown` writes a value (the CLI adds units)."""
    by_journal: dict[str, list[PutBack]] = {}
    for item in items:
        by_journal.setdefault(item.journal, []).append(item)
    return [
        f"restored {count_noun(len(put), 'value')} an interrupted apply had left "
        f"(journal {journal}): "
        + ", ".join(
            f"{p.device + ': ' if p.device else ''}{p.key} {p.was} -> {shown(p.key, p.value)}"
            for p in put
        )
        for journal, put in by_journal.items()
    ]


def put_backs_from_json(data: Mapping[str, Any]) -> tuple[PutBack, ...]:
    """`restored_at_start`, absent from helpers before it was added."""
    if data.get("restored_at_start") is None:
        return ()
    return tuple(PutBack.from_json(item) for item in Fields(data).objects("restored_at_start"))


@dataclass(frozen=True)
class AppliedSetting:
    key: str
    device: str | None
    unit: str
    before: Knob
    written: int | str
    after: Knob  # re-read: the kernel may round (read_ahead_kb in whole pages)
    matches: bool
    side_effects: tuple[SideEffect, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "device": self.device,
            "unit": self.unit,
            "before": self.before,
            "written": self.written,
            "after": self.after,
            "matches": self.matches,
            "side_effects": [e.to_json() for e in self.side_effects],
        }

    @classmethod
    def from_json(cls, read: Fields) -> AppliedSetting:
        key, written = read.text("key"), read.knob("written")
        if written is None:
            raise read.fail(f"{read.where}written: a number or a name expected")
        return cls(
            key,
            read.optional_text("device"),
            read.text("unit"),
            read.knob("before"),
            written,
            read.knob("after"),
            read.flag("matches"),
            tuple(SideEffect.from_json(e) for e in read.objects("side_effects")),
        )


@dataclass(frozen=True)
class ApplyReply:
    journal: str  # the entry's id, for verify and revert
    label: str | None
    settings: tuple[AppliedSetting, ...]  # in the order written
    warnings: tuple[str, ...]
    # what this helper put back of interrupted applies (at its start, or before this one)
    restored_at_start: tuple[PutBack, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "journal": self.journal,
            "label": self.label,
            "settings": [s.to_json() for s in self.settings],
            "warnings": list(self.warnings),
            "restored_at_start": [p.to_json() for p in self.restored_at_start],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ApplyReply:
        read = Fields(data)
        return cls(
            read.text("journal"),
            read.optional_text("label"),
            tuple(AppliedSetting.from_json(s) for s in read.objects("settings")),
            read.texts("warnings"),
            put_backs_from_json(data),
        )


@dataclass(frozen=True)
class VerifiedSetting:
    """A journaled write against the kernel's value now; `reason` only for a mismatch."""

    key: str
    device: str | None
    unit: str
    written: Knob
    now: Knob
    matches: bool
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = {
            "key": self.key,
            "device": self.device,
            "unit": self.unit,
            "written": self.written,
            "now": self.now,
            "matches": self.matches,
        }
        return data if self.reason is None else data | {"reason": self.reason}

    @classmethod
    def from_json(cls, read: Fields) -> VerifiedSetting:
        return cls(
            read.text("key"),
            read.optional_text("device"),
            read.text("unit"),
            read.knob("written"),
            read.knob("now"),
            read.flag("matches"),
            read.optional_text("reason"),
        )


@dataclass(frozen=True)
class VerifyReply:
    journal: str
    state: str | None  # the entry's: applied, partial, reverted, interrupted, ...
    settings: tuple[VerifiedSetting, ...]
    mismatches: tuple[VerifiedSetting, ...]
    restored_at_start: tuple[PutBack, ...] = ()  # as ApplyReply's

    def to_json(self) -> dict[str, Any]:
        return {
            "journal": self.journal,
            "state": self.state,
            "settings": [s.to_json() for s in self.settings],
            "mismatches": [m.to_json() for m in self.mismatches],
            "restored_at_start": [p.to_json() for p in self.restored_at_start],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> VerifyReply:
        read = Fields(data)
        return cls(
            read.text("journal"),
            read.optional_text("state"),
            tuple(VerifiedSetting.from_json(s) for s in read.objects("settings")),
            tuple(VerifiedSetting.from_json(m) for m in read.objects("mismatches")),
            put_backs_from_json(data),
        )


@dataclass(frozen=True)
class KnobValue:
    key: str
    value: Knob

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value}


@dataclass(frozen=True)
class RestoredSetting:
    key: str
    device: str | None
    unit: str
    was: Knob
    now: Knob
    restored: KnobValue  # what was written back (a pair's counterpart, when it was in force)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "device": self.device,
            "unit": self.unit,
            "was": self.was,
            "now": self.now,
            "restored": self.restored.to_json(),
        }

    @classmethod
    def from_json(cls, read: Fields) -> RestoredSetting:
        restored = read.object("restored")
        return cls(
            read.text("key"),
            read.optional_text("device"),
            read.text("unit"),
            read.knob("was"),
            read.knob("now"),
            KnobValue(restored.text("key"), restored.knob("value")),
        )


@dataclass(frozen=True)
class SkippedSetting:
    key: str
    device: str | None
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "device": self.device, "reason": self.reason}

    @classmethod
    def from_json(cls, read: Fields) -> SkippedSetting:
        return cls(read.text("key"), read.optional_text("device"), read.text("reason"))


@dataclass(frozen=True)
class RevertReply:
    journal: str
    restored: tuple[RestoredSetting, ...]
    skipped: tuple[SkippedSetting, ...]  # devices gone or replaced since the apply
    restored_at_start: tuple[PutBack, ...] = ()  # as ApplyReply's

    def to_json(self) -> dict[str, Any]:
        return {
            "journal": self.journal,
            "restored": [r.to_json() for r in self.restored],
            "skipped": [s.to_json() for s in self.skipped],
            "restored_at_start": [p.to_json() for p in self.restored_at_start],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RevertReply:
        read = Fields(data)
        return cls(
            read.text("journal"),
            tuple(RestoredSetting.from_json(r) for r in read.objects("restored")),
            tuple(SkippedSetting.from_json(s) for s in read.objects("skipped")),
            put_backs_from_json(data),
        )


@dataclass(frozen=True)
class PersistFile:
    kind: str  # sysctl or udev
    path: str
    text: str | None  # None: no such settings (preview, write), or absent (show)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path, "text": self.text}

    @classmethod
    def from_json(cls, read: Fields) -> PersistFile:
        return cls(read.text("kind"), read.text("path"), read.optional_text("text"))


@dataclass(frozen=True)
class PersistReply:
    """What each action answers, the rest None (left off the wire): `show` files; `preview`
    files and warnings; `write` those plus written and removed; `remove` removed and absent."""

    files: tuple[PersistFile, ...] | None = None
    warnings: tuple[str, ...] | None = None
    written: tuple[str, ...] | None = None
    removed: tuple[str, ...] | None = None
    absent: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.files is not None:
            data["files"] = [f.to_json() for f in self.files]
        for key in ("warnings", "written", "removed", "absent"):
            value = getattr(self, key)
            if value is not None:
                data[key] = list(value)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PersistReply:
        read = Fields(data)

        def texts(key: str) -> tuple[str, ...] | None:
            return None if data.get(key) is None else read.texts(key)

        files = None
        if data.get("files") is not None:
            files = tuple(PersistFile.from_json(f) for f in read.objects("files"))
        return cls(files, texts("warnings"), texts("written"), texts("removed"), texts("absent"))


TuningReply = ApplyReply | VerifyReply | RevertReply | PersistReply

"""The tuning verbs' arguments as typed values: apply, verify, revert, persist (their
replies are in `tuning_replies`).

As in `verbs`, `from_json` (the codec's) refuses what is malformed as `bad_args` naming the
field: each setting's shape, its key among `model.tunables`, its device's name, and whether
the key takes a device. Whether the device exists and the value fits its limits needs the
machine, and stays the helper's to check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import ClassVar, Self

from stripewise.model.tunables import TuningError, check_device_name, relative_path, tunable
from stripewise.protocol.codec import Refused, Shape, WireArgs, is_false, is_none, wire
from stripewise.protocol.tuning_replies import ApplyReply, PersistReply, RevertReply, VerifyReply

MAX_SETTINGS = 256
MAX_LABEL = 200
PERSIST_ACTIONS = ("show", "preview", "write", "remove")
JOURNAL_ID = re.compile(r"^[0-9A-Za-z-]{1,40}\Z")  # \Z: "$" allows a final "\n"


# --- arguments --------------------------------------------------------------------------------
_SETTING = "an object with key, value and (per device) device"
_LABEL = f"label: printable text of at most {MAX_LABEL} characters"
_SETTINGS = "settings: a non-empty list of {key, value, device?}"


@dataclass(frozen=True)
class TuningSetting(WireArgs):
    """One `{key, value, device?}`: `device` None for the global knobs. Parsed, the key is
    the full name (`vm.` added) and the device its bare kernel name."""

    WIRE_SHAPE = Shape(refusal=_SETTING)
    key: str = field(metadata=wire(refusal="key must be text"))
    value: int | str = field(metadata=wire(refusal="value must be a number or a name"))
    device: str | None = field(
        default=None,
        metadata=wire(
            omit=is_none,
            refusal=lambda named: f"device must be a kernel name such as sdb, not {named!r}",
        ),
    )

    def wire_checked(self) -> Self:
        """The key among `model.tunables`, the device's name, and whether the key takes one
        (global vs per device vs md), refused by name."""
        try:
            knob = tunable(self.key)
            device = None if self.device is None else check_device_name(self.device)
            relative_path(knob.key, device)
        except TuningError as exc:
            raise Refused(str(exc)) from None
        return replace(self, key=knob.key, device=device)


def _settings_count(settings: tuple[TuningSetting, ...] | None) -> str | None:
    if not settings:
        return _SETTINGS
    if len(settings) > MAX_SETTINGS:
        return f"settings: at most {MAX_SETTINGS} at a time, not {len(settings)}"
    return None


@dataclass(frozen=True)
class JournalArgs(WireArgs):
    """A verb on one journal entry; `journal` None: the newest apply not reverted."""

    journal: str | None = field(
        default=None,
        metadata=wire(
            omit=is_none,
            pattern=JOURNAL_ID,
            refusal="journal: an id as returned by tuning.apply",
        ),
    )


# --- the verbs' arguments ---------------------------------------------------------------------
@dataclass(frozen=True)
class ApplyArgs(WireArgs):
    VERB: ClassVar[str] = "tuning.apply"
    REPLY: ClassVar[type[ApplyReply]] = ApplyReply
    settings: tuple[TuningSetting, ...] = field(  # 1 to MAX_SETTINGS
        metadata=wire(refusal=_SETTINGS, check=_settings_count)
    )
    label: str | None = field(  # printable, at most MAX_LABEL
        default=None,
        metadata=wire(
            omit=is_none,
            check=lambda label: None if len(label) <= MAX_LABEL and label.isprintable() else _LABEL,
            refusal=_LABEL,
        ),
    )
    # put back when this helper's session ends (its client closed the pipe, or it was told to
    # stop), and by the next helper to start if this one died first: an experiment's values
    temporary: bool = field(
        default=False, metadata=wire(omit=is_false, refusal="temporary: true or false")
    )


@dataclass(frozen=True)
class VerifyArgs(JournalArgs):
    VERB: ClassVar[str] = "tuning.verify"
    REPLY: ClassVar[type[VerifyReply]] = VerifyReply


@dataclass(frozen=True)
class RevertArgs(JournalArgs):
    VERB: ClassVar[str] = "tuning.revert"
    REPLY: ClassVar[type[RevertReply]] = RevertReply


@dataclass(frozen=True)
class PersistArgs(WireArgs):
    """`settings` for preview and write (as for apply), none for show and remove."""

    VERB: ClassVar[str] = "tuning.persist"
    REPLY: ClassVar[type[PersistReply]] = PersistReply
    action: str = field(  # one of PERSIST_ACTIONS
        metadata=wire(choices=PERSIST_ACTIONS, refusal="action: show, preview, write or remove")
    )
    settings: tuple[TuningSetting, ...] | None = field(
        default=None, metadata=wire(omit=is_none, refusal=_SETTINGS)
    )

    def wire_checked(self) -> Self:
        if self.action in ("show", "remove"):
            if self.settings is not None:
                raise Refused(f"{self.action} takes no settings")
        elif problem := _settings_count(self.settings):
            raise Refused(problem)
        return self

"""The tuning verbs' arguments as typed values: apply, verify, revert, persist (their
replies are in `tuning_replies`).

As in `verbs`, `from_json` refuses what is malformed as `bad_args` naming the field: each
setting's shape, its key among `model.tunables`, its device's name, and whether the key takes
a device. Whether the device exists and the value fits its limits needs the machine, and
stays the helper's to check.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from stripewise.model.tunables import TuningError, check_device_name, relative_path, tunable
from stripewise.protocol.fields import bad_args, only
from stripewise.protocol.tuning_replies import ApplyReply, PersistReply, RevertReply, VerifyReply

MAX_SETTINGS = 256
MAX_LABEL = 200
PERSIST_ACTIONS = ("show", "preview", "write", "remove")
_JOURNAL_ID = re.compile(r"^[0-9A-Za-z-]{1,40}\Z")  # \Z: "$" allows a final "\n"


# --- arguments --------------------------------------------------------------------------------
@dataclass(frozen=True)
class TuningSetting:
    """One `{key, value, device?}`: `device` None for the global knobs. Parsed, the key is
    the full name (`vm.` added) and the device its bare kernel name."""

    key: str
    value: int | str
    device: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"key": self.key, "value": self.value}
        return data if self.device is None else data | {"device": self.device}

    @classmethod
    def from_json(cls, item: object, where: str, request_id: int | None) -> TuningSetting:
        if not isinstance(item, dict) or set(item) - {"key", "value", "device"}:
            raise bad_args(
                f"{where}: an object with key, value and (per device) device", request_id
            )
        key, value, named = item.get("key"), item.get("value"), item.get("device")
        if not isinstance(key, str):
            raise bad_args(f"{where}: key must be text", request_id)
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise bad_args(f"{where}: value must be a number or a name", request_id)
        if named is not None and not isinstance(named, str):
            raise bad_args(
                f"{where}: device must be a kernel name such as sdb, not {named!r}", request_id
            )
        try:
            knob = tunable(key)
            device = None if named is None else check_device_name(named)
            relative_path(knob.key, device)  # global vs per device vs md: refused by name
        except TuningError as exc:
            raise bad_args(f"{where}: {exc}", request_id) from None
        return cls(knob.key, value, device)


def settings_from_json(raw: object, request_id: int | None) -> tuple[TuningSetting, ...]:
    if not isinstance(raw, list) or not raw:
        raise bad_args("settings: a non-empty list of {key, value, device?}", request_id)
    if len(raw) > MAX_SETTINGS:
        raise bad_args(f"settings: at most {MAX_SETTINGS} at a time, not {len(raw)}", request_id)
    return tuple(
        TuningSetting.from_json(item, f"settings[{i}]", request_id) for i, item in enumerate(raw)
    )


@dataclass(frozen=True)
class JournalArgs:
    """A verb on one journal entry; `journal` None: the newest apply not reverted."""

    journal: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {} if self.journal is None else {"journal": self.journal}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], request_id: int | None = None) -> Self:
        only(data, request_id, "journal")
        wanted = data.get("journal")
        if wanted is not None and (not isinstance(wanted, str) or not _JOURNAL_ID.match(wanted)):
            raise bad_args("journal: an id as returned by tuning.apply", request_id)
        return cls(wanted)


# --- the verbs' arguments ---------------------------------------------------------------------
@dataclass(frozen=True)
class ApplyArgs:
    VERB: ClassVar[str] = "tuning.apply"
    REPLY: ClassVar[type[ApplyReply]] = ApplyReply
    settings: tuple[TuningSetting, ...]  # 1 to MAX_SETTINGS
    label: str | None = None  # printable, at most MAX_LABEL

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"settings": [s.to_json() for s in self.settings]}
        return data if self.label is None else data | {"label": self.label}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], request_id: int | None = None) -> ApplyArgs:
        only(data, request_id, "settings", "label")
        label = data.get("label")
        if label is not None and (
            not isinstance(label, str) or len(label) > MAX_LABEL or not label.isprintable()
        ):
            raise bad_args(f"label: printable text of at most {MAX_LABEL} characters", request_id)
        return cls(settings_from_json(data.get("settings"), request_id), label)


@dataclass(frozen=True)
class VerifyArgs(JournalArgs):
    VERB: ClassVar[str] = "tuning.verify"
    REPLY: ClassVar[type[VerifyReply]] = VerifyReply


@dataclass(frozen=True)
class RevertArgs(JournalArgs):
    VERB: ClassVar[str] = "tuning.revert"
    REPLY: ClassVar[type[RevertReply]] = RevertReply


@dataclass(frozen=True)
class PersistArgs:
    """`settings` for preview and write (as for apply), none for show and remove."""

    VERB: ClassVar[str] = "tuning.persist"
    REPLY: ClassVar[type[PersistReply]] = PersistReply
    action: str  # one of PERSIST_ACTIONS
    settings: tuple[TuningSetting, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"action": self.action}
        if self.settings is not None:
            data["settings"] = [s.to_json() for s in self.settings]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any], request_id: int | None = None) -> PersistArgs:
        only(data, request_id, "action", "settings")
        action = data.get("action")
        if not isinstance(action, str) or action not in PERSIST_ACTIONS:
            raise bad_args("action: show, preview, write or remove", request_id)
        if action in ("show", "remove"):
            if "settings" in data:
                raise bad_args(f"{action} takes no settings", request_id)
            return cls(action)
        return cls(action, settings_from_json(data.get("settings"), request_id))

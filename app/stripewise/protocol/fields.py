"""What the verbs' types share: `VerbArgs`, what every arguments type offers the clients (its
verb, its reply's type, its wire object); `bad_args` and `only` for arguments, refused with
the request's id; `Fields`, a reply's object read with each field's type checked once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, Self, TypeVar

from stripewise.protocol.wire import ProtocolError, shown_names

BAD_ARGS = "bad_args"
BAD_REPLY = "bad_reply"
Knob = int | str | None  # a tunable's value as the helper reads it (None: unreadable)

R_co = TypeVar("R_co", covariant=True)


class VerbArgs(Protocol[R_co]):
    """A verb's arguments whose reply parses as R_co (each type's `VERB` and `REPLY`)."""

    @property
    def VERB(self) -> str: ...  # a ClassVar on the types satisfies these

    @property
    def REPLY(self) -> type[R_co]: ...

    def to_json(self) -> dict[str, Any]: ...


class Message(Protocol):
    """Anything with a wire object: the helper encodes its typed replies through this."""

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class NoArgs:
    """A verb that takes no arguments (each subclass sets `VERB` and `REPLY`): any are
    refused by name."""

    def to_json(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], request_id: int | None = None) -> Self:
        only(data, request_id)
        return cls()


class Fields:
    """A reply's object (or one inside it: `where` prefixes the names, `settings[2].`); a
    field of the wrong type raises ProtocolError("bad_reply") naming it."""

    def __init__(self, data: Mapping[str, Any], where: str = "") -> None:
        self.data = data
        self.where = where

    @classmethod
    def of(cls, data: object, where: str) -> Fields:
        if not isinstance(data, Mapping):
            raise ProtocolError(BAD_REPLY, f"{where}: an object expected")
        return cls(data, f"{where}.")

    def fail(self, message: str) -> ProtocolError:
        return ProtocolError(BAD_REPLY, message)

    def _bad(self, key: str, expected: str) -> ProtocolError:
        return self.fail(f"{self.where}{key}: {expected} expected")

    def text(self, key: str) -> str:
        value = self.data.get(key)
        if not isinstance(value, str):
            raise self._bad(key, "text")
        return value

    def optional_text(self, key: str) -> str | None:
        return None if self.data.get(key) is None else self.text(key)

    def whole(self, key: str) -> int:
        value = self.data.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._bad(key, "a whole number")
        return value

    def optional_whole(self, key: str) -> int | None:
        return None if self.data.get(key) is None else self.whole(key)

    def flag(self, key: str) -> bool:
        value = self.data.get(key)
        if not isinstance(value, bool):
            raise self._bad(key, "true or false")
        return value

    def texts(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._bad(key, "a list of text")
        return tuple(value)

    def knob(self, key: str) -> Knob:
        value = self.data.get(key)
        if isinstance(value, bool) or not isinstance(value, int | str | None):
            raise self._bad(key, "a number, a name or null")
        return value

    def objects(self, key: str) -> list[Fields]:
        value = self.data.get(key)
        if not isinstance(value, list):
            raise self._bad(key, "a list of objects")
        where = f"{self.where}{key}"
        return [Fields.of(item, f"{where}[{i}]") for i, item in enumerate(value)]

    def object(self, key: str) -> Fields:
        return Fields.of(self.data.get(key), f"{self.where}{key}")


def bad_args(message: str, request_id: int | None) -> ProtocolError:
    return ProtocolError(BAD_ARGS, message, request_id)


def only(data: Mapping[str, Any], request_id: int | None, *allowed: str) -> None:
    """Arguments are strict: an unknown key may be a typo or a probe, never ignored. Verbs
    that take none refuse anything given."""
    unknown = set(data) - set(allowed)
    if unknown:
        raise bad_args(f"unknown arguments: {shown_names(unknown)}", request_id)

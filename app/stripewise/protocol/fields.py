"""What the verbs' types share: `VerbArgs`, what every arguments type offers the clients (its
verb, its reply's type, its wire object); `Message`, anything with a wire object; `NoArgs`, a
verb that takes no arguments; `Knob`, a tunable's value as the helper reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from stripewise.protocol.codec import WireArgs

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
class NoArgs(WireArgs):
    """A verb that takes no arguments (each subclass sets `VERB` and `REPLY`): any are
    refused by name."""

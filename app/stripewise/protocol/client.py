"""The client side of the protocol without I/O: ids, pending requests, and lines turned into
typed deliveries. The Qt client (services) and the CLI's client feed it the helper's output
and write what it returns; neither reads a message dict itself.

A request is a typed arguments value (`protocol.verbs`, `protocol.tuning`); its reply comes
back as the type `REPLY_TYPES` names for the verb, parsed once here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from stripewise.protocol.events import Event, event_from_json
from stripewise.protocol.fields import VerbArgs
from stripewise.protocol.messages import REPLY_TYPES
from stripewise.protocol.verbs import HelloArgs
from stripewise.protocol.wire import ProtocolError, encode

R = TypeVar("R")


@dataclass(frozen=True)
class Reply(Generic[R]):
    """The answer to request `id`: `result` (the verb's reply type) when ok, else None with
    `code` and `message`. A reply that does not parse as its type is `bad_reply`."""

    id: int
    verb: str
    ok: bool
    result: R | None
    code: str = ""
    message: str = ""


@dataclass(frozen=True)
class Garbled:
    """A line that is not the protocol (kept for diagnostics, never acted on)."""

    line: bytes
    why: str


Delivery = Reply[Any] | Event | Garbled


class ClientCore:
    """Numbering and matching. `request` returns the line to write; `receive` takes one line
    of the helper's output and returns what it delivers (nothing for a reply nobody awaits)."""

    def __init__(self) -> None:
        self._next_id = 0
        self._pending: dict[int, str] = {}  # id -> verb

    def hello(self) -> tuple[int, bytes]:
        return self.request(HelloArgs())

    def request(self, args: VerbArgs[Any]) -> tuple[int, bytes]:
        self._next_id += 1
        self._pending[self._next_id] = args.VERB
        return self._next_id, encode(
            {"id": self._next_id, "verb": args.VERB, "args": args.to_json()}
        )

    def forget(self, request_id: int) -> None:
        self._pending.pop(request_id, None)

    @property
    def waiting(self) -> list[int]:
        return list(self._pending)

    def receive(self, line: bytes) -> Delivery | None:
        try:
            message = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            return Garbled(line[:200], f"not JSON: {exc}")
        if not isinstance(message, dict):
            return Garbled(line[:200], "not an object")
        if "id" not in message:
            try:
                return event_from_json(message)
            except ProtocolError as exc:
                return Garbled(line[:200], str(exc))
        request_id = message.get("id")
        verb = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if verb is None:
            return None  # an answer to nothing we wait for (a forgotten request)
        assert isinstance(request_id, int)
        if message.get("ok") is True:
            return _result(request_id, verb, message.get("result"))
        error = message.get("error")
        error = error if isinstance(error, dict) else {}
        return Reply(
            request_id,
            verb,
            False,
            None,
            str(error.get("code") or "error"),
            str(error.get("message") or "the helper refused the request"),
        )


def _result(request_id: int, verb: str, result: object) -> Reply[Any]:
    """An ok reply's result as its verb's type; one that does not parse is refused here, so
    no caller acts on half a reply."""
    try:
        if not isinstance(result, dict):
            raise ProtocolError("bad_reply", "result: an object expected")
        typed = REPLY_TYPES[verb].from_json(result)
    except ProtocolError as exc:
        return Reply(
            request_id, verb, False, None, "bad_reply", f"the helper's {verb} reply: {exc}"
        )
    return Reply(request_id, verb, True, typed)

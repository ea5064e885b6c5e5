"""The client side of the protocol without I/O: ids, pending requests, and lines turned into
typed deliveries. The Qt client (services) and the CLI's client feed it the helper's output
and write what it returns; neither reads a message dict itself.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stripewise.protocol.events import Event, event_from_json
from stripewise.protocol.wire import PROTOCOL_VERSION, ProtocolError, encode


@dataclass(frozen=True)
class Reply:
    """The answer to request `id`: `result` when ok, else `code` and `message`."""

    id: int
    verb: str
    ok: bool
    result: Mapping[str, Any]
    code: str = ""
    message: str = ""


@dataclass(frozen=True)
class Garbled:
    """A line that is not the protocol (kept for diagnostics, never acted on)."""

    line: bytes
    why: str


Delivery = Reply | Event | Garbled


class ClientCore:
    """Numbering and matching. `request` returns the line to write; `receive` takes one line
    of the helper's output and returns what it delivers (nothing for a reply nobody awaits)."""

    def __init__(self) -> None:
        self._next_id = 0
        self._pending: dict[int, str] = {}  # id -> verb

    def hello(self) -> tuple[int, bytes]:
        return self.request("hello", {"protocol": PROTOCOL_VERSION})

    def request(self, verb: str, args: Mapping[str, Any]) -> tuple[int, bytes]:
        self._next_id += 1
        self._pending[self._next_id] = verb
        return self._next_id, encode({"id": self._next_id, "verb": verb, "args": dict(args)})

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
            result = message.get("result")
            return Reply(request_id, verb, True, result if isinstance(result, dict) else {})
        error = message.get("error")
        error = error if isinstance(error, dict) else {}
        return Reply(
            request_id,
            verb,
            False,
            {},
            str(error.get("code") or "error"),
            str(error.get("message") or "the helper refused the request"),
        )

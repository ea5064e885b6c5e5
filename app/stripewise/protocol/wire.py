"""Versioned JSON-lines messages between the GUI/CLI and the privileged helper.

Every line is one JSON object. Requests carry `id` (positive int), `verb` and `args`; replies
echo `id` with `ok` and either `result` or `error`; events carry `event` and no `id`.
Both sides import this module, so the limits below are the same everywhere.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from stripewise.input_files import InputFileError, parse_json

PROTOCOL_VERSION = 1
MAX_LINE_BYTES = 64 * 1024
_VERB_PATTERN = re.compile(r"^[a-z][a-z_]*(\.[a-z][a-z_]*)?\Z")  # \Z: "$" allows a final "\n"
_MAX_ID = 2**53 - 1
# An error's message names what was wrong; it never carries a request back whole: a client
# sending lines of 64 KiB must not get answers of 64 KiB (paths stay whole: PATH_MAX is 4 KiB).
MAX_ERROR_MESSAGE_CHARS = 8 * 1024
_SHOWN_CHARS = 80  # of a name or value from a request, quoted in a message


class ProtocolError(ValueError):
    """A message that breaks the protocol; `code` is stable for programs, the text for people."""

    def __init__(self, code: str, message: str, request_id: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.request_id = request_id


@dataclass(frozen=True)
class Request:
    id: int
    verb: str
    args: dict[str, Any] = field(default_factory=dict)


def parse_request(line: bytes) -> Request:
    """Validate one request line: size, JSON (nested at most MAX_DEPTH deep), shape, id range
    and verb spelling."""
    if len(line) > MAX_LINE_BYTES:
        raise ProtocolError("too_large", f"request longer than {MAX_LINE_BYTES} bytes")
    try:
        message = parse_json(line.decode("utf-8"), "request", surrogates=True)
    except UnicodeDecodeError as exc:
        raise ProtocolError("bad_json", f"request is not UTF-8 JSON: {exc}") from None
    except InputFileError as exc:  # also nesting past MAX_DEPTH, NaN, 5000-digit numbers
        raise ProtocolError("bad_json", str(exc)) from None
    if not isinstance(message, dict):
        raise ProtocolError("bad_request", "request must be a JSON object")
    request_id = message.get("id")
    if type(request_id) is not int or not 1 <= request_id <= _MAX_ID:
        raise ProtocolError("bad_request", "request needs an integer id from 1 to 2^53-1")
    verb = message.get("verb")
    if not isinstance(verb, str) or len(verb) > _SHOWN_CHARS or not _VERB_PATTERN.match(verb):
        raise ProtocolError("bad_request", "request needs a verb such as 'hello'", request_id)
    args = message.get("args", {})
    if not isinstance(args, dict):
        raise ProtocolError("bad_request", "args must be a JSON object", request_id)
    unknown = set(message) - {"id", "verb", "args"}
    if unknown:
        raise ProtocolError("bad_request", f"unknown fields: {shown_names(unknown)}", request_id)
    return Request(request_id, verb, args)


def shown(text: str) -> str:
    """Something a request said, as a message may quote it: at most _SHOWN_CHARS of it."""
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def shown_names(names: set[str]) -> str:
    """Unknown names from a request, each shortened and at most ten of them."""
    listed = [repr(shown(name)) for name in sorted(names)[:10]]
    more = f" and {len(names) - 10} more" if len(names) > 10 else ""
    return "[" + ", ".join(listed) + "]" + more


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def reply(request_id: int, result: dict[str, Any]) -> bytes:
    return encode({"id": request_id, "ok": True, "result": result})


def error_reply(request_id: int | None, code: str, message: str) -> bytes:
    if len(message) > MAX_ERROR_MESSAGE_CHARS:
        message = message[: MAX_ERROR_MESSAGE_CHARS - 1] + "…"
    return encode({"id": request_id, "ok": False, "error": {"code": code, "message": message}})


def hello_request(request_id: int = 1) -> bytes:
    return encode({"id": request_id, "verb": "hello", "args": {"protocol": PROTOCOL_VERSION}})

"""`enclosure.locate`: switch a SES enclosure bay's locate LED.

The client names the enclosure and the bay; the helper builds the sysfs path itself from
values that pass strict patterns, so no client-supplied path is ever written to.
"""

from __future__ import annotations

import os
import re
from typing import Any

from stripewise.protocol.wire import ProtocolError, Request

ENCLOSURE_ROOT = "/sys/class/enclosure"
_ENCLOSURE_ID = re.compile(r"^\d{1,5}:\d{1,5}:\d{1,5}:\d{1,5}\Z")  # \Z: "$" allows a final "\n"
_BAY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.:-]{0,63}\Z")


def locate_path(enclosure: object, bay: object, request_id: int) -> str:
    if not isinstance(enclosure, str) or not _ENCLOSURE_ID.match(enclosure):
        raise ProtocolError("bad_args", "enclosure must look like H:C:T:L", request_id)
    if not isinstance(bay, str) or not _BAY_NAME.match(bay) or ".." in bay:
        raise ProtocolError("bad_args", "bay must be a bay name such as 'Slot 07'", request_id)
    return f"{ENCLOSURE_ROOT}/{enclosure}/{bay}/locate"


def handle_locate(request: Request) -> dict[str, Any]:
    args = request.args
    unknown = set(args) - {"enclosure", "bay", "on"}
    if unknown:
        raise ProtocolError("bad_args", f"unknown arguments: {sorted(unknown)}", request.id)
    on = args.get("on")
    if not isinstance(on, bool):
        raise ProtocolError("bad_args", "on must be true or false", request.id)
    path = locate_path(args.get("enclosure"), args.get("bay"), request.id)
    if not os.path.isfile(path):
        raise ProtocolError("not_found", f"{path} does not exist: no locate LED there", request.id)
    try:
        with open(path, "w") as handle:
            handle.write("1" if on else "0")
        with open(path) as handle:
            now = handle.read().strip() == "1"
    except OSError as exc:
        raise ProtocolError(
            "io_error", f"cannot write {path}: {exc.strerror}", request.id
        ) from None
    return {"enclosure": args["enclosure"], "bay": args["bay"], "on": now}

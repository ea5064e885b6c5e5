"""`enclosure.locate`: switch a SES enclosure bay's locate LED.

The client names the enclosure and the bay; `LocateArgs` holds both to strict patterns and
the helper builds the sysfs path itself, so no client-supplied path is ever written to.
"""

from __future__ import annotations

import os

from stripewise.protocol.verbs import LocateArgs, LocateReply
from stripewise.protocol.wire import ProtocolError, Request

ENCLOSURE_ROOT = "/sys/class/enclosure"


def locate_path(args: LocateArgs) -> str:
    return f"{ENCLOSURE_ROOT}/{args.enclosure}/{args.bay}/locate"


def handle_locate(request: Request) -> LocateReply:
    args = LocateArgs.from_json(request.args, request.id)
    path = locate_path(args)
    if not os.path.isfile(path):
        raise ProtocolError("not_found", f"{path} does not exist: no locate LED there", request.id)
    try:
        with open(path, "w") as handle:
            handle.write("1" if args.on else "0")
        with open(path) as handle:
            now = handle.read().strip() == "1"
    except OSError as exc:
        raise ProtocolError(
            "io_error", f"cannot write {path}: {exc.strerror}", request.id
        ) from None
    return LocateReply(args.enclosure, args.bay, now)

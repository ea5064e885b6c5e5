"""The hostile caller of tests/security/test_attacks.py: a real unprivileged user's hands.

Run by the tests through `setpriv --reuid=65534 --regid=65534 --clear-groups -- python3 -I
attacker.py MODE ARGS`, under the system Python (root's venv is not reachable for nobody), so it
uses the standard library only. Two modes:

- `serve`: one JSON command per line on stdin, one JSON answer per line on stdout: `whoami`,
  `access` (os.access as this user), `swap` and `restore` (below), `entries` (a listing).
- `race NAME SPARE LINK SECONDS COUNT`: swap NAME, wait about 1 ms, restore it, wait 0.1 ms,
  over and over until stdin closes, SECONDS pass or COUNT rounds are done; then restore and
  print a summary.

A swap puts a symbolic link to LINK at NAME: when NAME is a real file or directory it trades
places with a link kept at SPARE (renameat2 RENAME_EXCHANGE, so the name is never missing and
nothing is ever deleted); when NAME does not exist yet, the link is planted there. A restore
trades back when there is a real entry to put back. Two attackers swapping the same name at once
only ever exchange the two entries.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
import time
from typing import Any

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(None, use_errno=True)


def _renameat2(old: str, new: str, flags: int) -> None:
    done = _libc.renameat2(_AT_FDCWD, os.fsencode(old), _AT_FDCWD, os.fsencode(new), flags)
    if done != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), old)


def _is_link(path: str) -> bool | None:
    """True: a symbolic link; False: something else; None: nothing there."""
    try:
        return os.path.islink(path) if os.path.lexists(path) else None
    except OSError:
        return None


def swap(name: str, spare: str, link: str) -> bool:
    """Make NAME a symbolic link to LINK; -> whether this call did it."""
    try:
        here = _is_link(name)
        if here is True:
            return False
        if here is None:  # not created yet: plant the link (the one at SPARE if there is one)
            if _is_link(spare) is True:
                _renameat2(spare, name, _RENAME_NOREPLACE)
            else:
                os.symlink(link, name)
            return True
        if _is_link(spare) is None:
            os.symlink(link, spare)
        if _is_link(spare) is not True:
            return False
        _renameat2(name, spare, _RENAME_EXCHANGE)
        return True
    except OSError:
        return False


def restore(name: str, spare: str) -> bool:
    """Put the real entry back at NAME; -> whether it did. With no real entry at SPARE (not
    created yet, or removed) the link stays."""
    try:
        if _is_link(name) is not True or _is_link(spare) is not False:
            return False
        _renameat2(name, spare, _RENAME_EXCHANGE)
        return True
    except OSError:
        return False


def _answer(command: dict[str, Any]) -> dict[str, Any]:
    op = command.get("op")
    if op == "whoami":
        return {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
                "egid": os.getegid(), "groups": os.getgroups()}  # fmt: skip
    if op == "access":
        modes = {"r": os.R_OK, "w": os.W_OK, "rw": os.R_OK | os.W_OK}
        return {"allowed": os.access(command["path"], modes[command["mode"]])}
    if op == "swap":
        return {"done": swap(command["name"], command["spare"], command["link"])}
    if op == "restore":
        return {"done": restore(command["name"], command["spare"])}
    if op == "entries":
        try:
            return {"entries": sorted(os.listdir(command["path"]))}
        except OSError as error:
            return {"error": error.strerror}
    return {"error": f"unknown op {op!r}"}


def serve() -> None:
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(_answer(json.loads(line))), flush=True)


def race(name: str, spare: str, link: str, seconds: float, count: int) -> None:
    stop = threading.Event()

    def watch_stdin() -> None:
        sys.stdin.read()  # returns when the test closes the pipe
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    deadline = time.monotonic() + seconds
    rounds = planted = restored = 0
    while rounds < count and time.monotonic() < deadline and not stop.is_set():
        planted += swap(name, spare, link)
        time.sleep(0.001)  # the link stands most of the time, the real entry in between
        restored += restore(name, spare)
        time.sleep(0.0001)
        rounds += 1
    restore(name, spare)
    print(json.dumps({"rounds": rounds, "planted": planted, "restored": restored}), flush=True)


def main(argv: list[str]) -> None:
    if argv[0] == "serve":
        serve()
    elif argv[0] == "race":
        name, spare, link, seconds, count = argv[1:6]
        race(name, spare, link, float(seconds), int(count))
    else:
        raise SystemExit(f"unknown mode {argv[0]!r}")


if __name__ == "__main__":
    main(sys.argv[1:])

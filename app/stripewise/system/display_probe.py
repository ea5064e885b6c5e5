"""What model/display_choice.py decides from: whether $DISPLAY and $WAYLAND_DISPLAY answer a
connection, whether we run on a Linux virtual console, and whether its framebuffer or DRM device
opens. Connecting is the test that counts: a set variable names a server that may be gone (a
closed `ssh -X` session leaves DISPLAY=localhost:10.0 behind).
"""

from __future__ import annotations

import os
import re
import socket
import struct
from collections.abc import Mapping
from enum import Enum
from pathlib import Path

from stripewise.model.display_choice import Device, Surroundings

CONNECT_TIMEOUT_S = 1.0
X_TCP_BASE_PORT = 6000
X_SOCKET_DIR = "/tmp/.X11-unix"
FRAMEBUFFER = Path("/dev/fb0")
DRM_CARD = Path("/dev/dri/card0")
_MIT_COOKIE = b"MIT-MAGIC-COOKIE-1"
_SUCCESS, _REFUSALS = b"\x01", (b"\x00", b"\x02")  # the setup reply's first byte
_X_DISPLAY = re.compile(r"^(?P<host>[^:]*):(?P<number>\d+)(?:\.\d+)?$")
_VIRTUAL_CONSOLE = re.compile(r"^/dev/tty\d+$")


class XDisplay(Enum):
    ANSWERS = "answers"  # and takes this user
    REFUSES = "refuses"  # answers, but takes no cookie this user has
    SILENT = "silent"  # nothing listens (or no DISPLAY)


def probe(environ: Mapping[str, str] | None = None) -> Surroundings:
    environ = os.environ if environ is None else environ
    x_state = x_display_state(environ.get("DISPLAY", ""), xauthority_path(environ))
    return Surroundings(
        x_answers=x_state is XDisplay.ANSWERS,
        x_refuses=x_state is XDisplay.REFUSES,
        wayland_answers=wayland_answers(
            environ.get("WAYLAND_DISPLAY", ""), environ.get("XDG_RUNTIME_DIR", "")
        ),
        virtual_console=virtual_console(),
        framebuffer=device_state(FRAMEBUFFER),
        drm=device_state(DRM_CARD),
    )


def x_display_state(display: str, xauthority: Path | None) -> XDisplay:
    """Whether the X server at `display` (":0", "unix:1", "localhost:10.0") takes this user:
    the connection setup sent as Xlib sends it, with each MIT cookie `xauthority` holds for the
    display's number, then with none (a server that trusts local users), until one is answered
    Success. A server that answers and refuses each would make Qt abort. The cookies go first:
    ssh's X11 forwarding prints "X11 connection rejected because of wrong authentication." on
    the admin's terminal for every attempt without one."""
    match = _X_DISPLAY.match(display)
    if match is None:
        return XDisplay.SILENT
    host, number = match["host"], int(match["number"])
    refused = 0
    cookies = [*_cookies(xauthority, number), b""]
    for cookie in cookies:
        conn = _x_connection(host, number)
        if conn is None:
            return XDisplay.SILENT
        with conn:
            reply = _setup_reply(conn, cookie)
        if reply == _SUCCESS:
            return XDisplay.ANSWERS
        refused += reply in _REFUSALS
    # a reply cut short (a server resetting as its last client left) refuses nothing: Qt tries
    return XDisplay.REFUSES if refused == len(cookies) else XDisplay.ANSWERS


def xauthority_path(environ: Mapping[str, str]) -> Path | None:
    """Where Xlib reads cookies: $XAUTHORITY, else ~/.Xauthority."""
    if environ.get("XAUTHORITY"):
        return Path(environ["XAUTHORITY"])
    return Path(environ["HOME"]) / ".Xauthority" if environ.get("HOME") else None


def _x_connection(host: str, number: int) -> socket.socket | None:
    if host in ("", "unix"):
        # Xlib tries the abstract socket first (servers in another mount namespace), then the file
        for path in (f"\0{X_SOCKET_DIR}/X{number}", f"{X_SOCKET_DIR}/X{number}"):
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.settimeout(CONNECT_TIMEOUT_S)
            try:
                conn.connect(path)
                return conn
            except OSError:
                conn.close()
        return None
    try:
        return socket.create_connection((host, X_TCP_BASE_PORT + number), timeout=CONNECT_TIMEOUT_S)
    except OSError:
        return None


def _setup_reply(conn: socket.socket, cookie: bytes) -> bytes:
    """X11 connection setup (little-endian, protocol 11.0): the reply's first byte, 1 for
    Success, 0 for Failed, 2 for Authenticate; empty when the server said nothing."""
    name = _MIT_COOKIE if cookie else b""
    request = struct.pack("<BxHHHHxx", ord("l"), 11, 0, len(name), len(cookie))
    try:
        conn.sendall(request + _padded(name) + _padded(cookie))
        return conn.recv(1)
    except OSError:
        return b""


def _cookies(xauthority: Path | None, number: int) -> list[bytes]:
    """The MIT-MAGIC-COOKIE-1 entries for display `number` (or any display) in the file."""
    try:
        data = xauthority.read_bytes() if xauthority is not None else b""
    except OSError:
        return []
    cookies, offset = [], 0
    try:
        while offset < len(data):
            (_family,) = struct.unpack_from(">H", data, offset)
            offset += 2
            fields = []
            for _ in range(4):  # address, display number, auth name, auth data
                (length,) = struct.unpack_from(">H", data, offset)
                fields.append(data[offset + 2 : offset + 2 + length])
                offset += 2 + length
            _address, entry_number, name, cookie = fields
            if name == _MIT_COOKIE and entry_number in (b"", str(number).encode()):
                cookies.append(cookie)
    except struct.error:  # a truncated file: the entries read so far
        pass
    return cookies


def _padded(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 4)


def wayland_answers(name: str, runtime_dir: str) -> bool:
    if not name:
        return False
    path = name if name.startswith("/") else str(Path(runtime_dir or "/nonexistent") / name)
    return _unix_answers(path)


def virtual_console() -> str | None:
    """The Linux virtual console on stdin ("/dev/tty2"), not a pseudo-terminal of ssh or a
    terminal emulator: only there is the screen ours to take."""
    try:
        name = os.ttyname(0)
    except OSError:
        return None
    return name if _VIRTUAL_CONSOLE.match(name) else None


def device_state(path: Path) -> Device:
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return Device.ABSENT
    except OSError:
        return Device.NO_ACCESS if path.exists() else Device.ABSENT
    os.close(descriptor)
    return Device.USABLE


def _unix_answers(path: str) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(CONNECT_TIMEOUT_S)
        try:
            conn.connect(path)
        except OSError:
            return False
        return True

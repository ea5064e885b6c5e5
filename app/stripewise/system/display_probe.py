"""What model/display_choice.py decides from: whether $DISPLAY and $WAYLAND_DISPLAY answer a
connection, whether we run on a Linux virtual console, and whether its framebuffer or DRM device
opens. Connecting is the test that counts: a set variable names a server that may be gone (a
closed `ssh -X` session leaves DISPLAY=localhost:10.0 behind).
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from pathlib import Path

from stripewise.model.display_choice import Device, Surroundings

CONNECT_TIMEOUT_S = 1.0
X_TCP_BASE_PORT = 6000
X_SOCKET_DIR = "/tmp/.X11-unix"
FRAMEBUFFER = Path("/dev/fb0")
DRM_CARD = Path("/dev/dri/card0")
_X_DISPLAY = re.compile(r"^(?P<host>[^:]*):(?P<number>\d+)(?:\.\d+)?$")
_VIRTUAL_CONSOLE = re.compile(r"^/dev/tty\d+$")


def probe(environ: Mapping[str, str] | None = None) -> Surroundings:
    environ = os.environ if environ is None else environ
    return Surroundings(
        x_answers=x_display_answers(environ.get("DISPLAY", "")),
        wayland_answers=wayland_answers(
            environ.get("WAYLAND_DISPLAY", ""), environ.get("XDG_RUNTIME_DIR", "")
        ),
        virtual_console=virtual_console(),
        framebuffer=device_state(FRAMEBUFFER),
        drm=device_state(DRM_CARD),
    )


def x_display_answers(display: str) -> bool:
    """An X server accepts a connection at `display` (":0", "unix:1", "localhost:10.0")."""
    match = _X_DISPLAY.match(display)
    if match is None:
        return False
    host, number = match["host"], int(match["number"])
    if host in ("", "unix"):
        # Xlib tries the abstract socket first (servers in another mount namespace), then the file
        return any(
            _unix_answers(path)
            for path in (f"\0{X_SOCKET_DIR}/X{number}", f"{X_SOCKET_DIR}/X{number}")
        )
    try:
        with socket.create_connection((host, X_TCP_BASE_PORT + number), timeout=CONNECT_TIMEOUT_S):
            return True
    except OSError:
        return False


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

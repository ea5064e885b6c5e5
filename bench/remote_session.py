"""`stripewise --remote` as an admin meets it: from the command's start to the first frame a
VNC client sees with the window on it (target < 3 s).

The command runs as typed (its own process, no display, an empty history); as soon as it prints
the port and the password, a real VNC client (vncdotool) logs in and asks for whole frames until
one shows the window: most of the screen no longer Xvnc's black root. The clock runs from just
before the process starts to the arrival of that frame.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

FRAME_TIMEOUT_S = 30.0
PAINTED_SHARE = 0.5  # of the screen's pixels no longer black: the window is on it
_PORT = re.compile(r"127\.0\.0\.1:(\d+)")
_PASSWORD = re.compile(r"password:\s+(\S+)")


def window_on_screen(image: Any) -> bool:
    """Most of the frame painted: Xvnc's empty root is black."""
    histogram = image.convert("L").histogram()
    width, height = image.size
    return sum(histogram[16:]) >= PAINTED_SHARE * width * height


def remote_figures(runs: int) -> list[tuple[str, list[float], float | None]]:
    """(name, seconds, target) of the figures: starts with a history, and the very first."""
    if shutil.which("Xvnc") is None or shutil.which("vncpasswd") is None:
        print("TigerVNC is not installed: skipping the remote figure", file=sys.stderr)
        return []
    seconds, first = measure(runs)
    return [
        ("--remote: start to the VNC client's first frame", seconds, 3),
        ("  the same, the very first start (history made)", [first], None),
    ]


def measure(runs: int) -> tuple[list[float], float]:
    """Seconds from `stripewise --remote` started to the first frame showing its window: of
    `runs` starts with a history already made (the first start, which makes it, and warms the
    page cache, is dropped), and of that first start."""
    from vncdotool import api

    with tempfile.TemporaryDirectory(prefix="stripewise-bench-remote-") as scratch:
        try:
            first = _one_start(api, scratch)
            return [_one_start(api, scratch) for _ in range(runs)], first
        finally:
            api.shutdown()  # the client's reactor thread, started once for all runs


def _one_start(api: Any, scratch: str) -> float:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.pop("QT_QPA_PLATFORM", None)
    env |= {"XDG_CONFIG_HOME": scratch, "XDG_DATA_HOME": scratch, "XDG_STATE_HOME": scratch}
    argv = [sys.executable, "-m", "stripewise", "--remote", "--window-size", "1024x768"]
    began = time.monotonic()
    process = subprocess.Popen(
        [*argv, "--db", f"sqlite:///{scratch}/history.db"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        port, password = _connection(process)
        client = api.connect(f"127.0.0.1::{port}", password=password, timeout=10)
        try:
            while time.monotonic() < began + FRAME_TIMEOUT_S:
                client.refreshScreen()
                if window_on_screen(client.screen):
                    return time.monotonic() - began
            raise RuntimeError("the window did not reach the VNC client within 30 s")
        finally:
            client.disconnect()
    finally:
        process.send_signal(signal.SIGHUP)  # as the end of the ssh session would
        process.wait(timeout=30)


def _connection(process: subprocess.Popen[str]) -> tuple[int, str]:
    assert process.stdout is not None
    port, password = None, None
    for line in process.stdout:
        port = port or _match(_PORT, line)
        password = password or _match(_PASSWORD, line)
        if port and password:
            return int(port), password
    raise RuntimeError(f"stripewise --remote exited with {process.wait()} before its password")


def _match(pattern: re.Pattern[str], line: str) -> str | None:
    found = pattern.search(line)
    return found[1] if found else None

"""`ssh -X`: the window opened through a real X11 tunnel (sshd on loopback with keys this test
makes, X11Forwarding yes) onto a real X server (Xvfb), and read back from that display."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fixtures.sshd import SshServer
from tests.fixtures.xvfb import XServer, grab_screen, painted_share, top_windows

pytestmark = pytest.mark.xvfb
WINDOW_TIMEOUT_S = 60.0
STRIPEWISE = Path(sys.executable).with_name("stripewise")


def _window_geometry(server: XServer) -> tuple[int, int, int, int] | None:
    """(x, y, width, height) of Stripewise's largest window on `server` (the main window; a
    popup has the same class), once mapped."""
    found = []
    for line in top_windows(server):
        if '"Stripewise": ("stripewise" "stripewise")' in line:
            size, x, y = line.split()[-2].replace("+", " ").split()
            width, height = size.split("x")
            found.append((int(x), int(y), int(width), int(height)))
    return max(found, key=lambda g: g[2] * g[3], default=None)


def test_the_window_opens_through_ssh_x_and_shows_on_the_local_display(
    xvfb: XServer, sshd_x11: SshServer, tmp_path: Path
) -> None:
    # The server's side: a shell of its own (sshd resets the environment), no QT_QPA_PLATFORM:
    # the window must find the forwarded display (localhost:10.0, TCP) by itself
    remote = shlex.join(
        [
            "env", "-u", "QT_QPA_PLATFORM",
            f"XDG_CONFIG_HOME={tmp_path}", f"XDG_DATA_HOME={tmp_path}",
            # the code under test, as the test's own (sshd passes no environment on)
            f"PYTHONPATH={os.environ.get('PYTHONPATH', '')}",
            str(STRIPEWISE), "--db", f"sqlite:///{tmp_path}/history.db",
            "--view", "hardware", "--window-size", "800x600",
        ]
    )  # fmt: skip
    ssh = subprocess.Popen(
        [
            "ssh",
            "-F",
            str(sshd_x11.client_config),
            "-X",
            "-p",
            str(sshd_x11.port),
            "root@127.0.0.1",
            remote,
        ],
        env=xvfb.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + WINDOW_TIMEOUT_S
        geometry = None
        while (geometry is None or geometry[2:] != (800, 600)) and time.monotonic() < deadline:
            assert ssh.poll() is None, ssh.communicate()[0]
            geometry = _window_geometry(xvfb)
            time.sleep(0.2)
        assert geometry is not None, "the window never reached the display"
        assert geometry[2:] == (800, 600)
        # the window painted, read back from the X server
        shot = tmp_path / "through-ssh-x.png"
        while time.monotonic() < deadline:
            if painted_share(grab_screen(xvfb, shot), geometry) > 0.9:
                break
            time.sleep(0.3)
        assert painted_share(shot, geometry) > 0.9
        outside = (0, 700, 1024, 68)  # below the window: the root stays black
        assert painted_share(shot, outside) < 0.05
    finally:
        ssh.terminate()  # the session ends: the tunnel closes and the window with it
        output = ssh.communicate(timeout=30)[0].decode(errors="replace")
    deadline = time.monotonic() + WINDOW_TIMEOUT_S
    while _window_geometry(xvfb) is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _window_geometry(xvfb) is None, output
    assert "Traceback" not in output
    # ssh's own line for an X connection without the cookie: the probe offers the cookie first
    assert "X11 connection rejected" not in output

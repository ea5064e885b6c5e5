"""A history that cannot be opened at start does not hold the program hostage. Over VNC
(`--remote`) the refusal is said on the terminal and the session ends by itself, taking Xvnc
and its folder; on a desktop the refusal's box waits for a click, and Ctrl+C, SIGTERM or a
hang-up still end the program (the box has no parent: closing the window left it running)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.fixtures.fio_servers import require_tool
from tests.fixtures.xvfb import XServer, top_windows

pytestmark = pytest.mark.xvfb
STRIPEWISE = Path(sys.executable).with_name("stripewise")
WAIT_S = 60.0
UNREADABLE_SQLITE = os.urandom(8192)


def _databases(tmp_path: Path) -> dict[str, str]:
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(UNREADABLE_SQLITE)
    return {
        "server away": "postgresql://stripewise@127.0.0.1:1/history",  # nothing listens on 1
        "missing folder": f"sqlite:///{tmp_path}/nonexistent/dir/x.db",
        "corrupt file": f"sqlite:///{corrupt}",
    }


def _env(tmp_path: Path) -> dict[str, str]:
    hidden = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "XAUTHORITY")
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    return env | {"XDG_CONFIG_HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)}


def _xvnc_in(folder: Path) -> list[psutil.Process]:
    """Xvnc servers whose password file is in `folder`."""
    found = []
    for process in psutil.process_iter(["name", "cmdline"]):
        command = process.info["cmdline"] or []
        if process.info["name"] == "Xvnc" and any(str(folder) in part for part in command):
            found.append(process)
    return found


@pytest.mark.parametrize("case", ["server away", "missing folder", "corrupt file"])
def test_over_vnc_the_refusal_is_said_and_the_session_ends(case: str, tmp_path: Path) -> None:
    require_tool("Xvnc", "tigervnc-standalone-server")
    require_tool("vncpasswd", "tigervnc-tools")
    url = _databases(tmp_path)[case]
    scratch = tmp_path / "tmp"  # the session's folder is made here (TMPDIR)
    scratch.mkdir()
    process = subprocess.Popen(
        [str(STRIPEWISE), "--remote", "--window-size", "800x600", "--db", url],
        env=_env(tmp_path) | {"TMPDIR": str(scratch)}, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:  # the server away, it may all be over before Xvnc could be seen running
        out, err = process.communicate(timeout=WAIT_S)  # no click, no signal: it ends
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 2, err
    assert "password:" in out  # the session had started
    assert err.startswith("stripewise: error: "), err
    assert len(err.splitlines()) == 1, err
    deadline = time.monotonic() + WAIT_S
    while _xvnc_in(scratch) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _xvnc_in(scratch), "Xvnc outlived the session"
    assert list(scratch.iterdir()) == [], "the session's folder was left"
    if case == "corrupt file":
        assert "stripewise db move-aside" in err
        assert (tmp_path / "corrupt.db").read_bytes() == UNREADABLE_SQLITE


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_ends_the_program_while_the_refusal_box_waits(
    number: signal.Signals, xvfb: XServer, tmp_path: Path
) -> None:
    url = _databases(tmp_path)["corrupt file"]
    process = subprocess.Popen(
        [str(STRIPEWISE), "--db", url], env=_env(tmp_path) | xvfb.env(),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + WAIT_S
        while not any('"History database unreadable' in w for w in top_windows(xvfb)):
            assert process.poll() is None and time.monotonic() < deadline, "no box came"
            time.sleep(0.2)
        process.send_signal(number)
        _, err = process.communicate(timeout=WAIT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 2, err  # the history was refused: said, and exit 2
    assert "is not a readable SQLite database" in err
    assert "Traceback" not in err
    assert not any("stripewise" in w for w in top_windows(xvfb))
    assert (tmp_path / "corrupt.db").read_bytes() == UNREADABLE_SQLITE

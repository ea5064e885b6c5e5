"""Ctrl+C or SIGTERM in the terminal close Stripewise cleanly, with its state saved."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _catches(pid: int, number: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (number - 1) & 1)
    return False


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_signal_closes_the_window_and_saves_state(
    isolated_home: Path, db_url: str, number: int
) -> None:
    app = subprocess.Popen(
        [sys.executable, "-m", "stripewise", "--db", db_url, "--view", "benchmark"],
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        # SIGINT is always caught (KeyboardInterrupt); SIGTERM is caught once our handlers are in.
        while not _catches(app.pid, signal.SIGTERM):
            assert app.poll() is None, app.stderr.read() if app.stderr else ""
            assert time.monotonic() < deadline, "the GUI never installed its signal handlers"
            time.sleep(0.05)
        app.send_signal(number)
        assert app.wait(timeout=30) == 0
    finally:
        if app.poll() is None:
            app.kill()
    settings = isolated_home / ".config" / "stripewise" / "stripewise.ini"
    assert "view=benchmark" in settings.read_text()

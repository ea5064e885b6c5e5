"""`stripewise doctor` on the display situation: ok where a window opens, warn with the ways
that work where none can (exit 0: every command still runs), on the real environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.xvfb import XServer


def _doctor(env: dict[str, str], db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stripewise", "--db", f"sqlite:///{db}", "doctor", "--json"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _qt(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    return next(c for c in json.loads(done.stdout)["checks"] if c["name"] == "qt")


def test_a_server_without_a_desktop_is_a_warning_with_the_way_to_proceed(tmp_path: Path) -> None:
    hidden = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    done = _doctor(env, tmp_path / "h.db")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["ok"] is True
    qt = _qt(done)
    assert qt["status"] == "warn"
    summary = str(qt["summary"])
    assert "DISPLAY and WAYLAND_DISPLAY are unset" in summary
    assert "ssh -X" in summary and "stripewise --remote" in summary
    detail = qt["detail"]
    assert isinstance(detail, dict)
    assert detail["platform"] == "offscreen"  # Qt itself was started, offscreen
    assert detail["display"]["kind"] == "none"


@pytest.mark.xvfb
def test_an_answering_display_is_ok(xvfb: XServer, tmp_path: Path) -> None:
    done = _doctor(xvfb.env(), tmp_path / "h.db")
    assert done.returncode == 0, done.stdout + done.stderr
    qt = _qt(done)
    assert qt["status"] == "ok"
    assert qt["detail"]["platform"] == "xcb"  # type: ignore[index]
    assert f"X display {xvfb.display} answers" in qt["detail"]["display"]["found"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("platform", "words"),
    [
        ("xcb", "QT_QPA_PLATFORM=xcb but DISPLAY is unset"),
        ("vnc", "QT_QPA_PLATFORM=vnc: Qt's own VNC server has no password"),
        ("linuxfb", "QT_QPA_PLATFORM=linuxfb but no /dev/fb0 or /dev/dri/card0"),
    ],
)
def test_a_qt_platform_that_cannot_or_must_not_open_is_a_warning(
    tmp_path: Path, platform: str, words: str
) -> None:
    """The user's QT_QPA_PLATFORM stops the window, not the commands: warn (exit 0) with the
    ways that work; never `ok` for Qt's password-less VNC server or a console it lacks."""
    hidden = ("DISPLAY", "WAYLAND_DISPLAY")
    env = {k: v for k, v in os.environ.items() if k not in hidden} | {"QT_QPA_PLATFORM": platform}
    done = _doctor(env, tmp_path / "h.db")
    assert done.returncode == 0, done.stdout + done.stderr
    qt = _qt(done)
    assert qt["status"] == "warn", qt
    assert words in str(qt["summary"]) and "stripewise --remote" in str(qt["summary"])

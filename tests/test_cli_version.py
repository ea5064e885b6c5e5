"""`stripewise --version` as an admin quotes it in a bug report: real process, real fio."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import PySide6
import pytest
from PySide6.QtCore import qVersion

from stripewise import __version__


def version_run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stripewise", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def without_display() -> dict[str, str]:
    """A QGuiApplication could not start here: a --version that made one would fail."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return env | {"QT_QPA_PLATFORM": "xcb"}


def test_version_names_stripewise_qt_pyside_python_and_fio() -> None:
    done = version_run(without_display())
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0] == f"stripewise {__version__}"  # unchanged: scripts read this line
    assert lines[1] == f"Qt {qVersion()}"
    assert lines[2] == f"PySide6 {PySide6.__version__}"
    python = sys.version.split()[0]
    assert lines[3] == f"Python {python} ({platform.python_implementation()})"
    fio = shutil.which("fio")
    if fio is None:
        assert lines[4] == "fio: not installed"
    else:
        own = subprocess.run([fio, "--version"], capture_output=True, text=True, check=True)
        assert lines[4] == own.stdout.strip() and lines[4].startswith("fio-")
    assert len(lines) == 5


def test_version_without_fio_says_so(tmp_path: Path) -> None:
    if any(Path(d, "fio").exists() for d in ("/usr/sbin", "/sbin", "/usr/local/sbin")):
        pytest.skip("fio in an sbin directory is found whatever PATH says")
    done = version_run(without_display() | {"PATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "fio: not installed"


def test_version_does_not_wait_for_a_fio_that_hangs(tmp_path: Path) -> None:
    """A fio that never answers (a hung NFS mount on PATH) costs the probe's timeout, no more:
    `--version` still ends, and says which fio did not answer."""
    hung = tmp_path / "fio"
    hung.write_text("#!/bin/sh\nexec sleep 600\n")
    hung.chmod(0o755)
    done = version_run(without_display() | {"PATH": f"{tmp_path}:{os.environ['PATH']}"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"fio: {hung} did not answer --version within 2 s"


def test_version_is_in_the_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "stripewise", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert "--version" in done.stdout and "PySide6" in done.stdout

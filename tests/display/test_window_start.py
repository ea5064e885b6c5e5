"""Where `stripewise` opens its window, decided on the real environment variables, sockets and
devices of this machine: a real X server answers, a stale DISPLAY does not, a server without
any display gets one line and exit 2 instead of Qt's abort (SIGABRT, exit 134)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from stripewise.model.display_choice import Device
from stripewise.system import display_probe
from tests.fixtures.xvfb import XServer

STRIPEWISE = [sys.executable, "-m", "stripewise"]


def _without_display() -> dict[str, str]:
    hidden = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    return {k: v for k, v in os.environ.items() if k not in hidden}


def _unused_display() -> str:
    number = next(n for n in range(500, 600) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    return f":{number}"


def test_without_any_display_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [*STRIPEWISE, "--db", f"sqlite:///{tmp_path}/h.db"],
        env=_without_display(),
        stdin=subprocess.DEVNULL,  # not a virtual console
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("stripewise: error: no window can open here (")
    assert "DISPLAY and WAYLAND_DISPLAY are unset" in lines[0]
    assert "ssh -X" in lines[0] and "stripewise --remote" in lines[0]
    assert done.stdout == ""


def test_a_display_that_is_gone_is_named(tmp_path: Path) -> None:
    display = _unused_display()
    done = subprocess.run(
        [*STRIPEWISE, "--db", f"sqlite:///{tmp_path}/h.db"],
        env=_without_display() | {"DISPLAY": display},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert f"DISPLAY={display} does not answer" in done.stderr
    assert "Traceback" not in done.stderr and "qt.qpa" not in done.stderr


@pytest.mark.xvfb
def test_a_real_x_server_answers_and_the_window_opens_on_it(xvfb: XServer, tmp_path: Path) -> None:
    def state(display: str) -> display_probe.XDisplay:
        return display_probe.x_display_state(display, xvfb.xauthority)

    assert state(xvfb.display) is display_probe.XDisplay.ANSWERS
    assert state(f"unix{xvfb.display}.0") is display_probe.XDisplay.ANSWERS
    assert state(_unused_display()) is display_probe.XDisplay.SILENT
    assert state("not a display") is display_probe.XDisplay.SILENT
    env = xvfb.env() | {"XDG_CONFIG_HOME": str(tmp_path)}  # no QT_QPA_PLATFORM: chosen
    done = subprocess.run(
        [*STRIPEWISE, "--db", f"sqlite:///{tmp_path}/h.db", "--bench-startup"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("first-frame ")


@pytest.mark.xvfb
def test_a_display_that_refuses_this_user_is_said_not_left_to_qt(
    xvfb: XServer, tmp_path: Path
) -> None:
    """An X server that answers but takes none of this user's cookies (sudo from a desktop,
    ssh -X to a server without xauth): Qt would abort on it."""
    other = tmp_path / "other-cookie"
    other.write_bytes(b"")
    assert display_probe.x_display_state(xvfb.display, other) is display_probe.XDisplay.REFUSES
    assert display_probe.x_display_state(xvfb.display, None) is display_probe.XDisplay.REFUSES
    state = display_probe.x_display_state(xvfb.display, xvfb.xauthority)
    assert state is display_probe.XDisplay.ANSWERS
    done = subprocess.run(
        [*STRIPEWISE, "--db", f"sqlite:///{tmp_path}/h.db"],
        env=xvfb.env() | {"XAUTHORITY": str(other)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert f"DISPLAY={xvfb.display} refuses this user" in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_a_wayland_socket_answers_only_while_someone_listens(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listening:
        listening.bind(str(tmp_path / "wayland-7"))
        listening.listen()
        assert display_probe.wayland_answers("wayland-7", str(tmp_path))
        assert display_probe.wayland_answers(str(tmp_path / "wayland-7"), "")
    assert not display_probe.wayland_answers("wayland-7", str(tmp_path))  # left behind
    assert not display_probe.wayland_answers("", str(tmp_path))


def test_the_devices_of_this_machine_as_they_are() -> None:
    for path in (display_probe.FRAMEBUFFER, display_probe.DRM_CARD):
        state = display_probe.device_state(path)
        assert (state is Device.ABSENT) is (not path.exists())
    assert display_probe.device_state(Path("/dev/null")) is Device.USABLE


def test_a_pseudo_terminal_is_not_a_virtual_console() -> None:
    """An ssh session's terminal: the server's framebuffer is not ours to take from it."""
    controller, terminal = os.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from stripewise.system import display_probe as p; "
             "import os; print(os.ttyname(0), p.virtual_console())"],
            stdin=terminal, capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
    finally:
        os.close(controller)
        os.close(terminal)
    tty, console = done.stdout.split()
    assert tty.startswith("/dev/pts/") and console == "None"


def _open_console() -> Path | None:
    """/dev/tty1 when it opens (root, a machine with virtual consoles)."""
    console = Path("/dev/tty1")
    try:
        console.open("rb").close()
    except OSError:
        return None
    return console


@pytest.mark.skipif(_open_console() is None, reason="no virtual console /dev/tty1 to open")
def test_started_on_a_virtual_console_without_its_devices_it_says_so(tmp_path: Path) -> None:
    """The console branch on this machine's own /dev/tty1: without /dev/fb0 or /dev/dri/card0
    it names the console and what it lacks; with one, the window opens (next test)."""
    if _console_device() is not None:
        pytest.skip("this machine has a framebuffer: the next test opens the window on it")
    with Path("/dev/tty1").open("rb") as console:
        done = subprocess.run(
            [*STRIPEWISE, "--db", f"sqlite:///{tmp_path}/h.db"],
            env=_without_display(),
            stdin=console,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2
    assert "on /dev/tty1, which has no /dev/fb0 or /dev/dri/card0" in done.stderr
    assert len(done.stderr.splitlines()) == 1


def _console_device() -> Path | None:
    for path in (display_probe.FRAMEBUFFER, display_probe.DRM_CARD):
        if display_probe.device_state(path) is Device.USABLE:
            return path
    return None


@pytest.mark.skipif(
    _console_device() is None or not Path("/dev/tty1").exists(),
    reason="this machine has no usable /dev/fb0 or /dev/dri/card0 (or no /dev/tty1): "
    "the console's framebuffer path needs one",
)
def test_on_a_virtual_console_the_window_opens_full_screen_on_the_framebuffer(
    tmp_path: Path,
) -> None:
    with Path("/dev/tty1").open("rb") as console:
        done = subprocess.run(
            [*STRIPEWISE, "--db", f"sqlite:///{tmp_path}/h.db", "--bench-startup"],
            env=_without_display() | {"XDG_CONFIG_HOME": str(tmp_path)},
            stdin=console,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("first-frame ")

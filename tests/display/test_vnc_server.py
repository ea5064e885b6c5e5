"""The private Xvnc of `--remote` when it cannot serve: its port taken by another program, on
127.0.0.1 or ::1 (Xvnc's -localhost binds both). The real Xvnc exits, another port is tried, the
error says why, and nothing is left behind (process, folder, descriptor)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from stripewise.system import vnc_server
from tests.fixtures.fio_servers import require_tool


def _taken(family: str) -> socket.socket:
    """A listening socket on loopback, as another program's: 127.0.0.1, or ::1 alone."""
    if family == "127.0.0.1":
        taken = socket.socket()
    else:
        taken = socket.socket(socket.AF_INET6)
        taken.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    taken.bind((family, 0))
    taken.listen()
    return taken


def _require_xvnc() -> None:
    require_tool("Xvnc", "tigervnc-standalone-server")
    require_tool("vncpasswd", "tigervnc-tools")


@pytest.mark.parametrize("family", ["127.0.0.1", "::1"])
def test_a_port_already_taken_is_said_and_nothing_is_left(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _require_xvnc()
    descriptors = len(os.listdir("/proc/self/fd"))
    with _taken(family) as taken:
        port = taken.getsockname()[1]
        monkeypatch.setattr(vnc_server, "_free_port", lambda: port)
        server = vnc_server.launch_vnc_server((800, 600))
        folder = server.folder
        with pytest.raises(vnc_server.VncPortInUse, match=f"^port {port} in use$"):
            server.wait_ready()
        server.stop()
    assert server.process.returncode is not None
    assert not Path(folder).exists()
    assert len(os.listdir("/proc/self/fd")) == descriptors


@pytest.mark.parametrize("family", ["127.0.0.1", "::1"])
def test_a_port_taken_as_xvnc_starts_is_left_for_another(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race between _free_port's look and Xvnc's bind, lost once: the next port serves."""
    _require_xvnc()
    with _taken(family) as taken:
        port = taken.getsockname()[1]
        offered = iter([port])
        free_port = vnc_server._free_port
        monkeypatch.setattr(vnc_server, "_free_port", lambda: next(offered, None) or free_port())
        first = vnc_server.launch_vnc_server((800, 600))
        server = vnc_server.ready_vnc_server(first, (800, 600))
        try:
            assert server is not first and server.port != port
            assert not first.folder.exists() and first.process.returncode is not None
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as viewer:
                assert viewer.recv(12) == b"RFB 003.008\n"
        finally:
            server.stop()
    assert not server.folder.exists()


@pytest.mark.parametrize("family", ["127.0.0.1", "::1"])
def test_a_port_taken_each_time_is_said_in_one_line(family: str, tmp_path: Path) -> None:
    """`stripewise --remote` whose every Xvnc finds its port taken (as
    /tmp/review-console/portbusy.py makes it): one line naming the port, exit 2."""
    _require_xvnc()
    script = (
        "import sys\n"
        "from stripewise.system import vnc_server\n"
        "port, url = int(sys.argv[1]), sys.argv[2]\n"
        "vnc_server._free_port = lambda: port\n"
        "from stripewise.cli.main import main\n"
        "sys.argv = ['stripewise', '--remote', '--db', url]\n"
        "sys.exit(main())\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    with _taken(family) as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-c", script, str(port), f"sqlite:///{tmp_path}/h.db"],
            env=env | {"TMPDIR": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)},
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"stripewise: error: Xvnc could not listen: port {port} in use on loopback by another "
        f"program ({vnc_server.PORT_ATTEMPTS} attempts)\n"
    )
    assert [p.name for p in tmp_path.iterdir()] == []  # no private folder left


def test_a_port_is_free_only_when_free_on_both_loopbacks() -> None:
    """Xvnc's -localhost binds 127.0.0.1 and ::1: a port taken on either is not offered."""
    for family in ("127.0.0.1", "::1"):
        with _taken(family) as taken:
            assert not vnc_server._free_on_loopback(taken.getsockname()[1])
    port = vnc_server._free_port()
    assert vnc_server._free_on_loopback(port)


def test_the_password_file_and_cookie_are_private() -> None:
    _require_xvnc()
    server = vnc_server.launch_vnc_server((800, 600))
    try:
        display = server.wait_ready()
        assert display.startswith(":")
        assert len(server.password) == vnc_server.PASSWORD_LENGTH
        assert set(server.password) <= set(vnc_server.PASSWORD_ALPHABET)
        for path in (server.folder, server.folder / "passwd", server.xauthority):
            assert path.stat().st_uid == os.geteuid()
        assert server.folder.stat().st_mode & 0o077 == 0
        assert (server.folder / "passwd").stat().st_mode & 0o077 == 0
        assert server.xauthority.stat().st_mode & 0o077 == 0
    finally:
        server.stop()
    assert not server.folder.exists()

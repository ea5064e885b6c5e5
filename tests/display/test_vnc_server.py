"""The private Xvnc of `--remote` when it cannot serve: its port taken by another program. The
real Xvnc exits, the error says why, and nothing is left behind (process, folder, descriptor)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from stripewise.system import vnc_server
from tests.fixtures.fio_servers import require_tool


def test_a_port_already_taken_is_said_and_nothing_is_left(monkeypatch: pytest.MonkeyPatch) -> None:
    require_tool("Xvnc", "tigervnc-standalone-server")
    require_tool("vncpasswd", "tigervnc-tools")
    descriptors = len(os.listdir("/proc/self/fd"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        monkeypatch.setattr(vnc_server, "_free_port", lambda: port)
        server = vnc_server.launch_vnc_server((800, 600))
        folder = server.folder
        with pytest.raises(vnc_server.VncUnavailable, match="Xvnc exited with code"):
            server.wait_ready()
        server.stop()
    assert server.process.returncode is not None
    assert not Path(folder).exists()
    assert len(os.listdir("/proc/self/fd")) == descriptors


def test_the_password_file_and_cookie_are_private() -> None:
    require_tool("Xvnc", "tigervnc-standalone-server")
    require_tool("vncpasswd", "tigervnc-tools")
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

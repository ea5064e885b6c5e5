"""`stripewise --remote`: the window on a private VNC server, reached through `ssh -L`.

The server (system/vnc_server.py) listens on loopback only and asks for a password made for
this session; what to type on the desktop is printed here. It stops when the window closes,
and the window closes when the ssh session ends: its SIGHUP, or our parent's death (a
session that leaves us behind still takes the window with it).
"""

from __future__ import annotations

import argparse
import getpass
import os
import signal
import socket

from stripewise.child_death import on_parent_death
from stripewise.cli.errors import CliError
from stripewise.system.vnc_server import (
    VncServer,
    VncUnavailable,
    launch_vnc_server,
    ready_vnc_server,
)

DEFAULT_SIZE = (1280, 800)  # the screen a viewer sees; --window-size chooses another
# what gui/app.py handles by closing the window, and unblocks once its handlers are in place
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
SSH_PORT = 22
_ANCESTORS = 8  # sudo, its shell, su...: the login shell is a few levels up at most
_ENVIRON_MAX = 1 << 20


def run_remote(args: argparse.Namespace) -> int:
    if args.screenshot is not None or args.bench_startup:
        raise CliError("--remote shows the window to a VNC viewer: it takes no --screenshot")
    size = args.window_size or DEFAULT_SIZE
    _hang_up_with_parent()
    # held until the GUI's own handlers take them (gui/app.py): a hang-up while Xvnc or Qt
    # starts then closes the window the normal way, and Xvnc and its folder go with it. (A
    # handler raising here would be lost when it lands in Python code that Qt is running.)
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        server = launch_vnc_server(size)
    except VncUnavailable as exc:
        raise CliError(str(exc)) from None
    try:
        from stripewise.gui.app import run_gui  # Qt loads while Xvnc starts

        server = ready_vnc_server(server, size)  # on another port when its own was taken
        print(how_to_connect(server), flush=True)
        os.environ.pop("WAYLAND_DISPLAY", None)
        os.environ |= {
            "DISPLAY": server.display,
            "XAUTHORITY": str(server.xauthority),
            "QT_QPA_PLATFORM": "xcb",
        }
        args.window_size = size
        return run_gui(args, full_screen=True)
    except VncUnavailable as exc:
        raise CliError(str(exc)) from None
    finally:
        server.stop()


def how_to_connect(server: VncServer) -> str:
    """The lines the admin needs on the desktop: the tunnel, the viewer and the password. The
    tunnel's user is the one who logged in: under `sudo`, SUDO_USER (sshd refuses root's
    password on a stock Debian)."""
    user = os.environ.get("SUDO_USER") or getpass.getuser()
    host, port = ssh_server_address()
    reach = f"{user}@{host}" if port == SSH_PORT else f"-p {port} {user}@{host}"
    return "\n".join(
        [
            f"stripewise: the window is on a private VNC server on 127.0.0.1:{server.port} "
            f"(display {server.display}), for this session only",
            f"  on your desktop:   ssh -N -L {server.port}:127.0.0.1:{server.port} {reach}",
            f"  then a VNC viewer: vncviewer localhost::{server.port}",
            f"  password:          {server.password}",
            "stripewise: the server stops when the window closes or this ssh session ends",
        ]
    )


def ssh_server_address() -> tuple[str, int]:
    """The address and port the admin's ssh reached, from SSH_CONNECTION ("client_ip
    client_port server_ip server_port"): the host name alone may not resolve on the desktop,
    and sshd may listen on another port. Outside ssh, the host name on port 22. An IPv6
    address goes bare: `ssh user@::1` reaches it, and ssh takes `user@[::1]` for a host
    name."""
    words = ssh_connection().split()
    if len(words) == 4 and words[3].isdigit():
        return words[2], int(words[3])
    return socket.gethostname(), SSH_PORT


def ssh_connection() -> str:
    """SSH_CONNECTION of this process, else of the nearest process above it that has it:
    Debian's sudo drops it from the environment (env_reset), while the admin's shell under
    sudo still holds it (root reads any process's environment)."""
    if found := os.environ.get("SSH_CONNECTION"):
        return found
    pid = os.getppid()
    for _level in range(_ANCESTORS):
        if pid <= 1:
            break
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read(_ENVIRON_MAX)
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read(4096)
        except OSError:
            break  # gone, or another user's without root: nothing more to learn
        for entry in environ.split(b"\0"):
            if entry.startswith(b"SSH_CONNECTION="):
                return entry.partition(b"=")[2].decode("ascii", "replace")
        # the parent's pid follows the command's closing parenthesis (which may hold spaces)
        fields = stat.rpartition(b")")[2].split()
        pid = int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 0
    return ""


def _hang_up_with_parent() -> None:
    """SIGHUP when the process that started us dies (the ssh session's shell, even when it was
    killed and sent nothing): the window then closes the normal way and the server stops."""
    on_parent_death(signal.SIGHUP)

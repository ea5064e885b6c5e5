"""A private VNC server for `stripewise --remote`: TigerVNC's Xvnc, reachable on loopback only
(127.0.0.1 and ::1), behind a one-time password, its X display behind a cookie of its own.

Qt's own VNC platform has no authentication: any local user of the server could watch and drive
the window. Xvnc asks for the password (VncAuth) before it shows anything, and its X display
takes only clients holding the cookie, so other local users can neither see nor draw on it.
Everything it needs lies in a private folder (0700) that goes with it.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from stripewise.child_death import dies_with_parent

START_TIMEOUT_S = 15.0
PORT_ATTEMPTS = 3  # Xvnc started on as many ports when another program takes each first
STOP_TIMEOUT_S = 5.0
# VncAuth (DES) uses at most 8 characters: 8 from 56 unambiguous ones is about 46 bits, 150
# years of guessing on average at 10,000 guesses a second (Xvnc answered some hundreds here)
PASSWORD_LENGTH = 8
PASSWORD_ALPHABET = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
_XAUTH_FAMILY_WILD = 0xFFFF  # an Xauthority entry for any host and display number
_BIND_FAILED = re.compile(r"failed to bind socket: .*\((\d+)\)")  # Xvnc's log, any locale


class VncUnavailable(Exception):
    """Xvnc is missing or did not start; the message says what to do."""


class VncPortInUse(VncUnavailable):
    """Another program took the RFB port, on 127.0.0.1 or ::1, before Xvnc could bind it."""

    def __init__(self, port: int) -> None:
        super().__init__(f"port {port} in use")
        self.port = port


@dataclass
class VncServer:
    """Xvnc, launched; `wait_ready` gives its display once it serves (so what the caller does
    meanwhile, such as loading Qt, overlaps its start)."""

    port: int  # the RFB port on 127.0.0.1 and ::1
    password: str
    folder: Path  # private: the password file, the X cookie and Xvnc's log
    process: subprocess.Popen[bytes]
    _display_pipe: int  # where Xvnc writes its display number once it serves
    display: str = ""  # ":3", once ready
    # removes `folder` once our end of its pipe closes, however we end (system/folder_reaper)
    _reaper: subprocess.Popen[bytes] | None = None
    _reaper_pipe: int = -1

    @property
    def xauthority(self) -> Path:
        return self.folder / "Xauthority"

    def wait_ready(self) -> str:
        """The display (":3") once Xvnc serves X clients and greets viewers; VncUnavailable if
        it exits or takes longer than START_TIMEOUT_S."""
        if not self.display:
            try:
                number = self._read_display_number()
            finally:
                self._close_pipe()
            self._wait_answering()
            self.display = f":{number}"
        return self.display

    def stop(self) -> None:
        """Ends Xvnc (its viewers are disconnected) and removes the private folder."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._close_pipe()
        shutil.rmtree(self.folder, ignore_errors=True)
        if self._reaper_pipe >= 0:
            os.close(self._reaper_pipe)  # the reaper finds the folder gone and ends
            self._reaper_pipe = -1
        if self._reaper is not None:
            self._reaper.wait()
            self._reaper = None

    def _close_pipe(self) -> None:
        if self._display_pipe >= 0:
            os.close(self._display_pipe)
            self._display_pipe = -1

    def _read_display_number(self) -> int:
        deadline = time.monotonic() + START_TIMEOUT_S
        received = b""
        while not received.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._display_pipe], [], [], left)[0]:
                raise VncUnavailable(
                    f"Xvnc did not start within {START_TIMEOUT_S:g} s{self._tail()}"
                )
            chunk = os.read(self._display_pipe, 16)
            if not chunk:
                self.process.wait()
                raise self._exited()
            received += chunk
        return int(received)

    def _exited(self) -> VncUnavailable:
        """Why Xvnc exited: its port taken, or its log's last words."""
        found = _BIND_FAILED.search(self._log())
        if found and int(found[1]) == errno.EADDRINUSE:
            return VncPortInUse(self.port)
        return VncUnavailable(f"Xvnc exited with code {self.process.returncode}{self._tail()}")

    def _wait_answering(self) -> None:
        """The RFB port greets ("RFB 003.008"): a viewer may connect now."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise self._exited()
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                    if conn.recv(3) == b"RFB":
                        return
            except OSError:
                time.sleep(0.02)
        raise VncUnavailable(f"Xvnc did not answer on 127.0.0.1:{self.port}{self._tail()}")

    def _log(self) -> str:
        try:
            return (self.folder / "Xvnc.log").read_text(errors="replace")
        except OSError:
            return ""

    def _tail(self) -> str:
        """The log's last line that says something: a fatal error ends on a bare "(EE)"."""
        lines = [line for line in self._log().splitlines() if line.removeprefix("(EE)").strip()]
        return f": {lines[-1]}" if lines else ""


def ready_vnc_server(server: VncServer, size: tuple[int, int]) -> VncServer:
    """`server` once it serves (VncServer.wait_ready); when another program took its port
    between _free_port's look and Xvnc's bind, a new server on another port, PORT_ATTEMPTS in
    all. Those that could not serve are stopped, and so is a new one that fails."""
    taken: list[int] = []
    try:
        while True:
            try:
                server.wait_ready()
                return server
            except VncPortInUse as exc:
                server.stop()
                taken.append(exc.port)
                if len(taken) == PORT_ATTEMPTS:
                    raise VncUnavailable(_ports_in_use(taken)) from None
            server = launch_vnc_server(size)
    except BaseException:
        server.stop()  # stopped already, or a new one the caller never saw
        raise


def _ports_in_use(ports: list[int]) -> str:
    distinct = list(dict.fromkeys(ports))
    which = (
        f"port {distinct[0]}"
        if len(distinct) == 1
        else "ports " + ", ".join(str(port) for port in distinct)
    )
    return (
        f"Xvnc could not listen: {which} in use on loopback by another program "
        f"({len(ports)} attempts)"
    )


def launch_vnc_server(size: tuple[int, int], desktop_name: str = "Stripewise") -> VncServer:
    """Xvnc with a `size` screen on a free loopback port, started (not yet serving: see
    VncServer.wait_ready and ready_vnc_server)."""
    xvnc, vncpasswd = shutil.which("Xvnc"), shutil.which("vncpasswd")
    if xvnc is None or vncpasswd is None:
        missing = "Xvnc" if xvnc is None else "vncpasswd"
        raise VncUnavailable(
            f"{missing} is not installed: --remote needs TigerVNC's Xvnc and vncpasswd "
            "(apt install tigervnc-standalone-server tigervnc-tools)"
        )
    folder = Path(tempfile.mkdtemp(prefix="stripewise-remote-"))  # 0700
    try:
        password = "".join(secrets.choice(PASSWORD_ALPHABET) for _ in range(PASSWORD_LENGTH))
        _write_private(folder / "passwd", _obfuscated(vncpasswd, password))
        _write_private(folder / "Xauthority", _xauthority_entry(secrets.token_bytes(16)))
        port = _free_port()
        read_end, write_end = os.pipe()
        try:
            process = _spawn_xvnc(xvnc, folder, port, size, desktop_name, write_end)
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    server = VncServer(port, password, folder, process, read_end)
    try:
        server._reaper, server._reaper_pipe = _spawn_reaper(folder, process.pid)
    except BaseException:
        server.stop()
        raise
    return server


def _spawn_xvnc(
    xvnc: str, folder: Path, port: int, size: tuple[int, int], desktop_name: str, display_fd: int
) -> subprocess.Popen[bytes]:
    """Xvnc picks a free display number itself and writes it to -displayfd once it serves."""
    options = [
        ("-displayfd", str(display_fd)),
        ("-geometry", f"{size[0]}x{size[1]}"),
        ("-depth", "24"),
        # with -localhost: RFB on loopback only (127.0.0.1 and ::1), reached through `ssh -L`
        ("-interface", "127.0.0.1"),
        ("-rfbport", str(port)),
        ("-rfbauth", str(folder / "passwd")),
        ("-SecurityTypes", "VncAuth"),
        ("-auth", str(folder / "Xauthority")),  # X clients need the cookie
        ("-nolisten", "tcp"),
        ("-desktop", desktop_name),
    ]
    with (folder / "Xvnc.log").open("wb") as log:
        return subprocess.Popen(
            # -UseBlacklist=0: Xvnc's blacklist blocks an address after 5 wrong answers, and
            # every viewer comes from 127.0.0.1 through `ssh -L`: any local user's 5 guesses
            # would lock the admin out, doubling the wait with each further one
            [xvnc, "-localhost", "-UseBlacklist=0", *(word for pair in options for word in pair)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            pass_fds=(display_fd,),
            start_new_session=True,  # the terminal's signals are ours; we stop it ourselves
            preexec_fn=dies_with_parent(signal.SIGTERM),
        )


def _spawn_reaper(folder: Path, xvnc_pid: int) -> tuple[subprocess.Popen[bytes], int]:
    """A process that removes `folder` once we have ended, by SIGKILL too, and Xvnc after us
    (system/folder_reaper.py), and the pipe end it waits on, ours to close."""
    read_end, write_end = os.pipe()  # neither inherited by any other child: close-on-exec
    try:
        reaper = subprocess.Popen(
            [sys.executable, "-I", "-m", "stripewise.system.folder_reaper", str(folder),
             str(xvnc_pid)],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # the ssh session's hang-up is not for it
        )  # fmt: skip
    except OSError as exc:
        os.close(write_end)
        raise VncUnavailable(f"could not start the folder's reaper: {exc.strerror}") from None
    finally:
        os.close(read_end)
    return reaper, write_end


def _obfuscated(vncpasswd: str, password: str) -> bytes:
    """The password file Xvnc reads (`vncpasswd -f`: the password in, the file out)."""
    done = subprocess.run(
        [vncpasswd, "-f"], input=password.encode(), capture_output=True, timeout=10, check=False
    )
    if done.returncode != 0 or not done.stdout:
        raise VncUnavailable(f"vncpasswd failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _xauthority_entry(cookie: bytes) -> bytes:
    """One MIT-MAGIC-COOKIE-1 entry for any display (the number is known only once Xvnc
    chose it): Xvnc loads every cookie of its -auth file, Xlib matches the wildcard entry."""

    def counted(data: bytes) -> bytes:
        return struct.pack(">H", len(data)) + data

    return (
        struct.pack(">H", _XAUTH_FAMILY_WILD)
        + counted(b"")
        + counted(b"")
        + counted(b"MIT-MAGIC-COOKIE-1")
        + counted(cookie)
    )


def _write_private(path: Path, data: bytes) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(data)


def _free_port() -> int:
    """A port the kernel offers on 127.0.0.1 that is free on ::1 too: Xvnc's -localhost
    binds both and exits when either is taken. Another program may still take it before
    Xvnc binds it: ready_vnc_server then tries another."""
    for _ in range(10):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if _free_on_loopback(port):
            break
    return port


def _free_on_loopback(port: int) -> bool:
    """Whether `port` can be bound on 127.0.0.1 and on ::1 (a machine without IPv6 has no
    ::1 to take)."""
    for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                if family == socket.AF_INET6:
                    probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                probe.bind((address, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return False
    return True

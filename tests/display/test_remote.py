"""`stripewise --remote`: the window on TigerVNC's Xvnc, bound to 127.0.0.1, behind a one-time
password. A real VNC client (vncdotool) logs in and takes a screenshot; a wrong password is
refused; the server stops when the window closes, when the ssh session ends and when the
process that started it dies."""

from __future__ import annotations

import getpass
import os
import re
import shlex
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from tests.fixtures.fio_servers import require_tool
from tests.fixtures.sshd import SshServer
from tests.fixtures.xvfb import XServer, painted_share, top_windows

pytestmark = pytest.mark.xvfb
STRIPEWISE = Path(sys.executable).with_name("stripewise")
SIZE = (1024, 768)
WAIT_S = 60.0


@dataclass
class Session:
    process: subprocess.Popen[str]
    port: int
    password: str
    display: str
    said: str  # what it printed for the admin

    def xvnc(self) -> psutil.Process:
        return next(
            p for p in psutil.process_iter(["name", "cmdline"])
            if p.info["name"] == "Xvnc" and str(self.port) in (p.info["cmdline"] or [])
        )  # fmt: skip


def _remote_argv(scratch: Path) -> list[str]:
    return [str(STRIPEWISE), "--remote", "--window-size", f"{SIZE[0]}x{SIZE[1]}",
            "--db", f"sqlite:///{scratch}/history.db"]  # fmt: skip


def _remote_env(scratch: Path) -> dict[str, str]:
    hidden = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "XAUTHORITY")
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    (scratch / "tmp").mkdir(exist_ok=True)  # its temporary folders, to see none is left
    return env | {"XDG_CONFIG_HOME": str(scratch), "XDG_DATA_HOME": str(scratch),
                  "TMPDIR": str(scratch / "tmp")}  # fmt: skip


def _read_session(process: subprocess.Popen[str]) -> Session:
    assert process.stdout is not None
    said = ""
    for line in process.stdout:
        said += line
        if "password:" in said and line.startswith("stripewise: the server stops"):
            break
    found = re.search(r"127\.0\.0\.1:(\d+) \(display (:\d+)\)", said)
    password = re.search(r"password:\s+(\S+)", said)
    assert found and password, said
    return Session(process, int(found[1]), password[1], found[2], said)


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[Session]:
    require_tool("Xvnc", "tigervnc-standalone-server")
    require_tool("vncpasswd", "tigervnc-tools")
    process = subprocess.Popen(
        _remote_argv(tmp_path), env=_remote_env(tmp_path), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        yield _read_session(process)
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=30)


def _vncdo(port: int, password: str, *action: str) -> subprocess.CompletedProcess[str]:
    vncdo = Path(sys.executable).with_name("vncdo")
    if not vncdo.exists():
        pytest.skip("vncdotool is not installed (pip install -e .[test])")
    return subprocess.run(
        [str(vncdo), "-s", f"127.0.0.1::{port}", "-p", password, *action],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def _capture_painted(session: Session, shot: Path) -> float:
    """Screenshots through the VNC client until the window is on them."""
    deadline = time.monotonic() + WAIT_S
    share = 0.0
    while time.monotonic() < deadline:
        done = _vncdo(session.port, session.password, "capture", str(shot))
        assert done.returncode == 0, done.stderr
        share = painted_share(shot)
        if share > 0.9:
            break
        time.sleep(0.3)
    return share


def _gone(session: Session, xvnc: psutil.Process) -> None:
    """Xvnc has ended, its port is closed and its private folder removed."""
    xvnc.wait(timeout=WAIT_S)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", session.port), timeout=2).close()
    starter, arguments = _STARTED[session.port]
    starter.wait(timeout=WAIT_S)  # stripewise removes the folder as it ends
    assert not Path(arguments[arguments.index("-rfbauth") + 1]).parent.exists()


# port -> (the stripewise process that started Xvnc, Xvnc's arguments): read while they live
_STARTED: dict[int, tuple[psutil.Process, list[str]]] = {}


def _remember(session: Session) -> psutil.Process:
    xvnc = session.xvnc()
    parent = xvnc.parent()
    assert parent is not None
    _STARTED[session.port] = (parent, xvnc.cmdline())
    return xvnc


def test_a_vnc_client_logs_in_with_the_password_and_sees_the_window(
    remote: Session, tmp_path: Path
) -> None:
    xvnc = _remember(remote)
    assert f"ssh -N -L {remote.port}:127.0.0.1:{remote.port} " in remote.said
    assert f"vncviewer localhost::{remote.port}" in remote.said
    shot = tmp_path / "through-vnc.png"
    assert _capture_painted(remote, shot) > 0.9
    from PySide6.QtGui import QImage

    assert QImage(str(shot)).size().toTuple() == SIZE
    # it is Stripewise's window that fills the screen: asked of the X server with its cookie
    args = xvnc.cmdline()
    cookie = Path(args[args.index("-auth") + 1])
    windows = top_windows(XServer(remote.display, cookie, SIZE))
    assert any(
        '"Stripewise": ("stripewise" "stripewise")' in w and f"{SIZE[0]}x{SIZE[1]}+0+0" in w
        for w in windows
    ), windows
    # private: the folder 0700, the password file 0600, listening on loopback only, and the X
    # display closed to a client without the cookie
    folder = cookie.parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "passwd").stat().st_mode) == 0o600
    listening = [c.laddr for c in xvnc.net_connections("inet") if c.status == psutil.CONN_LISTEN]
    assert listening and all(address.ip in ("127.0.0.1", "::1") for address in listening)
    no_cookie = XServer(remote.display, tmp_path / "no-cookie", SIZE)
    with pytest.raises(subprocess.CalledProcessError):
        top_windows(no_cookie)


def test_a_wrong_password_is_refused(remote: Session, tmp_path: Path) -> None:
    wrong = "".join(reversed(remote.password))
    refused = _vncdo(remote.port, wrong, "capture", str(tmp_path / "no.png"))
    assert refused.returncode != 0
    assert "Authentication failure" in refused.stderr
    assert not (tmp_path / "no.png").exists()


def test_wrong_passwords_from_another_user_do_not_lock_the_admin_out(
    remote: Session, tmp_path: Path
) -> None:
    """Every viewer comes from 127.0.0.1 (through `ssh -L`, or a local user's own client):
    Xvnc's blacklist, by address, would refuse the right password after 5 wrong ones."""
    wrong = "".join(reversed(remote.password))
    for attempt in range(6):
        refused = _vncdo(remote.port, wrong, "capture", str(tmp_path / f"no-{attempt}.png"))
        assert "Authentication failure" in refused.stderr, refused.stderr
    assert _capture_painted(remote, tmp_path / "admin.png") > 0.9


def test_closing_the_window_stops_the_server(remote: Session, tmp_path: Path) -> None:
    xvnc = _remember(remote)
    assert _capture_painted(remote, tmp_path / "before.png") > 0.9  # the window is up
    remote.process.send_signal(signal.SIGTERM)  # closes the window the normal way
    assert remote.process.wait(timeout=WAIT_S) == 0
    _gone(remote, xvnc)


def test_the_end_of_the_ssh_session_stops_the_server(sshd: SshServer, tmp_path: Path) -> None:
    require_tool("Xvnc", "tigervnc-standalone-server")
    # sshd passes no environment on: the code under test and its folders named
    passed = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "TMPDIR", "PYTHONPATH")
    env_words = [f"{k}={v}" for k, v in _remote_env(tmp_path).items() if k in passed]
    ssh = subprocess.Popen(
        ["ssh", "-F", str(sshd.client_config), "-tt", "-p", str(sshd.port), "root@127.0.0.1",
         "env", *env_words, *_remote_argv(tmp_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        session = _read_session(ssh)
        # the tunnel names the address and port this ssh session reached, not the host name
        tunnel = f"ssh -N -L {session.port}:127.0.0.1:{session.port} -p {sshd.port} root@127.0.0.1"
        assert f"on your desktop:   {tunnel}\n" in session.said
        xvnc = _remember(session)
        assert _capture_painted(session, tmp_path / "over-ssh.png") > 0.9
    finally:
        ssh.kill()  # the client gone: sshd hangs up the session's terminal
        ssh.wait()
    _gone(session, xvnc)


def test_the_death_of_its_parent_stops_the_server(tmp_path: Path) -> None:
    require_tool("Xvnc", "tigervnc-standalone-server")
    # a shell that stays the parent (the command is not its last), killed without a word
    script = " ".join(_remote_argv(tmp_path)) + "; true"
    shell = subprocess.Popen(
        ["sh", "-c", script], env=_remote_env(tmp_path), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    session = _read_session(shell)
    xvnc = _remember(session)
    stripewise = psutil.Process(shell.pid).children()[0]
    shell.kill()
    shell.wait()
    stripewise.wait(timeout=WAIT_S)
    _gone(session, xvnc)


def test_a_killed_stripewise_still_takes_the_server_and_its_folder(
    remote: Session, tmp_path: Path
) -> None:
    """SIGKILL leaves no handler to run: Xvnc goes by its parent-death signal, the folder
    with the password file and the cookie by the reaper started beside it."""
    xvnc = _remember(remote)
    folder = Path(xvnc.cmdline()[xvnc.cmdline().index("-rfbauth") + 1]).parent
    assert folder.is_dir()
    assert _capture_painted(remote, tmp_path / "up.png") > 0.9  # the window is up
    remote.process.kill()
    remote.process.wait(timeout=WAIT_S)
    xvnc.wait(timeout=WAIT_S)

    def reaper_left() -> bool:
        return any(str(folder) in (p.info["cmdline"] or [])
                   for p in psutil.process_iter(["cmdline"]))  # fmt: skip

    deadline = time.monotonic() + WAIT_S
    while (folder.exists() or reaper_left()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not folder.exists()
    assert not reaper_left()  # it has ended too
    assert not any((tmp_path / "tmp").iterdir())  # nor any other folder of its own


def test_without_xvnc_it_says_what_to_install(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "stripewise", *_remote_argv(tmp_path)[1:]],
        env=_remote_env(tmp_path) | {"PATH": str(tmp_path)},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "stripewise: error: Xvnc is not installed: --remote needs TigerVNC's Xvnc and vncpasswd "
        "(apt install tigervnc-standalone-server tigervnc-tools)"
    )


def test_a_hang_up_while_the_window_starts_still_stops_everything(remote: Session) -> None:
    """The signal comes as soon as the password is printed, before the window is built: it is
    held, then closes the window once it exists."""
    xvnc = _remember(remote)
    remote.process.send_signal(signal.SIGHUP)
    assert remote.process.wait(timeout=WAIT_S) == 0
    _gone(remote, xvnc)


def test_the_next_session_fills_the_screen_again(tmp_path: Path) -> None:
    """The window's geometry saved by one session (Xvnc has no window manager to place it)
    does not move the next one off the top of the screen."""
    require_tool("Xvnc", "tigervnc-standalone-server")
    for _session in range(2):
        process = subprocess.Popen(
            _remote_argv(tmp_path), env=_remote_env(tmp_path), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            session = _read_session(process)
            assert _capture_painted(session, tmp_path / "shot.png") > 0.9
            arguments = session.xvnc().cmdline()
            cookie = Path(arguments[arguments.index("-auth") + 1])
            windows = top_windows(XServer(session.display, cookie, SIZE))
            main = [w for w in windows if '"Stripewise": ("stripewise" "stripewise")' in w]
            assert main and f"{SIZE[0]}x{SIZE[1]}+0+0" in main[0], windows
        finally:
            process.send_signal(signal.SIGHUP)
            assert process.wait(timeout=WAIT_S) == 0
    assert (tmp_path / "stripewise" / "stripewise.ini").exists()  # the first one saved it


def test_the_tunnel_names_the_user_who_logged_in_under_sudo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`sudo stripewise --remote`: root's password login is refused by a stock sshd, so the
    tunnel the admin copies names SUDO_USER."""
    from stripewise.cli.remote import how_to_connect
    from stripewise.system.vnc_server import VncServer

    server = VncServer(5901, "pw", tmp_path, subprocess.Popen(["true"]), -1, ":1")
    server.process.wait()
    monkeypatch.setenv("SUDO_USER", "admin")
    assert " admin@" in how_to_connect(server).splitlines()[1]
    monkeypatch.delenv("SUDO_USER")
    assert f" {getpass.getuser()}@" in how_to_connect(server).splitlines()[1]


@pytest.mark.parametrize(
    ("connection", "host", "port"),
    [("192.0.2.7 51234 198.51.100.4 22", "198.51.100.4", "22"),
     ("2001:db8::7 51234 2001:db8::4 2222", "2001:db8::4", "2222")],
)  # fmt: skip
def test_the_tunnel_reaches_the_address_and_port_ssh_reached(
    connection: str, host: str, port: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """SSH_CONNECTION's server address and port, read back by ssh itself (`ssh -G` resolves
    nothing and connects nowhere): what the admin copies reaches the same sshd."""
    from stripewise.cli.remote import how_to_connect
    from stripewise.system.vnc_server import VncServer

    server = VncServer(5901, "pw", tmp_path, subprocess.Popen(["true"]), -1, ":1")
    server.process.wait()
    monkeypatch.setenv("SSH_CONNECTION", connection)
    monkeypatch.setenv("SUDO_USER", "admin")
    line = how_to_connect(server).splitlines()[1]
    words = line.split(":", 1)[1].split()
    assert words[:4] == ["ssh", "-N", "-L", "5901:127.0.0.1:5901"]
    assert ("-p" in words) is (port != "22")
    seen = subprocess.run(
        ["ssh", "-G", *words[4:]], capture_output=True, text=True, timeout=30, check=True
    ).stdout.splitlines()
    assert {f"hostname {host}", f"port {port}", "user admin"} <= set(seen), line


def test_the_reaper_takes_signals_though_it_was_started_with_them_held(tmp_path: Path) -> None:
    """cli/remote.py holds SIGINT, SIGTERM and SIGHUP while Xvnc starts; the reaper started
    then unblocks them, so a plain `kill` ends it."""
    from stripewise.cli.remote import STOP_SIGNALS
    from stripewise.system.vnc_server import _spawn_reaper

    folder = tmp_path / "private"
    folder.mkdir()
    sleeper = subprocess.Popen(["sleep", "30"])
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        reaper, pipe = _spawn_reaper(folder, sleeper.pid)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    try:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:  # unblocked once its interpreter runs our code
            status = Path(f"/proc/{reaper.pid}/status").read_text()
            blocked = int(re.search(r"^SigBlk:\s*(\w+)", status, re.M)[1], 16)  # type: ignore[index]
            if not blocked and "folder_reaper" in " ".join(psutil.Process(reaper.pid).cmdline()):
                break
            time.sleep(0.05)
        reaper.terminate()
        assert reaper.wait(timeout=WAIT_S) == -signal.SIGTERM
        assert folder.is_dir(), "killed before its maker ended: it removed nothing"
    finally:
        os.close(pipe)
        sleeper.kill()
        sleeper.wait()


def test_under_sudo_the_tunnel_still_reaches_the_port_ssh_reached() -> None:
    """Debian's sudo drops SSH_CONNECTION: `sudo stripewise --remote` told the admin port 22
    on the host name, where sshd listened on 2222. The admin's shell above sudo still holds
    it. A real sudo, started by a shell that has it (as the ssh session's would)."""
    connection = "192.0.2.7 51234 198.51.100.4 2222"
    env = {**os.environ, "SSH_CONNECTION": connection}
    dropped = subprocess.run(
        ["sudo", "-n", "-u", "root", "--", "env"], env=env, capture_output=True, text=True
    )
    if dropped.returncode != 0:
        pytest.skip(f"sudo -n does not run here: {dropped.stderr.strip()}")
    if "SSH_CONNECTION=" in dropped.stdout:
        pytest.skip("this sudo keeps SSH_CONNECTION: nothing to read from above it")
    code = "from stripewise.cli.remote import ssh_server_address as a; print(*a())"
    shell = f"sudo -n -u root -- {shlex.quote(sys.executable)} -c {shlex.quote(code)}; true"
    done = subprocess.run(["sh", "-c", shell], env=env, capture_output=True, text=True,
                          timeout=30, check=True)  # fmt: skip
    assert done.stdout.split() == ["198.51.100.4", "2222"], done.stderr

"""A fio server started over ssh, bound to the remote loopback, reached by a port forward.

fio servers have no authentication and run job options such as `exec_prerun` through a
shell as root, so the remote `fio --server` listens on 127.0.0.1 only and this machine
reaches it through `ssh -L` (docs/hosts.md). ssh runs with an argument list, in BatchMode
(never a password prompt) with the admin's own keys and known_hosts.

The remote command keeps fio tied to the ssh session: fio runs in the background while the
shell waits on the session's stdin; when stdin closes (we close it, ssh dies, or the host's
sshd drops a dead connection) the shell ends fio's whole process group. Locally, ssh gets
SIGKILL when Stripewise dies (PR_SET_PDEATHSIG), so a crashed Stripewise leaves no tunnel,
and so no remote fio. Starting and stopping block (up to `timeout_s`): call them off the GUI
thread.
"""

from __future__ import annotations

import contextlib
import os
import queue
import random
import shlex
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import IO

from stripewise.child_death import dies_with_parent
from stripewise.fio.probe import (
    FioServerInfo,
    HostUnreachable,
    ProbeRefused,
    probe_fio_server,
)
from stripewise.model.host_address import HostAddress

__all__ = [
    "SSH_CONFIG_ENV",
    "SshFioServer",
    "SshTunnelError",
    "remote_command",
    "ssh_command",
]

SSH_CONFIG_ENV = "STRIPEWISE_SSH_CONFIG"  # an ssh_config file passed as `ssh -F`
REMOTE_PORTS = range(20000, 61000)  # where the remote fio server's port is picked
REMOTE_PORT_TRIES = 4
_STARTED = "stripewise-fio-started"
_EXITED = "stripewise-fio-exited"
# fio's exit when the port is taken; the text is fio's own (server.c, bind()).
_PORT_TAKEN = "address already in use"

# The remote side always parses one string with the login shell: POSIX sh, every value
# quoted. fd 3 keeps the session's stdin for the watcher, which the shell would otherwise
# replace with /dev/null for a background job. When stdin ends the watcher signals the whole
# process group (sshd makes each session its own): the fio server, the children it forks per
# client and their job workers, and the shells; fio stops its jobs on SIGTERM.
_REMOTE_SCRIPT = f"""\
exec 3<&0
fio --server=ip:127.0.0.1,"$1" </dev/null >/dev/null 3<&- &
pid=$!
echo "{_STARTED} $pid"
(cat <&3 >/dev/null; kill -TERM 0) >/dev/null 2>&1 &
exec 3<&-
wait "$pid"
echo "{_EXITED} $?"
"""


class SshTunnelError(HostUnreachable):
    """The ssh host could not be reached or its fio server not started; one line naming the
    host and, when there is one, the last line ssh printed."""


def remote_command(remote_port: int | str) -> str:
    """The one string ssh hands to the remote shell: start fio on the remote loopback."""
    return " ".join(
        ["sh", "-c", shlex.quote(_REMOTE_SCRIPT), "stripewise-fio", shlex.quote(str(remote_port))]
    )


def ssh_command(
    address: HostAddress,
    local_port: int | None = None,
    remote_port: int | None = None,
    *,
    config_file: Path | None = None,
) -> list[str]:
    """The ssh argument list that starts the remote fio server and forwards
    127.0.0.1:local_port here to 127.0.0.1:remote_port there. Without ports (to show what
    will run, before they are picked) they read LOCAL_PORT and REMOTE_PORT."""
    if address.kind != "ssh":
        raise ValueError(f"{address.label} is not an ssh host")
    local = "LOCAL_PORT" if local_port is None else str(local_port)
    remote = "REMOTE_PORT" if remote_port is None else str(remote_port)
    config = config_file if config_file is not None else _config_from_environment()
    command = ["ssh"]
    if config is not None:
        command += ["-F", str(config)]
    command += [
        "-o", "BatchMode=yes",
        "-o", "ExitOnForwardFailure=yes",
        "-o", "ServerAliveInterval=5",
        "-o", "ServerAliveCountMax=3",
        "-T",
        "-p", str(address.port),
    ]  # fmt: skip
    if address.user:
        command += ["-l", address.user]
    command += ["-L", f"127.0.0.1:{local}:127.0.0.1:{remote}"]
    command += ["--", address.host, remote_command(remote)]  # after "--": never an option
    return command


def _config_from_environment() -> Path | None:
    value = os.environ.get(SSH_CONFIG_ENV, "").strip()
    return Path(value) if value else None


class SshFioServer:
    """`with SshFioServer(address) as endpoint:` → endpoint is `HostAddress("fio",
    "127.0.0.1", local_port)`, a fio server started on the ssh host; stopped on exit."""

    def __init__(
        self,
        address: HostAddress,
        *,
        timeout_s: float = 20.0,
        config_file: Path | None = None,
    ) -> None:
        if address.kind != "ssh":
            raise ValueError(f"{address.label} is not an ssh host")
        self.address = address
        self.timeout_s = timeout_s
        self.config_file = config_file
        self.command: list[str] = []
        self.remote_port: int | None = None  # the remote fio server's, once started
        self.server_info: FioServerInfo | None = None
        self._process: subprocess.Popen[str] | None = None
        self._stdout: queue.Queue[str | None] = queue.Queue()
        self._stderr: deque[str | None] = deque(maxlen=20)
        self._readers: list[threading.Thread] = []

    def __enter__(self) -> HostAddress:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        """The local ssh process, while it runs."""
        return self._process.pid if self._process is not None else None

    def start(self) -> HostAddress:
        """Start ssh and the remote fio server; return the local end of the forward."""
        deadline = time.monotonic() + self.timeout_s
        for remote_port in random.sample(REMOTE_PORTS, REMOTE_PORT_TRIES):
            local_port = _free_local_port()
            try:
                return self._start_once(local_port, remote_port, deadline)
            except _RemotePortTaken:
                self.stop()
        raise SshTunnelError(
            f"{self.address.label}: {REMOTE_PORT_TRIES} remote ports tried, all taken"
        )

    def stop(self) -> None:
        """Close the session's stdin (the remote shell then kills fio), wait for ssh to end;
        SIGTERM, then SIGKILL if it does not."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(sig)
            try:
                process.wait(timeout=5)
                break
            except subprocess.TimeoutExpired:
                continue
        for reader in self._readers:
            reader.join(timeout=2)
        self._readers = []

    # -- internals ---------------------------------------------------------------------

    def _start_once(self, local_port: int, remote_port: int, deadline: float) -> HostAddress:
        self.command = ssh_command(
            self.address, local_port, remote_port, config_file=self.config_file
        )
        self.remote_port = remote_port
        self._stdout = queue.Queue()
        self._stderr.clear()
        try:
            self._process = _SPAWNER.submit(_spawn, self.command).result()
        except FileNotFoundError:
            raise SshTunnelError(
                f"{self.address.label}: ssh is not installed here (Debian package: openssh-client)"
            ) from None
        assert self._process.stdout is not None and self._process.stderr is not None
        self._readers = [
            _reader(self._process.stdout, self._stdout.put, "ssh-stdout"),
            _reader(self._process.stderr, self._stderr.append, "ssh-stderr"),
        ]
        try:
            self._wait_started(deadline)
            self.server_info = self._wait_forward(local_port, deadline)
        except BaseException:
            self.stop()
            raise
        return HostAddress("fio", "127.0.0.1", local_port)

    def _wait_started(self, deadline: float) -> None:
        """Until the remote shell says fio started (or ssh or fio ended first)."""
        while True:
            line = self._next_line(deadline)
            if line is None:
                raise self._failure("ssh ended before the remote fio server started")
            if line.startswith(_STARTED):
                return
            if line.startswith(_EXITED):
                raise self._fio_exited(line)

    def _wait_forward(self, local_port: int, deadline: float) -> FioServerInfo:
        """Probe through the forward until the remote fio answers (it binds a moment after
        it starts; meanwhile ssh accepts and drops our connections)."""
        refused_since: float | None = None
        while True:
            self._raise_if_fio_exited()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._failure("the remote fio server did not answer through the forward")
            try:
                return probe_fio_server(
                    "127.0.0.1", local_port, timeout_s=min(remaining, 2.0), search_versions=False
                )
            except ProbeRefused:
                # Fio not yet listening, or one of another protocol version: after a second
                # of that, look for the version (a mismatch is an answer, not a failure).
                refused_since = refused_since or time.monotonic()
                if time.monotonic() - refused_since > 1.0:
                    with contextlib.suppress(ProbeRefused):
                        return probe_fio_server(
                            "127.0.0.1", local_port, timeout_s=max(0.5, min(remaining, 5.0))
                        )
            except HostUnreachable:
                if self._process is None or self._process.poll() is not None:
                    raise self._failure("ssh ended before the forward answered") from None
            time.sleep(0.1)

    def _raise_if_fio_exited(self) -> None:
        with contextlib.suppress(queue.Empty):
            while True:
                line = self._stdout.get_nowait()
                if line is None:
                    raise self._failure("ssh ended before the forward answered")
                if line.startswith(_EXITED):
                    raise self._fio_exited(line)

    def _next_line(self, deadline: float) -> str | None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise self._failure("no answer from ssh in time")
        try:
            return self._stdout.get(timeout=remaining)
        except queue.Empty:
            raise self._failure("no answer from ssh in time") from None

    def _fio_exited(self, line: str) -> Exception:
        status = line[len(_EXITED) :].strip()
        time.sleep(0.1)  # let fio's last stderr line arrive
        said = " ".join(line for line in self._stderr if line).lower()
        if _PORT_TAKEN in said:
            return _RemotePortTaken()
        if status == "127":
            return self._failure("fio is not installed on the remote host")
        return self._failure(f"the remote fio server exited with status {status}")

    def _failure(self, what: str) -> SshTunnelError:
        process = self._process
        if process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=0.5)  # ssh's last words arrive as it exits
                for reader in self._readers:
                    reader.join(timeout=1.0)
        last = next((line for line in reversed(self._stderr) if line and line.strip()), "")
        last = last.strip().removeprefix("ssh: ")
        said = f" (ssh: {last})" if last else ""
        return SshTunnelError(f"{self.address.label}: {what}{said}")


class _RemotePortTaken(Exception):
    """The remote fio could not bind its port: another one is tried."""


def _free_local_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# PR_SET_PDEATHSIG fires when the *thread* that forked the child ends, not the process: ssh is
# therefore always started from this one thread, which lives as long as the program, so a
# tunnel opened by a short-lived worker thread is not killed when that worker finishes.
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ssh-spawner")


def _spawn(command: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a terminal's Ctrl-C is ours to handle, not ssh's
        preexec_fn=dies_with_parent(signal.SIGKILL),
    )


def _reader(stream: IO[str], sink: Callable[[str | None], object], name: str) -> threading.Thread:
    """A daemon thread pumping lines of ssh's output into `sink`; None marks the end."""

    def pump() -> None:
        try:
            for line in stream:
                sink(line.rstrip("\n"))
        except (OSError, ValueError):
            pass
        finally:
            sink(None)

    thread = threading.Thread(target=pump, name=name, daemon=True)
    thread.start()
    return thread

"""SshFioServer against a real sshd on loopback with keys the test makes: the remote fio
listens on the remote loopback only, is reached through the forward, and nothing is left
running afterwards, even when Stripewise itself is killed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from stripewise.fio.probe import local_fio_version, probe_fio_server
from stripewise.hosts import ssh_tunnel
from stripewise.hosts.checks import check_host
from stripewise.hosts.ssh_tunnel import SshFioServer, SshTunnelError, remote_command, ssh_command
from stripewise.model.host_address import HostAddress, parse_host
from tests.fixtures.fio_servers import fio_processes, free_port
from tests.fixtures.sshd import SshServer

REPO = Path(__file__).resolve().parents[2]


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
    except OSError:
        return []


def _serving(port: int | None) -> set[int]:
    """fio processes of the server on that port: the server, the children it forks per client
    and their job workers (fork without exec: same command line). Other tests running at the
    same time have fio servers of their own, so the port tells ours apart."""
    assert port is not None
    flag = f"--server=ip:127.0.0.1,{port}"
    return {pid for pid in fio_processes() if flag in _cmdline(pid)}


def _wait_gone(find: Callable[[], set[int]], timeout_s: float = 10.0) -> set[int]:
    """What `find()` still returns after waiting up to timeout_s for it to be empty."""
    deadline = time.monotonic() + timeout_s
    while (alive := find()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def test_ssh_command_is_an_argument_list_in_batch_mode() -> None:
    address = parse_host("ssh://admin@storage-7:2222")
    command = ssh_command(address, 40001, 25000, config_file=Path("/etc/stripewise/ssh"))
    assert command[:3] == ["ssh", "-F", "/etc/stripewise/ssh"]
    assert "BatchMode=yes" in command and "ExitOnForwardFailure=yes" in command
    assert not any("StrictHostKeyChecking" in word for word in command)
    assert not any("assword" in word for word in command)
    assert command[command.index("-p") + 1] == "2222"
    assert command[command.index("-l") + 1] == "admin"
    assert command[command.index("-L") + 1] == "127.0.0.1:40001:127.0.0.1:25000"
    host_at = command.index("storage-7")  # after "--": a host is never read as an option
    assert command[host_at - 1] == "--" and command[host_at + 1 :] == [remote_command(25000)]
    assert "fio --server=ip:127.0.0.1," in remote_command(25000)
    with pytest.raises(ValueError, match="not an ssh host"):
        ssh_command(parse_host("127.0.0.1:8765"), 1, 2)


def test_tunnel_reaches_a_fio_server_bound_to_the_remote_loopback(sshd: SshServer) -> None:
    tunnel = SshFioServer(sshd.address, config_file=sshd.client_config)
    with tunnel as endpoint:
        assert endpoint.kind == "fio" and endpoint.host == "127.0.0.1"
        info = probe_fio_server(endpoint.host, endpoint.port)
        assert info.fio_version == local_fio_version() and info.matches
        assert _serving(tunnel.remote_port), "a fio server runs while the tunnel is open"
        # ...bound to the remote loopback only: nothing else listens on its port
        listening = Path("/proc/net/tcp").read_text() + Path("/proc/net/tcp6").read_text()
        port_hex = f":{tunnel.remote_port:04X} "
        listeners = [
            line.split()[1] for line in listening.splitlines()[1:] if line.split()[3] == "0A"
        ]
        assert [a for a in listeners if a.endswith(port_hex.strip())] == [
            f"0100007F{port_hex.strip()}"
        ]
    assert not _wait_gone(lambda: _serving(tunnel.remote_port)), "fio stops with the tunnel"
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", endpoint.port), timeout=1).close()


def test_a_taken_remote_port_makes_it_try_another(
    sshd: SshServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        taken_port = taken.getsockname()[1]
        free = free_port()
        monkeypatch.setattr(ssh_tunnel, "REMOTE_PORTS", [taken_port, free])
        monkeypatch.setattr(ssh_tunnel, "REMOTE_PORT_TRIES", 2)
        for _ in range(2):  # both orders of the two ports come up across runs
            tunnel = SshFioServer(sshd.address, config_file=sshd.client_config)
            with tunnel as endpoint:
                assert f"127.0.0.1:{free}" in tunnel.command[tunnel.command.index("-L") + 1]
                assert probe_fio_server(endpoint.host, endpoint.port).matches


def test_every_remote_port_taken_is_one_clear_error(
    sshd: SshServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        monkeypatch.setattr(ssh_tunnel, "REMOTE_PORTS", [taken.getsockname()[1]])
        monkeypatch.setattr(ssh_tunnel, "REMOTE_PORT_TRIES", 1)
        with pytest.raises(SshTunnelError, match=r"remote ports tried, all taken"):
            SshFioServer(sshd.address, config_file=sshd.client_config).start()


def test_an_unknown_host_key_is_refused_never_accepted(sshd: SshServer, tmp_path: Path) -> None:
    config = tmp_path / "ssh_config"
    config.write_text(
        sshd.client_config.read_text().replace(str(sshd.folder / "known_hosts"), "/dev/null")
    )
    tunnel = SshFioServer(sshd.address, config_file=config, timeout_s=10)
    with pytest.raises(SshTunnelError) as caught:
        tunnel.start()
    message = str(caught.value)
    assert message.startswith(f"{sshd.address.label}: ")
    assert "Host key verification failed" in message and "\n" not in message
    assert not _serving(tunnel.remote_port) and tunnel.pid is None


def test_no_ssh_server_there_names_the_host() -> None:
    address = HostAddress("ssh", "127.0.0.1", free_port(), "root")
    with pytest.raises(SshTunnelError, match=rf"^{address.label}: .*Connection refused"):
        SshFioServer(address, timeout_s=10).start()


def test_check_host_over_ssh(sshd: SshServer) -> None:
    check = check_host(sshd.address)
    assert check.ok and check.reachable and check.protocol_matches
    assert check.fio_version == local_fio_version()
    assert check.message.startswith(sshd.address.label)


_HOLDER = """
import sys, time
from pathlib import Path
from stripewise.hosts.ssh_tunnel import SshFioServer
from stripewise.model.host_address import parse_host
tunnel = SshFioServer(parse_host(sys.argv[1]), config_file=Path(sys.argv[2]))
endpoint = tunnel.start()
print(tunnel.pid, endpoint.port, tunnel.remote_port, flush=True)
time.sleep(600)
"""


def test_killing_stripewise_leaves_neither_ssh_nor_fio(sshd: SshServer) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, sshd.address.label, str(sshd.client_config)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "app")},
    )
    try:
        assert holder.stdout is not None
        ssh_pid, port, remote_port = map(int, holder.stdout.readline().split())
        assert probe_fio_server("127.0.0.1", port).matches
        assert _serving(remote_port)
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        ssh_alive = lambda: {ssh_pid} if _cmdline(ssh_pid) else set()  # noqa: E731
        assert not _wait_gone(ssh_alive), "ssh dies with the process that started it"
        assert not _wait_gone(lambda: _serving(remote_port)), "fio dies with the ssh session"
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_closing_the_tunnel_mid_job_leaves_no_fio_on_the_host(
    sshd: SshServer, tmp_path: Path
) -> None:
    """A job runs through the forward (fio's client mode, null engine); the tunnel closes
    under it: the server, its per-client child and the job's workers all end."""
    job = tmp_path / "long.fio"
    job.write_text("[long]\nioengine=null\nsize=1g\ntime_based=1\nruntime=120\nrw=write\n")
    tunnel = SshFioServer(sshd.address, config_file=sshd.client_config)
    with tunnel as endpoint:
        client = subprocess.Popen(
            ["fio", f"--client=ip:127.0.0.1,{endpoint.port}", str(job)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while len(_serving(tunnel.remote_port)) < 3:  # server, per-client child, worker
            assert time.monotonic() < deadline, "the job did not start on the host"
            assert client.poll() is None
            time.sleep(0.1)
    try:
        assert not _wait_gone(lambda: _serving(tunnel.remote_port)), "fio left on the host"
    finally:
        client.kill()
        client.wait()


def test_a_tunnel_opened_by_a_worker_thread_outlives_the_thread(sshd: SshServer) -> None:
    """PR_SET_PDEATHSIG fires when the forking thread ends: a GUI worker that opens the tunnel
    and returns must not take ssh (and the host's fio) with it."""
    tunnel = SshFioServer(sshd.address, config_file=sshd.client_config)
    opened: list[HostAddress] = []
    worker = threading.Thread(target=lambda: opened.append(tunnel.start()))
    worker.start()
    worker.join(timeout=30)
    try:
        (endpoint,) = opened
        time.sleep(0.5)  # a SIGKILL sent as the worker ended would have landed by now
        assert tunnel.pid is not None and _cmdline(tunnel.pid)
        assert probe_fio_server(endpoint.host, endpoint.port).matches
    finally:
        tunnel.stop()
    assert not _wait_gone(lambda: _serving(tunnel.remote_port))


def test_ssh_command_without_ports_shows_where_they_go() -> None:
    command = ssh_command(parse_host("ssh://node-9"))
    assert command[command.index("-L") + 1] == "127.0.0.1:LOCAL_PORT:127.0.0.1:REMOTE_PORT"
    assert "-l" not in command and command[command.index("-p") + 1] == "22"

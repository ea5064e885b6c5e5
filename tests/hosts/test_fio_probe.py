"""fio's probe in Python against real fio servers (loopback and network namespaces) and
against servers that are not fio, or fio of another protocol version."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable

import pytest

from stripewise.fio.probe import (
    HostUnreachable,
    ProbeRefused,
    crc16,
    local_fio_version,
    local_protocol_version,
    probe_fio_server,
)
from tests.fixtures.fio_servers import FioServers, free_port, require_tool, start_fio_server
from tests.fixtures.netns import NetnsHosts
from tests.hosts.fake_servers import fake_server, reply_as_fio, say, silent, strict_fio


def test_crc16_is_fios_crc16() -> None:
    assert crc16(b"123456789") == 0xBB3D  # CRC-16/ARC check value, fio's crc16.c
    assert crc16(b"") == 0


def test_local_fio_version_and_protocol_come_from_the_installed_fio() -> None:
    fio = require_tool("fio", "fio")
    printed = subprocess.run([fio, "--version"], capture_output=True, text=True).stdout.strip()
    assert local_fio_version() == printed
    if printed == "fio-3.33":
        assert local_protocol_version() == 97  # FIO_SERVER_VER in fio 3.33's server.h
    assert local_protocol_version() > 0


def test_probe_reads_real_fio_servers(fio_servers: FioServers) -> None:
    servers = fio_servers(2)
    infos = [probe_fio_server("127.0.0.1", s.address.port) for s in servers]
    for info in infos:
        assert info.fio_version == local_fio_version()
        assert info.protocol_version == local_protocol_version() and info.matches
        assert info.hostname == socket.gethostname()[:63]
        assert info.os == "Linux"
        assert info.cpus >= 1
    servers[0].kill()
    with pytest.raises(HostUnreachable, match=rf"127\.0\.0\.1:{servers[0].address.port}: "):
        probe_fio_server("127.0.0.1", servers[0].address.port)
    assert probe_fio_server("127.0.0.1", servers[1].address.port).matches


def test_probe_reads_fio_servers_in_network_namespaces(
    netns_hosts: NetnsHosts, tmp_path_factory: pytest.TempPathFactory
) -> None:
    hosts = netns_hosts(2)
    logs = tmp_path_factory.mktemp("netns-fio")
    servers = [start_fio_server(h.address, 8765, logs, netns=h.name) for h in hosts]
    try:
        for host in hosts:
            info = probe_fio_server(host.address, 8765)
            assert info.matches and info.fio_version == local_fio_version()
        # Each listens on its namespace's own address only: not on this side's loopback.
        with pytest.raises(HostUnreachable):
            probe_fio_server(hosts[0].local_address, 8765, timeout_s=1)
    finally:
        for server in servers:
            server.stop()
    # Stopped, its port refuses. fio forks a process per connection, and one still closing
    # the probes' sockets as the server went has been seen to take a connection and close it
    # (once in about 45 CI runs): the port is asked until it refuses, for 5 s at most.
    said: list[str] = []
    deadline = time.monotonic() + 5
    while not said or ("refused" not in said[-1] and time.monotonic() < deadline):
        with pytest.raises(HostUnreachable) as caught:
            probe_fio_server(hosts[0].address, 8765, timeout_s=2)
        said.append(str(caught.value))
        time.sleep(0.1)
    assert "refused" in said[-1], said


def test_a_closed_port_is_refused_in_one_line() -> None:
    port = free_port()
    with pytest.raises(HostUnreachable) as caught:
        probe_fio_server("127.0.0.1", port)
    assert str(caught.value) == f"127.0.0.1:{port}: connection refused (no fio server there)"


def test_an_unknown_name_is_one_line() -> None:
    with pytest.raises(HostUnreachable, match=r"^no-such-host\.invalid:8765: unknown host"):
        probe_fio_server("no-such-host.invalid", 8765)


@pytest.mark.parametrize(
    "answer",
    [
        say(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"),
        say(b"220 mail.example ESMTP\r\n" * 3),
        say(b"\0" * 200),
    ],
    ids=["http", "smtp", "zeros"],
)
def test_a_server_that_is_not_fio_is_said_so(answer: Callable[[socket.socket], None]) -> None:
    with fake_server(answer) as port, pytest.raises(HostUnreachable) as caught:
        probe_fio_server("127.0.0.1", port, timeout_s=2)
    assert str(caught.value).startswith(f"127.0.0.1:{port}: ")
    assert "not" in str(caught.value) and "fio" in str(caught.value)


def test_a_silent_server_times_out_with_the_address() -> None:
    with fake_server(silent) as port, pytest.raises(HostUnreachable) as caught:
        probe_fio_server("127.0.0.1", port, timeout_s=0.5)
    assert str(caught.value) == f"127.0.0.1:{port}: no answer to a fio probe in time"


def test_a_server_of_another_protocol_version_is_a_mismatch_not_a_failure() -> None:
    other = local_protocol_version() - 3
    with fake_server(reply_as_fio(other)) as port:
        info = probe_fio_server("127.0.0.1", port)
    assert info.protocol_version == other
    assert info.local_protocol_version == local_protocol_version()
    assert not info.matches
    assert (info.fio_version, info.hostname, info.arch, info.cpus) == (
        "fio-3.99",
        "far-host",
        "aarch64",
        64,
    )


def test_a_server_that_drops_our_version_is_found_at_its_own() -> None:
    """Real fio servers hang up on another version: versions near ours are tried."""
    other = local_protocol_version() + 2
    with fake_server(strict_fio(other)) as port:
        info = probe_fio_server("127.0.0.1", port)
        assert info.protocol_version == other and not info.matches
        with pytest.raises(ProbeRefused, match="closed the connection on a fio probe"):
            probe_fio_server("127.0.0.1", port, search_versions=False)


def test_a_server_that_hangs_up_on_every_version_is_not_fio() -> None:
    with fake_server(say(b"")) as port, pytest.raises(ProbeRefused, match="not a fio server"):
        probe_fio_server("127.0.0.1", port, timeout_s=3)


def test_ipv6_loopback_is_named_as_an_address_label() -> None:
    port = free_port()
    with pytest.raises(HostUnreachable, match=rf"^\[::1\]:{port}: "):
        probe_fio_server("::1", port)

"""Is a host ready for a group run: reachable, running fio, and speaking our protocol?

Nothing runs on the host but fio's probe (and, for ssh hosts, the fio server started for the
check and stopped after it); no job is sent. Several hosts are checked at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from stripewise.fio.probe import (
    FioServerInfo,
    HostUnreachable,
    LocalFioError,
    probe_fio_server,
)
from stripewise.hosts.ssh_tunnel import SshFioServer
from stripewise.model.host_address import HostAddress
from stripewise.model.wording import count_noun

__all__ = ["HostCheck", "check_host", "check_hosts"]

MAX_PARALLEL_CHECKS = 16


@dataclass(frozen=True)
class HostCheck:
    """One host's readiness; `message` is one line for the admin."""

    address: HostAddress
    reachable: bool
    fio_version: str | None
    protocol_matches: bool | None  # None when the host could not be asked
    message: str
    info: FioServerInfo | None = None

    @property
    def ok(self) -> bool:
        """Reachable and speaking this machine's fio protocol: a group run can use it."""
        return self.reachable and self.protocol_matches is True


def check_host(address: HostAddress, *, timeout_s: float = 5.0) -> HostCheck:
    """Probe the host's fio server; for an ssh host, start one over ssh and probe through
    the forward. Never raises for a host's own failure: that is the HostCheck's message."""
    try:
        if address.kind == "ssh":
            # Logging in and starting fio takes longer than a probe: give ssh its own budget.
            tunnel = SshFioServer(address, timeout_s=max(timeout_s, 15.0))
            with tunnel:
                info = tunnel.server_info
                assert info is not None  # set once the forward answered
        else:
            info = probe_fio_server(address.host, address.port, timeout_s=timeout_s)
    except HostUnreachable as exc:
        return HostCheck(address, False, None, None, str(exc))
    except (LocalFioError, OSError, ValueError) as exc:  # ssh missing, a garbled address...
        return HostCheck(address, False, None, None, f"{address.label}: {exc}")
    message = _describe(address, info)
    return HostCheck(address, True, info.fio_version, info.matches, message, info)


def check_hosts(addresses: Sequence[HostAddress], *, timeout_s: float = 5.0) -> list[HostCheck]:
    """Every host checked at once (a dead host costs its timeout once, not once per host);
    results in the order given."""
    if not addresses:
        return []
    workers = min(len(addresses), MAX_PARALLEL_CHECKS)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="host-check") as pool:
        return list(pool.map(lambda a: check_host(a, timeout_s=timeout_s), addresses))


def _describe(address: HostAddress, info: FioServerInfo) -> str:
    where = f"{address.label}: {info.fio_version} on {info.hostname or '?'}"
    where += f" ({info.os} {info.arch}, {count_noun(info.cpus, 'CPU')})"
    if info.matches:
        return f"{where}, protocol {info.protocol_version} as here"
    return (
        f"{where}: protocol {info.protocol_version}, this machine's fio speaks "
        f"{info.local_protocol_version}; install the same fio version on both"
    )

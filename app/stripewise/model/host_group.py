"""A host group: a named, ordered list of hosts benchmarked together (docs/hosts.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from stripewise.model.bench import BenchSpec
from stripewise.model.host_address import HostAddress

MAX_GROUP_NAME = 64
_GROUP_NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


@dataclass(frozen=True)
class HostGroup:
    """Hosts in the order the admin gave them; a host appears at most once."""

    name: str
    hosts: tuple[HostAddress, ...]

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(host.label for host in self.hosts)


def check_group_name(name: str) -> str:
    """The name as stored (surrounding blanks dropped); ValueError with one line if unusable.

    Names end up in file names, CLI arguments and job names, hence the short character set."""
    stripped = name.strip()
    if not stripped:
        raise ValueError("empty group name")
    if len(stripped) > MAX_GROUP_NAME:
        raise ValueError(
            f"group name {stripped[:40]!r}...: longer than {MAX_GROUP_NAME} characters"
        )
    if not _GROUP_NAME.match(stripped):
        raise ValueError(f"group name {stripped!r}: use only letters, digits, '.', '_' and '-'")
    if stripped.startswith("-"):
        raise ValueError(f"group name {stripped!r}: must not start with '-'")
    return stripped


def unique_hosts(hosts: tuple[HostAddress, ...] | list[HostAddress]) -> tuple[HostAddress, ...]:
    """The hosts in their first order with repeats dropped."""
    seen: set[HostAddress] = set()
    kept: list[HostAddress] = []
    for host in hosts:
        if host not in seen:
            seen.add(host)
            kept.append(host)
    return tuple(kept)


def spec_on_hosts(spec: BenchSpec) -> BenchSpec:
    """What every host of a group runs of a spec: fio (their servers are fio's), no CPU latency
    limit, no rounds to a steady state nor preconditioning (only this machine's helper holds a
    limit and runs rounds; a fio server runs each phase once)."""
    return replace(spec, engine="fio", cpu_latency_us=None, steady_state=False, precondition=False)

"""fio client/server JSON (`fio --client=host1 job.fio --client=host2 job.fio`): its clients and
their total.

`client_stats` holds one entry per job per client, each with the `hostname` and `port` it was
reached at (two servers on one machine differ only by port), and, with two clients or more, a
last entry named "All clients" that carries the `hostname`/`port` of whichever client reported
last. "global options" is one object when fio talked to one server (fio 3.33 also with several,
repeating their keys), and in newer fio (its client.c today) a list with one object per client
whose job file had a global section, each with its `hostname` and `port`.

fio's "All clients" figures are known to be wrong (fio issues 1918 and 1881: bandwidth from the
last client's group, the total I/O over the longest runtime), so the total's throughput and
IOPS are the sums of the clients' own figures; fio's own are kept beside them as
`fio_throughput` and `fio_iops`. Its latency percentiles (newer fio; 3.33 gives none) are the
only ones for all clients together and are kept; CPU is not, the clients being other machines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stripewise.fio.results import (
    Unread,
    active_directions,
    bandwidth_bytes,
    check_direction,
    io_bytes,
    iops,
    num,
    percentiles_us,
)
from stripewise.model.run import ResultValue

TOTAL_JOB = "All clients"
UNKNOWN_HOST = "unknown"
_ADDRESS = ("hostname", "port")


@dataclass(frozen=True)
class Client:
    hostname: str
    port: Any
    entries: list[dict[str, Any]]
    global_options: dict[str, Any]
    disk_util: list[Any] = field(default_factory=list)  # fio's disk_util entries of this client

    @property
    def address(self) -> str:
        return self.hostname if self.port is None else f"{self.hostname}:{self.port}"


def split(
    obj: dict[str, Any], entries: list[dict[str, Any]]
) -> tuple[list[Client], list[dict[str, Any]]]:
    """The clients, in the order fio reported them, and fio's "All clients" entries."""
    totals = [e for e in entries if e.get("jobname") == TOTAL_JOB]
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    ports: dict[tuple[str, str], Any] = {}
    for entry in entries:
        if entry.get("jobname") == TOTAL_JOB:
            continue
        hostname = str(entry.get("hostname") or UNKNOWN_HOST)
        key = (hostname, _port_key(entry.get("port")))
        grouped.setdefault(key, []).append(entry)
        ports.setdefault(key, entry.get("port"))
    # Each client's global section and disks are looked up in one index, not found by a scan
    # of fio's lists per client (quadratic in clients).
    sections = _by_address(obj.get("global options"))
    disks = _by_address(obj.get("disk_util"))
    clients = [
        Client(key[0], ports[key], group, _options(obj, sections.get(key)), disks.get(key, []))
        for key, group in grouped.items()
    ]
    return clients, totals


def _by_address(listed: Any) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The objects of one of fio's lists by the client (hostname, port) they name, in order."""
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for element in listed if isinstance(listed, list) else []:
        if isinstance(element, dict):
            address = (str(element.get("hostname")), _port_key(element.get("port")))
            found.setdefault(address, []).append(element)
    return found


def _port_key(port: Any) -> str:
    """Ports compare as text: fio writes them as numbers, a hand-edited file may quote them."""
    return "" if port is None else str(port).strip()


def global_options(obj: dict[str, Any], hostname: str | None, port: Any) -> dict[str, Any]:
    """The global section that applied to one client (or to the jobs of a plain run)."""
    sections = _by_address(obj.get("global options"))
    return _options(obj, sections.get((str(hostname), _port_key(port))))


def _options(obj: dict[str, Any], sections: list[dict[str, Any]] | None) -> dict[str, Any]:
    options = obj.get("global options")
    if isinstance(options, dict):
        return dict(options)
    if not sections:
        return {}  # that client's job file had no global section
    return {k: v for k, v in sections[0].items() if k not in _ADDRESS}


def common_options(clients: list[Client]) -> dict[str, Any]:
    """Global options every client ran with, with the same value."""
    if not clients:
        return {}
    first, *others = (c.global_options for c in clients)
    return {k: v for k, v in first.items() if all(o.get(k) == v for o in others)}


def total_results(
    clients: list[Client],
    totals: list[dict[str, Any]],
    source: str,
    line: int,
    unread: Unread | None = None,
) -> list[ResultValue]:
    """Per direction any client moved data in: throughput and IOPS summed over every client
    entry, fio's percentiles, and fio's own aggregate as `fio_throughput` / `fio_iops`; what
    of fio's own is no number goes to `unread` (the clients' figures are their runs')."""
    fio_total = totals[0] if totals else {}
    for direction in ("read", "write", "trim"):
        if isinstance(stats := fio_total.get(direction), dict):
            check_direction(stats, f"{TOTAL_JOB} {direction}", source, line)
    everything = [e for c in clients for e in c.entries]
    active = active_directions(everything)
    results: list[ResultValue] = []
    for direction in active:
        phase = TOTAL_JOB if len(active) == 1 else f"{TOTAL_JOB} {direction}"
        moved = [e[direction] for e in everything if io_bytes(e.get(direction)) > 0]
        own = fio_total.get(direction)
        own = own if isinstance(own, dict) else {}
        where = f"{TOTAL_JOB} {direction}"
        p50, p99 = percentiles_us(own, where, unread)
        results += [
            ResultValue(
                phase, "throughput", "MB/s", _sum([bandwidth_bytes(s) for s in moved], 1e6)
            ),
            ResultValue(phase, "iops", "IOPS", _sum([iops(s) for s in moved], 1)),
            ResultValue(phase, "latency_p50", "us", p50),
            ResultValue(phase, "latency_p99", "us", p99),
        ]
        if own:
            results += [
                ResultValue(
                    phase, "fio_throughput", "MB/s", num(bandwidth_bytes(own, where, unread), 1e6)
                ),
                ResultValue(phase, "fio_iops", "IOPS", iops(own, where, unread)),
            ]
    return results


def _sum(values: list[float | None], divisor: float) -> float | None:
    """The sum, or missing when any client's figure is."""
    present = [v for v in values if v is not None]
    if not values or len(present) < len(values):
        return None
    return sum(present) / divisor

"""Which machine a run was measured on, so results from different hosts are never mixed up."""

from __future__ import annotations

import os
import platform
import socket
from dataclasses import dataclass
from pathlib import Path

MACHINE_ID_FILES = (Path("/etc/machine-id"), Path("/var/lib/dbus/machine-id"))
CPU_MODEL_KEYS = ("model name", "Model", "Hardware", "cpu model", "cpu")


@dataclass(frozen=True)
class HostInfo:
    """A host as recorded with its runs; `machine_id` is the identity, the rest may change."""

    hostname: str
    machine_id: str
    kernel: str = ""
    cpu_model: str = ""
    cpu_count: int = 0
    ram_bytes: int = 0

    @classmethod
    def current(cls) -> HostInfo:
        """This machine, read from /etc/machine-id, /proc/cpuinfo, platform and psutil."""
        import psutil

        hostname = _hostname()
        return cls(
            hostname=hostname,
            machine_id=current_machine_id(),
            kernel=platform.release(),
            cpu_model=read_cpu_model(Path("/proc/cpuinfo")) or platform.processor(),
            cpu_count=os.cpu_count() or 0,
            ram_bytes=int(psutil.virtual_memory().total),
        )


def _hostname() -> str:
    return socket.gethostname() or platform.node() or "localhost"


def current_machine_id() -> str:
    """This machine's identity as `HostInfo.current` records it, without reading the rest."""
    return read_machine_id(MACHINE_ID_FILES) or f"hostname:{_hostname()}"


def read_machine_id(candidates: tuple[Path, ...]) -> str | None:
    """The systemd/D-Bus machine id; containers and minimal systems may lack it."""
    for path in candidates:
        try:
            value = path.read_text(encoding="ascii", errors="replace").strip()
        except OSError:
            continue
        if value:
            return value
    return None


def read_cpu_model(cpuinfo: Path) -> str | None:
    """First model line of /proc/cpuinfo; the key differs between x86, ARM and others."""
    try:
        lines = cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    fields: dict[str, str] = {}
    for line in lines:
        key, sep, value = line.partition(":")
        if sep and value.strip():
            fields.setdefault(key.strip(), value.strip())
    return next((fields[k] for k in CPU_MODEL_KEYS if k in fields), None)

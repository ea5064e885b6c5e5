"""Native NVMe multipath: the controllers behind a namespace listed as a virtual device.

With nvme_core.multipath=Y, a drive that reports several controllers (CMIC) gets its namespace
at /devices/virtual/nvme-subsystem/nvme-subsysS/nvmeSnH, and each controller carrying it a
hidden path disk nvmeScKnH under its PCI function (.../0000:09:00.0/nvme/nvmeK/nvme0c0n1).
Recent kernels link the path disks in the namespace's `multipath/` directory; every kernel
lists them as block devices, live and in a dump (which has no links). udev's ID_PATH (systemd
252 and later: `pci-0000:09:00.0-nvme-1`) names the PCI function of the first controller only.
Each is tried in that order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from itertools import pairwise

from stripewise.inventory import ports
from stripewise.inventory.controllers import Occupant, controller_id
from stripewise.model.topology import Disk, DiskPath
from stripewise.system.device_sources import DeviceRecord, DeviceSource
from stripewise.system.pci import PCI_ADDRESS

_PATH_DISK = re.compile(r"^nvme(\d+)c(\d+)n(\d+)$")
_NVME_CONTROLLER = re.compile(r"^nvme\d+$")
_SUBSYSTEMS = "/devices/virtual/nvme-subsystem/"


@dataclass(frozen=True)
class Located:
    """One way to a disk: the device at the port (a path disk, or the disk itself)."""

    name: str
    path: str
    port: ports.PortInfo


class NvmeHeads:
    """Finds the ports of every disk, following namespaces of the subsystem layout to their
    controllers; built once per inventory, so no record is scanned twice."""

    def __init__(self, source: DeviceSource, records: list[DeviceRecord]) -> None:
        self._source = source
        self._path_disks: dict[str, list[tuple[int, str]]] = {}
        for record in records:
            match = _PATH_DISK.match(record.name)
            if match and not record.path.startswith(_SUBSYSTEMS):
                head = f"nvme{match.group(1)}n{match.group(3)}"
                self._path_disks.setdefault(head, []).append((int(match.group(2)), record.path))
        self._functions: dict[str, str] | None = None

    def locate(self, record: DeviceRecord) -> list[Located]:
        """The disk's ports, first path first; empty for a disk with no controller to show."""
        paths = self._paths(record) if record.path.startswith(_SUBSYSTEMS) else [record.path]
        found = []
        for path in paths:
            moved = record if path == record.path else replace(record, path=path)  # no copy
            port = ports.locate(self._source, moved)
            if port is not None:
                found.append(Located(path.rsplit("/", 1)[-1], path, port))
        return found

    def _paths(self, record: DeviceRecord) -> list[str]:
        source = self._source
        folder = f"{record.path}/multipath"
        linked = [source.link_target(folder, name) for name in source.entries(folder)]
        live = sorted((_instance(p), p) for p in linked if p and _PATH_DISK.match(_base(p)))
        listed = live or sorted(self._path_disks.get(record.name, ()))
        if listed:
            return [path for _instance, path in listed]
        function = self._function_of(record.prop("ID_PATH"))
        if function is not None:
            return [f"{function}/nvme/{record.name}"]
        return [record.path]  # ports.locate still follows the subsystem's controller links

    def _function_of(self, id_path: str | None) -> str | None:
        """The PCI function `pci-0000:09:00.0-nvme-1` names (also behind a platform part, as
        `platform-fe340000.pcie-pci-0000:01:00.0-nvme-1`, or the old `-nvme0n1` ending)."""
        if not id_path:
            return None
        address = None
        words = id_path.strip().split("-")
        for before, word in pairwise(words):
            if word.startswith("nvme"):
                break
            if before == "pci" and PCI_ADDRESS.match(word):
                address = word
        else:
            return None
        return self._functions_by_address().get(address) if address else None

    def _functions_by_address(self) -> dict[str, str]:
        """PCI address -> devpath, from the PCI records or, missing those, an NVMe controller's
        path (.../0000:09:00.0/nvme/nvme0)."""
        if self._functions is None:
            found: dict[str, str] = {}
            for record in self._source.devices_of("nvme"):
                above, _, name = record.path.rpartition("/nvme/")
                if above and _NVME_CONTROLLER.match(name):
                    found[above.rsplit("/", 1)[-1]] = above
            found |= {r.name: r.path for r in self._source.devices_of("pci")}
            self._functions = found
        return self._functions


def _base(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _instance(path: str) -> int:
    match = _PATH_DISK.match(_base(path))
    return int(match.group(2)) if match else 0


def occupants(disk: Disk, found: list[Located]) -> list[Occupant]:
    """A namespace reached through several controllers: shown at its first path's port with
    every path listed; the other controllers' ports say whose path they are."""
    entries = tuple(
        DiskPath(name=p.name, controller=controller_id(p.port.controller_path), port=p.port.port)
        for p in found
    )
    first, rest = found[0], found[1:]
    shown = Occupant(first.port, disk.name, first.path, disk=replace(disk, paths=entries))
    return [
        shown,
        *(
            Occupant(
                p.port, p.name, p.path, path_of=disk.name, note=f"{p.name}: path to {disk.name}"
            )
            for p in rest
        ),
    ]

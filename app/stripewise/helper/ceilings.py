"""The physical ceiling under a benchmark target: the most its lowest layer can carry.

Every disk under the target (the whole disks the sampler found, after md/dm gave way to their
members) is followed up its sysfs device path: its own interface (SATA link, SAS phys of its
port, USB speed, or the PCIe link of an NVMe function) and every link above it (SAS wide ports,
PCI functions). Links several disks share cap what those disks carry together; the target's
ceiling is the tree summed that way. A RAM-backed device (zram, brd, a loop device on tmpfs,
or tmpfs itself) is capped by the memory figure instead. A disk whose interface says nothing
(virtio, iSCSI, nbd) leaves the target without a ceiling: nothing is flagged that cannot be
known. Figures are decimal MB/s of payload per direction, after line encoding.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import mmap
import os
import re
import time
from dataclasses import dataclass, field

from stripewise.helper.resolve import mount_of, open_loop_backing
from stripewise.helper.sysfs_files import read_attribute
from stripewise.model.topology import pcie_link_mb_s
from stripewise.system.pci import PCI_ADDRESS, parse_link

RAM_FILESYSTEMS = frozenset({"tmpfs", "ramfs", "hugetlbfs", "devtmpfs"})
_RAM_DISK = re.compile(r"^(zram|ram)\d+$")  # zram and brd
_LOOP = re.compile(r"^loop\d+$")
_USB_DEVICE = re.compile(r"^\d+-[\d.]+$")
_PORT = re.compile(r"^port-[\d:]+$")
_PHY = re.compile(r"^phy-[\d:]+$")
_ATA = re.compile(r"^ata\d+$")
_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)?)")
_COPY_BYTES = 32 * 2**20  # beyond most caches; 64 MiB held for the moment of measuring


def _number(text: str | None) -> float | None:
    match = _NUMBER.match(text or "")
    return float(match.group(1)) if match else None


# --- line rates ----------------------------------------------------------------------------


def sata_mb_s(text: str | None) -> float | None:
    """`6.0 Gbps` -> 600: SATA's 8b/10b encoding leaves a tenth of the bit rate in bytes."""
    gbps = _number(text)
    return gbps * 100 if gbps else None


def sas_mb_s(text: str | None) -> float | None:
    """`12.0 Gbit` -> 1200 (8b/10b up to SAS-3); `22.5 Gbit` -> 2400 (SAS-4's 128b/150b)."""
    gbit = _number(text)
    if not gbit:
        return None
    return gbit * 1000 / 8 * (128 / 150) if gbit > 12 else gbit * 100


def usb_mb_s(text: str | None) -> float | None:
    """`speed` in Mbit/s -> MB/s: 8b/10b for 5 Gbit/s, 128b/132b above; raw below."""
    mbit = _number(text)
    if not mbit:
        return None
    if mbit > 5000:
        return mbit / 8 * (128 / 132)
    return mbit / 8 * (0.8 if mbit == 5000 else 1.0)


def pcie_mb_s(function: str) -> float | None:
    """The PCIe link a PCI function trained at (`current_link_speed` x `current_link_width`)."""
    link = parse_link(
        read_attribute(f"{function}/current_link_speed"),
        read_attribute(f"{function}/current_link_width"),
    )
    return float(pcie_link_mb_s(link.speed_gt_s, link.width)) if link else None


# --- the tree ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ceiling:
    mb_s: float
    what: str  # for people: "sda's SATA link (600 MB/s)", "memory (...)"


@dataclass
class _Node:
    what: str
    own_mb_s: float | None  # None: no link of its own here (it only sums its children)
    children: dict[str, _Node] = field(default_factory=dict)

    def mb_s(self) -> float:
        below = sum(child.mb_s() for child in self.children.values())
        if not self.children:
            return self.own_mb_s if self.own_mb_s is not None else math.inf
        return min(below, self.own_mb_s) if self.own_mb_s is not None else below

    def limiting(self) -> _Node:
        """The deepest node whose own link sets this subtree's figure (for the message)."""
        figure = self.mb_s()
        if len(self.children) == 1:
            child = next(iter(self.children.values()))
            if child.mb_s() <= figure:
                return child.limiting()
        return self


LinkPath = list[tuple[str, str, float | None]]  # (key, what, own MB/s), top to bottom


def _pci_nodes(parts: list[str], upto: int) -> LinkPath:
    found: LinkPath = []
    for index in range(upto):
        part = parts[index]
        if PCI_ADDRESS.match(part):
            function = "/" + "/".join(parts[: index + 1])
            found.append((function, f"the PCIe link of {part}", pcie_mb_s(function)))
    return found


def _sata(parts: list[str], index: int) -> float | None:
    """The fastest link of the ATA port (a port multiplier has several): an upper bound."""
    port = "/" + "/".join(parts[: index + 1])
    speeds = []
    with contextlib.suppress(OSError):
        for entry in os.listdir(port):
            if entry.startswith("link"):
                speeds.append(
                    sata_mb_s(read_attribute(f"{port}/{entry}/ata_link/{entry}/sata_spd"))
                )
    known = [s for s in speeds if s]
    return max(known) if known else None


def _sas_port(directory: str) -> float | None:
    """A SAS port carries the sum of its phys (a wide port has several)."""
    rates = []
    with contextlib.suppress(OSError):
        for entry in os.listdir(directory):
            if _PHY.match(entry):
                rates.append(
                    sas_mb_s(
                        read_attribute(f"{directory}/{entry}/sas_phy/{entry}/negotiated_linkrate")
                    )
                )
    known = [r for r in rates if r]
    return sum(known) if known else None


def disk_path(sys: str, name: str) -> LinkPath | None:
    """The links from the host bridge down to a physical disk, its own interface last;
    None when the disk's own interface is unknown."""
    real = os.path.realpath(f"{sys}/class/block/{name}")
    parts = [p for p in real.split("/") if p]
    if "nvme-subsystem" in parts:  # native multipath: the sum of its controllers' links
        return _nvme_multipath(sys, real, name)
    nodes: LinkPath = []
    interface: tuple[str, str, float | None] | None = None
    for index, part in enumerate(parts):
        if _ATA.match(part):
            nodes = _pci_nodes(parts, index)
            interface = (f"{real}#if", f"{name}'s SATA link", _sata(parts, index))
            break
        if part == "nvme":
            nodes = _pci_nodes(parts, index)
            if nodes:
                interface = (f"{real}#if", f"{name}'s PCIe link", nodes[-1][2])
            break
        if _USB_DEVICE.match(part):
            nodes = _pci_nodes(parts, index)
            devices = [i for i, p in enumerate(parts) if _USB_DEVICE.match(p)]
            for at in devices:  # hubs first, the disk's own device last
                key = "/" + "/".join(parts[: at + 1])
                nodes.append((key, f"USB {parts[at]}", usb_mb_s(read_attribute(f"{key}/speed"))))
            interface = (f"{real}#if", f"{name}'s USB link", nodes[-1][2])
            nodes = nodes[:-1]
            break
    else:
        ports = [i for i, p in enumerate(parts) if _PORT.match(p)]
        if ports:  # SAS: every port on the way, the disk's own (the last) as its interface
            nodes = _pci_nodes(parts, ports[0])
            for at in ports[:-1]:
                key = "/" + "/".join(parts[: at + 1])
                nodes.append((key, f"SAS {parts[at]}", _sas_port(key)))
            last = "/" + "/".join(parts[: ports[-1] + 1])
            interface = (f"{real}#if", f"{name}'s SAS link", _sas_port(last))
    if interface is None or interface[2] is None:
        return None
    return [*nodes, interface]


def _nvme_multipath(sys: str, real: str, name: str) -> LinkPath | None:
    subsystem = os.path.dirname(real)
    total = 0.0
    with contextlib.suppress(OSError):
        for entry in sorted(os.listdir(subsystem)):
            if re.fullmatch(r"nvme\d+", entry):
                function = os.path.realpath(f"{subsystem}/{entry}/device")
                total += pcie_mb_s(function) or 0.0
    return [(f"{real}#if", f"{name}'s PCIe links", total)] if total else None


@dataclass(frozen=True)
class Layer:
    """What lies at the bottom of the target: physical disks (kernel names) and whether part
    of it is RAM; `unknown` names a device no ceiling can be read for."""

    disks: tuple[str, ...]
    ram: tuple[str, ...]  # RAM-backed devices (or "tmpfs" when the target itself is)
    unknown: tuple[str, ...]


def _ram_backed_loop(sys: str, name: str) -> bool | None:
    """A loop device: True when its backing file lives in RAM, False when on a filesystem with
    disks (the sampler lists those after it), None when unknown."""
    fd = open_loop_backing(name, sys)
    if fd is None:
        return None
    try:
        if os.major(os.fstat(fd).st_dev) != 0:
            return False
        fields = mount_of(fd)
    finally:
        os.close(fd)
    if fields is None or "-" not in fields:
        return None
    return fields[fields.index("-") + 1] in RAM_FILESYSTEMS


def _without_link(real: str) -> bool:
    """A virtual block device (nbd, rbd...); a multipath NVMe namespace lives under
    devices/virtual/nvme-subsystem too, but its controllers have links."""
    return "/virtual/" in real and "/nvme-subsystem/" not in real


def lowest_layer(disks: tuple[str, ...], target_fstype: str | None, sys: str = "/sys") -> Layer:
    """Sort the sampler's disks into physical, RAM-backed and unknown; a loop device over a
    file on disks is no layer of its own (its disks follow it in the list)."""
    physical, ram, unknown = [], [], []
    for name in disks:
        if _RAM_DISK.match(name):
            ram.append(name)
        elif _LOOP.match(name):
            backed = _ram_backed_loop(sys, name)
            if backed:
                ram.append(name)
            elif backed is None:
                unknown.append(name)
        elif _without_link(os.path.realpath(f"{sys}/class/block/{name}")):
            unknown.append(name)  # nbd, rbd...: no link to read
        else:
            physical.append(name)
    if not disks and target_fstype in RAM_FILESYSTEMS:
        ram.append(target_fstype)
    return Layer(tuple(physical), tuple(ram), tuple(unknown))


def ceiling(layer: Layer, memory_mb_s: float | None, sys: str = "/sys") -> Ceiling | None:
    """The most the layer can carry, or None when any part of it cannot be bounded."""
    if layer.unknown or not (layer.disks or layer.ram):
        return None
    root = _Node("the target", None)
    for name in layer.disks:
        path = disk_path(sys, name)
        if path is None:
            return None
        node = root
        for key, what, own in path:
            node = node.children.setdefault(key, _Node(what, own))
    if layer.ram:
        if memory_mb_s is None:
            return None
        root.children["memory"] = _Node(memory_description(memory_mb_s), memory_mb_s)
    figure = root.mb_s()
    if not math.isfinite(figure):
        return None
    limit = root.limiting()
    what = limit.what if limit is not root else "the links under the target together"
    return Ceiling(figure, f"{what} ({figure:,.0f} MB/s)")


# --- memory --------------------------------------------------------------------------------


def memory_description(mb_s: float) -> str:
    return f"memory: every CPU copying at once at one CPU's measured rate, {mb_s:,.0f} MB/s"


@functools.lru_cache(maxsize=1)
def memory_mb_s() -> float | None:
    """An upper bound for what RAM can serve: one CPU's copy rate (best of three, 32 MiB,
    after a warm-up that faults the pages in) times the CPUs. Memory saturates well below
    that on every machine; a RAM-backed device cannot pass it. Measured once per helper."""
    try:
        source, destination = mmap.mmap(-1, _COPY_BYTES), mmap.mmap(-1, _COPY_BYTES)
    except OSError:
        return None
    try:
        source.write(b"\x5a" * _COPY_BYTES)
        kept = (ctypes.c_char * _COPY_BYTES).from_buffer(source)
        into = (ctypes.c_char * _COPY_BYTES).from_buffer(destination)
        best = math.inf
        for attempt in range(4):
            started = time.perf_counter()
            ctypes.memmove(into, kept, _COPY_BYTES)
            if attempt:  # the first copy faults the destination in
                best = min(best, time.perf_counter() - started)
        del kept, into
    finally:
        source.close()
        destination.close()
    return _COPY_BYTES / best / 1e6 * (os.cpu_count() or 1) if best > 0 else None

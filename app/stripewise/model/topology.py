"""Hosts, controllers, slots and disks: the hardware map as plain values.

Everything here is filled from udev/sysfs, a saved snapshot or a `udevadm info --export-db`
dump; any field may be unknown (None) on odd hardware or in dumps, and consumers must show
unknowns as unknown rather than guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

SECTOR_BYTES = 512  # sysfs `size` is always in 512-byte sectors, whatever the block size


class Transport(StrEnum):
    SATA = "sata"
    SAS = "sas"
    NVME = "nvme"
    USB = "usb"
    VIRTIO = "virtio"
    SCSI = "scsi"
    PATA = "pata"
    MMC = "mmc"
    FC = "fc"
    ISCSI = "iscsi"
    VIRTUAL = "virtual"
    UNKNOWN = "unknown"


class DiskKind(StrEnum):
    DISK = "disk"  # a physical (or hypervisor-provided) whole disk
    VIRTUAL = "virtual"  # loop, zram, ram: shown apart
    ARRAY = "array"  # md
    VOLUME = "volume"  # dm (LVM, crypt, multipath)


class DiskState(StrEnum):
    """What the map colours a disk by, most restrictive first."""

    SYSTEM = "system"
    ARRAY_MEMBER = "array_member"
    IN_USE = "in_use"
    UNKNOWN = "unknown"  # from a dump that does not record mounts: not known to be free
    FREE = "free"


@dataclass(frozen=True)
class Partition:
    name: str
    size_bytes: int | None = None
    fs_type: str | None = None
    fs_label: str | None = None
    mountpoints: tuple[str, ...] = ()
    holders: tuple[str, ...] = ()


@dataclass(frozen=True)
class DiskPath:
    """One way to reach a multipathed disk: a kernel device behind one controller's port."""

    name: str  # the path's kernel name: sdc, or nvme0c1n1 for native NVMe multipath
    controller: str  # id of the controller it hangs off
    port: str  # as the slot shows it: "phy 4 lun 1"
    hctl: str | None = None
    by_path: tuple[str, ...] = ()


@dataclass(frozen=True)
class Disk:
    """A whole block device with its stable identity and what uses it. A multipathed disk is
    its dm device, or its NVMe namespace (what is read and written), with `paths` naming the
    devices underneath."""

    name: str  # kernel name: sda, nvme0n1, vda, md0
    kind: DiskKind = DiskKind.DISK
    devnode: str | None = None
    major_minor: str | None = None
    wwn: str | None = None
    serial: str | None = None
    by_id: tuple[str, ...] = ()
    by_path: tuple[str, ...] = ()
    vendor: str | None = None
    model: str | None = None
    size_bytes: int | None = None
    logical_block_size: int | None = None
    physical_block_size: int | None = None
    rotational: bool | None = None
    transport: Transport = Transport.UNKNOWN
    hctl: str | None = None
    partition_table: str | None = None  # gpt, dos, or None when none/unknown
    fs_type: str | None = None  # a signature on the whole disk (no partition table)
    partitions: tuple[Partition, ...] = ()
    mountpoints: tuple[str, ...] = ()  # of the disk itself
    holders: tuple[str, ...] = ()  # md/dm devices built on the disk or its partitions
    swap: bool = False
    system_reasons: tuple[str, ...] = ()  # e.g. "/ on sda2"
    read_ahead_kb: int | None = None
    scheduler: str | None = None
    schedulers: tuple[str, ...] = ()
    sys_path: str | None = None
    usage_known: bool = True  # False when the source does not record mounts and swap
    paths: tuple[DiskPath, ...] = ()  # under a multipath map, or an NVMe namespace's several
    # the kernel's number for what is in the device now: a new one when a loop device is
    # attached again or media change, where the name stays (Linux 5.15+; None before)
    diskseq: int | None = None

    @property
    def system_disk(self) -> bool:
        return bool(self.system_reasons)

    @property
    def all_mountpoints(self) -> tuple[str, ...]:
        return self.mountpoints + tuple(m for p in self.partitions for m in p.mountpoints)

    @property
    def all_holders(self) -> tuple[str, ...]:
        seen = dict.fromkeys(self.holders + tuple(h for p in self.partitions for h in p.holders))
        return tuple(seen)

    @property
    def signatures(self) -> tuple[str, ...]:
        found = [self.partition_table, self.fs_type, *(p.fs_type for p in self.partitions)]
        return tuple(dict.fromkeys(s for s in found if s))

    @property
    def in_use(self) -> bool:
        """Mounted, swapped on, or held by md/dm: not free for a new array."""
        return bool(self.all_mountpoints or self.all_holders or self.swap or self.system_disk)

    @property
    def state(self) -> DiskState:
        if self.system_disk:
            return DiskState.SYSTEM
        if any(h.startswith("md") for h in self.all_holders):
            return DiskState.ARRAY_MEMBER
        if self.in_use:
            return DiskState.IN_USE
        return DiskState.FREE if self.usage_known else DiskState.UNKNOWN

    @property
    def identity(self) -> str:
        """The most stable name known: WWN, then serial, then by-path, then the kernel name."""
        if self.wwn:
            return f"wwn:{self.wwn}"
        if self.serial:
            return f"serial:{self.serial}"
        if self.by_path:
            return f"path:{self.by_path[0]}"
        return f"name:{self.name}"


@dataclass(frozen=True)
class Link:
    """A PCIe link as trained now; `mb_s` is usable payload bandwidth per direction."""

    speed_gt_s: float
    width: int

    @property
    def mb_s(self) -> int:
        return pcie_link_mb_s(self.speed_gt_s, self.width)

    @property
    def generation(self) -> int | None:
        return {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}.get(self.speed_gt_s)

    def describe(self) -> str:
        gen = f"PCIe {self.generation}.0 " if self.generation else ""
        return f"{gen}x{self.width} ({self.speed_gt_s:g} GT/s) = {self.mb_s:,} MB/s"


def pcie_link_mb_s(speed_gt_s: float, width: int) -> int:
    """Raw rate less line encoding: 8b/10b up to 5 GT/s, 128b/130b up to 32, FLIT at 64."""
    if speed_gt_s <= 5.0:
        efficiency = 8 / 10
    elif speed_gt_s <= 32.0:
        efficiency = 128 / 130
    else:
        efficiency = 242 / 256
    return int(speed_gt_s * 1000 / 8 * efficiency * width)


@dataclass(frozen=True)
class EnclosureSlot:
    """A bay of a SES enclosure: its name and whether a locate LED can be driven."""

    enclosure: str  # enclosure id (its SCSI address, e.g. 0:0:12:0)
    name: str  # e.g. "Slot 07"
    locate_path: str | None = None  # sysfs attribute; None when the bay has no locate LED
    locate_on: bool | None = None


@dataclass(frozen=True)
class Slot:
    """A port or bay in physical order; `disk` is None for an empty one."""

    index: int  # 0-based position in port order within the controller
    port: str  # how the hardware names it: "ata port 3", "phy 5", "target 2", "namespace 1"
    key: str  # stable across boots for this host: controller id + port, used for labels
    disk: Disk | None = None
    enclosure: EnclosureSlot | None = None
    label: str | None = None  # the admin's own name for it ("Bay 12"), if any
    note: str | None = None  # what occupies a slot without a disk ("cable to expander 0:0")
    path_of: str | None = None  # a further path to this disk, which is shown at its first path

    @property
    def title(self) -> str:
        if self.label:
            return self.label
        if self.enclosure:
            return self.enclosure.name
        return self.port


@dataclass(frozen=True)
class PciFunction:
    address: str  # 0000:03:01.0
    vendor_id: str | None = None
    device_id: str | None = None
    driver: str | None = None
    link: Link | None = None
    max_link: Link | None = None


@dataclass(frozen=True)
class Controller:
    """A storage controller (HBA, onboard SATA, NVMe drive, virtio device) and its slots."""

    id: str  # pci address, or a platform/virtual name where there is no PCI function
    kind: str  # ahci, sata_mv, mpt3sas, nvme, virtio, usb, ...
    model: str | None = None
    vendor: str | None = None
    driver: str | None = None
    pci: PciFunction | None = None
    root: str | None = None  # pci0000:00: the host bridge it hangs off
    bridges: tuple[str, ...] = ()  # PCI bridges between the root and the controller
    port_count: int | None = None  # None when the hardware does not say
    slots: tuple[Slot, ...] = ()

    @property
    def pci_address(self) -> str | None:
        return self.pci.address if self.pci else None

    @property
    def link_mb_s(self) -> int | None:
        return self.pci.link.mb_s if self.pci and self.pci.link else None

    @property
    def bus(self) -> str:
        """Where it shares bandwidth: the root and the bridge it sits directly behind."""
        parts = [self.root or "no PCI"]
        if self.bridges:
            parts.append(self.bridges[-1])
        return " / ".join(parts)

    @property
    def disks(self) -> tuple[Disk, ...]:
        return tuple(slot.disk for slot in self.slots if slot.disk is not None)


def link_text(controller: Controller) -> str:
    """The link as trained, and what the device could do when it runs below that."""
    pci = controller.pci
    if pci is None or pci.link is None:
        return "link speed not reported"
    text = pci.link.describe()
    best = pci.max_link
    if best is not None and best.mb_s > pci.link.mb_s:
        generation = f"PCIe {best.generation}.0 " if best.generation else ""
        text += f", capable of {generation}x{best.width} = {best.mb_s:,} MB/s"
    return text


@dataclass(frozen=True)
class Array:
    """An existing md array or dm volume and the devices it is built from."""

    name: str  # md0, dm-0
    kind: DiskKind  # ARRAY or VOLUME
    level: str | None = None  # raid5, linear, crypt, lvm...
    members: tuple[str, ...] = ()  # kernel names of member disks or partitions
    member_disks: tuple[str, ...] = ()  # the whole disks those members are on
    raid_devices: int | None = None  # members the array is made for (md), known or not
    size_bytes: int | None = None
    chunk_kib: int | None = None
    uuid: str | None = None
    label: str | None = None  # md name or dm name (vg-lv)
    mountpoints: tuple[str, ...] = ()
    state: str | None = None


@dataclass(frozen=True)
class HostIdentity:
    hostname: str | None = None
    machine_id: str | None = None
    kernel: str | None = None
    source_file: str | None = None  # the dump it was read from, when nothing else names it

    @property
    def key(self) -> str:
        """What per-host settings (slot labels) are filed under."""
        if self.machine_id:
            return f"machine:{self.machine_id}"
        if self.hostname:
            return f"host:{self.hostname}"
        return f"file:{self.source_file or 'unknown'}"


@dataclass(frozen=True)
class Inventory:
    """One look at a machine's storage, from udev, sysfs, a snapshot or a dump."""

    host: HostIdentity
    source: str  # udev, sysfs, snapshot, udev-dump
    controllers: tuple[Controller, ...] = ()
    virtual: tuple[Disk, ...] = ()
    arrays: tuple[Array, ...] = ()
    warnings: tuple[str, ...] = ()
    taken_at: str | None = None  # ISO 8601 UTC
    incomplete: tuple[str, ...] = ()  # why devices are missing (a dump cut short); in warnings too

    @property
    def disks(self) -> tuple[Disk, ...]:
        return tuple(d for c in self.controllers for d in c.disks)

    def find_disk(self, name: str) -> Disk | None:
        return next((d for d in self.disks if d.name == name), None)

    def controller_of(self, disk_name: str) -> Controller | None:
        return next(
            (c for c in self.controllers if any(d.name == disk_name for d in c.disks)), None
        )

    def roots(self) -> dict[str, list[Controller]]:
        """Controllers grouped by the PCI root they hang off, in address order."""
        groups: dict[str, list[Controller]] = {}
        for controller in self.controllers:
            groups.setdefault(controller.root or "no PCI", []).append(controller)
        return groups

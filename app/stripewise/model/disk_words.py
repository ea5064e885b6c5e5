"""A disk said in words for a list: "virtio disk, 274.9 GB, system disk", never the raw values
it was read as (`in_use`, a PCI vendor id such as `0x1af4`)."""

from __future__ import annotations

import re

from stripewise.model.topology import Disk, DiskKind, DiskState, Transport
from stripewise.model.units import human_size

STATE_WORDS: dict[DiskState, str] = {
    DiskState.SYSTEM: "system disk",
    DiskState.ARRAY_MEMBER: "array member",
    DiskState.IN_USE: "in use",
    DiskState.UNKNOWN: "use unknown",
    DiskState.FREE: "free",
}
_TRANSPORT_NOUNS: dict[Transport, str] = {
    Transport.SATA: "SATA disk",
    Transport.SAS: "SAS disk",
    Transport.NVME: "NVMe drive",
    Transport.USB: "USB disk",
    Transport.VIRTIO: "virtio disk",
    Transport.SCSI: "SCSI disk",
    Transport.PATA: "IDE disk",
    Transport.MMC: "SD/eMMC card",
    Transport.FC: "Fibre Channel disk",
    Transport.ISCSI: "iSCSI disk",
}
_VIRTUAL_NOUNS = {"loop": "loop device", "zram": "zram device", "nbd": "network block device"}
# What is no name for people: a PCI vendor id (virtio's 0x1af4), libata's "ATA"
_NOT_A_NAME = re.compile(r"^(0x[0-9a-fA-F]{4}|ATA)$")


def disk_kind_words(disk: Disk) -> str:
    """Its vendor and model where known, else what kind of disk it is."""
    vendor = disk.vendor if disk.vendor and not _NOT_A_NAME.match(disk.vendor.strip()) else None
    named = " ".join(part for part in (vendor, disk.model) if part)
    if named:
        return named
    if disk.kind is DiskKind.VIRTUAL:
        stem = re.sub(r"\d+$", "", disk.name)
        return _VIRTUAL_NOUNS.get(stem, "virtual device")
    return _TRANSPORT_NOUNS.get(disk.transport, "disk")


def disk_summary(disk: Disk) -> str:
    """ "WDC WD40EFRX, 4.0 TB, free": what it is, its size where known, what uses it."""
    parts = [disk_kind_words(disk)]
    if disk.size_bytes:
        parts.append(human_size(disk.size_bytes))
    parts.append(STATE_WORDS.get(disk.state, disk.state.value))
    return ", ".join(parts)

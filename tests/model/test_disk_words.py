"""Issue 29.8: a disk in a list is said in words, never as the raw values it was read as."""

from __future__ import annotations

from stripewise.model.disk_words import disk_summary
from stripewise.model.topology import Disk, DiskKind, Partition, Transport


def test_disks_are_said_in_words() -> None:
    virtio = Disk(
        "vda",
        vendor="0x1af4",
        transport=Transport.VIRTIO,
        size_bytes=256 * 2**30,
        partitions=(Partition("vda1", mountpoints=("/srv",)),),
    )
    assert disk_summary(virtio) == "virtio disk, 274.9 GB, in use"
    sata = Disk("sdb", vendor="ATA", model="WDC WD40EFRX", holders=("md0",))
    assert disk_summary(sata) == "WDC WD40EFRX, array member"
    loop = Disk("loop3", kind=DiskKind.VIRTUAL, size_bytes=64 * 2**20)
    assert disk_summary(loop) == "loop device, 67.1 MB, free"

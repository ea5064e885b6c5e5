"""The /dev/disk/by-id and by-path names udev gives a whole disk, from the properties its
rules read, for a source that kept the properties but not the links (a recording or dump
without `S:` lines).

systemd's 60-persistent-storage.rules makes them from exactly these: `$ID_BUS-$ID_SERIAL` for
sd disks (ata-..., scsi-..., usb-...), `wwn-$ID_WWN_WITH_EXTENSION`, `nvme-$ID_SERIAL`,
`virtio-$ID_SERIAL`, and by-path from `ID_PATH` (and `ID_PATH_ATA_COMPAT`). A value with a
character udev would escape is left alone rather than guessed at. A disk that has a link of a
kind keeps its own: nothing is derived beside it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stripewise.system.device_sources import DeviceRecord

_SAFE = re.compile(r"^[A-Za-z0-9#+\-.:=@_]+$")  # kept as they are in a link's name
_SD = re.compile(r"^sd[a-z]+$")
_NVME = re.compile(r"^nvme\d+n\d+$")
_VIRTIO = re.compile(r"^vd[a-z]+$")


def with_derived_links(record: DeviceRecord) -> tuple[str, ...]:
    """The record's links, plus the by-id and by-path names udev's rules give it where the
    record has none of that kind."""
    links = tuple(record.links)
    if record.devtype not in (None, "disk") or record.prop("DM_MULTIPATH_DEVICE_PATH") == "1":
        return links  # a path of a multipath map: udev names the map, not its paths
    found = list(links)
    if not _has(links, "disk/by-id/"):
        found += _by_id(record)
    if not _has(links, "disk/by-path/"):
        found += [
            f"disk/by-path/{value}"
            for key in ("ID_PATH", "ID_PATH_ATA_COMPAT")
            if (value := record.prop(key)) and _SAFE.match(value)
        ]
    return tuple(dict.fromkeys(found))


def _has(links: Sequence[str], prefix: str) -> bool:
    return any(link.startswith(prefix) for link in links)


def _by_id(record: DeviceRecord) -> list[str]:
    name = record.name
    serial = record.prop("ID_SERIAL")
    found: list[str] = []
    if _SD.match(name):
        bus = record.prop("ID_BUS")
        if bus and serial:
            found.append(f"{bus}-{serial}")
        wwn = record.prop("ID_WWN_WITH_EXTENSION")
        if wwn:
            found.append(f"wwn-{wwn}")
    elif _NVME.match(name) and serial:
        found.append(f"nvme-{serial}")
    elif _VIRTIO.match(name) and serial:
        found.append(f"virtio-{serial}")
    return [f"disk/by-id/{link}" for link in found if _SAFE.match(link)]

"""dm-multipath: one disk reached through several paths (the volumes of a dual-ported SAS array
seen by two HBAs, a SAN LUN behind two FC ports), shown as one disk with its paths.

Live, a map's `slaves/` name its paths. A dump records no slaves, so the paths are found the
way multipathd grouped them: by the WWID in the map's DM_UUID (`mpath-<wwid>`, also DM_SERIAL,
DM_WWN, and DM_NAME when user_friendly_names is off). The WWID is a path's ID_SERIAL (SCSI
page 0x83 with its designator type in front: `3` + NAA) or its WWN. The short ID_WWN is not
used when an extension exists: arrays give all their volumes the same first 16 digits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from stripewise.inventory.kernel_names import natural_key
from stripewise.model.topology import Disk, DiskKind, DiskPath
from stripewise.system.device_sources import DeviceRecord, DeviceSource

_STRONG_WWNS = ("SCSI_IDENT_LUN_NAA_REGEXT", "SCSI_IDENT_LUN_NAA_REG", "SCSI_IDENT_LUN_NAA_EXT")
_WEAK = ("ID_SCSI_SERIAL", "SCSI_IDENT_SERIAL", "ID_SERIAL_SHORT")


@dataclass(frozen=True)
class Pairing:
    """Multipath maps (dm kernel name) and their paths (kernel names, in name order)."""

    paths: dict[str, tuple[str, ...]]
    warnings: tuple[str, ...] = ()

    def map_of(self, path: str) -> str | None:
        return next((m for m, below in self.paths.items() if path in below), None)


def _normal(value: str | None) -> str | None:
    """Lower case, without the `0x`/`naa.`/`eui.` a tool may put in front."""
    if not value or not value.strip():
        return None
    text = value.strip().lower()
    for prefix in ("0x", "naa.", "eui."):
        if text.startswith(prefix):
            return text[len(prefix) :] or None
    return text


def path_identities(source: DeviceSource, record: DeviceRecord) -> tuple[set[str], set[str]]:
    """(strong, weak) identities of a path. Weak ones (unit serial numbers) serve only for
    maps no strong identity matched: some arrays give every volume the array's serial."""
    strong: set[str] = set()
    wwns = [
        record.prop("ID_WWN_WITH_EXTENSION") or record.prop("ID_WWN"),
        *(record.prop(key) for key in _STRONG_WWNS),
        source.attribute(record.path, "wwid"),
        source.attribute(record.path, "device/wwid"),
    ]
    for wwn in wwns:
        value = _normal(wwn)
        if value:
            strong |= {value, f"3{value}"}  # scsi_id puts the NAA designator type first
    serial = _normal(record.prop("ID_SERIAL"))
    if serial:
        strong.add(serial)
    weak = {value for key in _WEAK if (value := _normal(record.prop(key)))}
    return strong, weak - strong


def dm_uuid(source: DeviceSource, record: DeviceRecord) -> str | None:
    return (
        record.prop("DM_UUID") or (source.attribute(record.path, "dm/uuid") or "").strip() or None
    )


def map_identities(source: DeviceSource, record: DeviceRecord) -> set[str] | None:
    """What a multipath map's paths may be known by; None for other dm devices (LVM, crypt)."""
    uuid = dm_uuid(source, record)
    if uuid and not uuid.startswith("mpath-"):
        return None
    names = [
        uuid.removeprefix("mpath-") if uuid else None,
        record.prop("DM_SERIAL"),
        record.prop("DM_WWN"),
        record.prop("DM_NAME") or source.attribute(record.path, "dm/name"),
    ]
    return {value for name in names if (value := _normal(name))}


def pair_paths(
    source: DeviceSource,
    maps: Sequence[DeviceRecord],
    slaves: Callable[[str], Iterable[str]],
    candidates: Sequence[DeviceRecord],
) -> Pairing:
    """Each multipath map among `maps` with the `candidates` (whole disks behind a controller
    port) that are its paths: its slaves where the source knows them, else by identity."""
    names = {record.name for record in candidates}
    found: dict[str, tuple[str, ...]] = {}
    pending: dict[str, tuple[DeviceRecord, set[str]]] = {}
    for record in maps:
        wanted = map_identities(source, record)
        below = list(slaves(record.name))
        if below:  # live: only a map that says it is multipath (LVM may sit on whole disks)
            if (dm_uuid(source, record) or "").startswith("mpath-"):
                found[record.name] = tuple(name for name in below if name in names)
        elif wanted:
            pending[record.name] = (record, wanted)
    claimed = {name for below in found.values() for name in below}
    # read only for maps left to pair by identity: two sysfs reads a disk, 960 on a big host
    identities = (
        {record.name: path_identities(source, record) for record in candidates} if pending else {}
    )
    for tier in (0, 1):  # strong identities for every map first, then unit serials
        for name, (_record, wanted) in list(pending.items()):
            below = [
                path
                for path in sorted(identities)
                if path not in claimed and identities[path][tier] & wanted
            ]
            if below:
                found[name] = tuple(below)
                claimed.update(below)
                del pending[name]
    warnings = tuple(
        f"{name} ({_label(record)}): none of its paths found: listed as a volume only"
        for name, (record, _wanted) in pending.items()
        if (dm_uuid(source, record) or "").startswith("mpath-")
    )
    paired = {name: tuple(sorted(below, key=natural_key)) for name, below in found.items() if below}
    return Pairing(paired, warnings)


def _label(record: DeviceRecord) -> str:
    name = record.prop("DM_NAME")
    return f"multipath {name}" if name else "multipath"


def merged_disk(
    volume: Disk, paths: Sequence[tuple[Disk, DiskPath]], reasons: Sequence[str]
) -> Disk:
    """The map as one disk: what it holds and its queue are the map's (what is read and
    written), what it is (model, serial, WWN, transport) is its first path's."""
    first = paths[0][0]
    return replace(
        volume,
        kind=DiskKind.DISK,
        wwn=first.wwn or volume.wwn,
        serial=first.serial or volume.serial,
        vendor=first.vendor or volume.vendor,
        model=first.model or volume.model,
        size_bytes=volume.size_bytes if volume.size_bytes is not None else first.size_bytes,
        logical_block_size=volume.logical_block_size or first.logical_block_size,
        physical_block_size=volume.physical_block_size or first.physical_block_size,
        rotational=first.rotational if first.rotational is not None else volume.rotational,
        transport=first.transport,
        hctl=None,
        by_path=(),  # each names one path, not the disk
        system_reasons=tuple(dict.fromkeys(reasons)),
        paths=tuple(path for _disk, path in paths),
    )

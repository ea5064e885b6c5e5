"""Turn a device source into the hardware map: controllers, slots, disks, arrays."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from stripewise.inventory import multipath, nvme_paths, ports
from stripewise.inventory.controllers import Occupant, controller_id, controllers, with_lun
from stripewise.inventory.enclosures import read_enclosures
from stripewise.inventory.kernel_names import disk_of_partition, natural_key
from stripewise.inventory.md_records import md_prop, member_names
from stripewise.inventory.nvme_paths import NvmeHeads
from stripewise.inventory.stable_names import with_derived_links
from stripewise.model.topology import (
    Array,
    Disk,
    DiskKind,
    DiskPath,
    Inventory,
    Partition,
    Transport,
)
from stripewise.system import disks as facts
from stripewise.system.device_sources import DeviceRecord, DeviceSource

_VIRTUAL = re.compile(r"^(loop|zram|ram|nbd|rbd|zd)\d+")
_DM_PARTITION = re.compile(r"^part\d+-(.+)$")  # kpartx: DM_UUID part1-mpath-<wwid>


@dataclass
class _Graph:
    """Who is built on whom: md/dm holders and their slaves, by kernel name."""

    holders: dict[str, set[str]] = field(default_factory=dict)
    slaves: dict[str, set[str]] = field(default_factory=dict)

    def link(self, lower: str, upper: str) -> None:
        self.holders.setdefault(lower, set()).add(upper)
        self.slaves.setdefault(upper, set()).add(lower)

    def holders_of(self, name: str) -> tuple[str, ...]:
        return tuple(sorted(self.holders.get(name, ())))


def build_inventory(source: DeviceSource, labels: Mapping[str, str] | None = None) -> Inventory:
    records = source.block_devices()
    partitions_of: dict[str, list[DeviceRecord]] = {}
    for record in records:
        if _is_partition(record):
            parent = record.path.rsplit("/", 1)[0].rsplit("/", 1)[-1]
            partitions_of.setdefault(parent, []).append(record)
    owner = {p.name: disk for disk, parts in partitions_of.items() for p in parts}
    wholes = [
        r
        for r in records
        if not _is_partition(r) and r.devtype in (None, "disk") and not _not_a_disk(source, r)
    ]
    heads = NvmeHeads(source, records)
    located = {
        r.name: found for r in wholes if _kind(r) is DiskKind.DISK if (found := heads.locate(r))
    }
    port_of = {name: with_lun(found[0].port) for name, found in located.items()}
    graph = _holder_graph(source, records)
    pairing = multipath.pair_paths(
        source,
        [r for r in wholes if _kind(r) is DiskKind.VOLUME],
        lambda name: graph.slaves.get(name, ()),
        [r for r in wholes if r.name in port_of],
    )
    for name, below in pairing.paths.items():  # a dump records no slaves: what pairing found
        for path in below:
            graph.link(path, name)
    owner |= _unlisted_partitions(graph, {r.name for r in records})
    owned: dict[str, list[str]] = {}  # disk -> its partitions: looked up per disk, never scanned
    for part, whole in owner.items():
        owned.setdefault(whole, []).append(part)
    system = _system_reasons(source, records, graph, owner)
    warnings = list(source.warnings)
    if source.kind in ("udev-dump", "umockdev-file"):
        warnings.append("mounts and swap are not recorded in a dump: system disks are unknown")
    warnings += pairing.warnings

    built: dict[str, Disk] = {}
    physical: list[Occupant] = []
    virtual: list[Disk] = []
    arrays: list[Array] = []
    paths = {path for below in pairing.paths.values() for path in below}
    for record in wholes:
        kind = _kind(record)
        port = port_of.get(record.name)
        parts = partitions_of.get(record.name, [])
        unlisted = owned.get(record.name, ())
        disk = _disk(source, record, kind, parts, graph, unlisted, system, port)
        built[record.name] = disk
        if record.name in paths:
            continue  # shown as a path of its multipath disk
        if kind is DiskKind.DISK and port is not None and len(located[record.name]) > 1:
            physical += nvme_paths.occupants(disk, located[record.name])
        elif kind is DiskKind.DISK and port is not None:
            physical.append(Occupant(port, record.name, record.path, disk))
        elif kind in (DiskKind.ARRAY, DiskKind.VOLUME):
            arrays.append(_array(source, record, kind, graph, owner, disk))
        else:
            virtual.append(
                replace(disk, kind=DiskKind.VIRTUAL if kind is DiskKind.VIRTUAL else kind)
            )
    links_of = {r.name: r.links for r in wholes}
    for name, below in pairing.paths.items():
        links = links_of[name]
        mapper = next((link for link in links if link.startswith("mapper/")), None)
        volume = replace(built[name], devnode=f"/dev/{mapper}") if mapper else built[name]
        physical += _multipath_occupants(volume, [built[p] for p in below], port_of)
    return Inventory(
        host=source.host,
        source=source.kind,
        controllers=controllers(source, physical, read_enclosures(source), labels or {}),
        virtual=tuple(sorted(virtual, key=lambda d: natural_key(d.name))),
        arrays=tuple(sorted(arrays, key=lambda a: natural_key(a.name))),
        warnings=tuple(warnings),
        taken_at=datetime.now(UTC).isoformat(timespec="seconds"),
        incomplete=source.incomplete,
    )


def _multipath_occupants(
    volume: Disk, paths: list[Disk], port_of: Mapping[str, ports.PortInfo]
) -> list[Occupant]:
    """The multipathed disk at its first path's port; the other ports say whose path they are."""
    entries = [
        (
            path,
            DiskPath(
                name=path.name,
                controller=controller_id(port_of[path.name].controller_path),
                port=port_of[path.name].port,
                hctl=port_of[path.name].hctl,
                by_path=path.by_path,
            ),
        )
        for path in paths
    ]
    reasons = [*volume.system_reasons, *(r for path in paths for r in path.system_reasons)]
    disk = multipath.merged_disk(volume, entries, reasons)
    first = paths[0]
    found = [Occupant(port_of[first.name], first.name, first.sys_path or "", disk=disk)]
    for path in paths[1:]:
        note = f"{path.name}: path to {disk.name}"
        where = (port_of[path.name], path.name, path.sys_path or "")
        found.append(Occupant(*where, path_of=disk.name, note=note))
    return found


def _unlisted_partitions(graph: _Graph, known: set[str]) -> dict[str, str]:
    """Members a dump names (MD_DEVICE_sda3_DEV) without a record of the partition: the disk
    its name points to, when that disk is listed."""
    found = {}
    for name in graph.holders:
        parent = disk_of_partition(name) if name not in known else None
        if parent is not None and parent in known:
            found[name] = parent
    return found


_NOT_DISKS = re.compile(r"^(sr\d+|fd\d+|mmcblk\d+(boot\d+|rpmb)|nvme\d+c\d+n\d+)$")


def _not_a_disk(source: DeviceSource, record: DeviceRecord) -> bool:
    """Optical drives, floppies, eMMC boot/RPMB areas, and the hidden per-path devices of a
    multipathed NVMe namespace (the namespace itself is listed once)."""
    if record.prop("ID_CDROM") == "1" or _NOT_DISKS.match(record.name):
        return True
    # only NVMe's per-path disks are ever hidden: a read saved for every other disk
    return record.name.startswith("nvme") and source.attribute(record.path, "hidden") == "1"


def _is_partition(record: DeviceRecord) -> bool:
    return record.devtype == "partition"


def _kind(record: DeviceRecord) -> DiskKind:
    if record.path.startswith("/devices/virtual/block/"):
        if record.name.startswith("md"):
            return DiskKind.ARRAY
        if record.name.startswith("dm-"):
            return DiskKind.VOLUME
        return DiskKind.VIRTUAL
    if _VIRTUAL.match(record.name):
        return DiskKind.VIRTUAL
    return DiskKind.DISK


def _holder_graph(source: DeviceSource, records: list[DeviceRecord]) -> _Graph:
    """From holders/ and slaves/ where the source has them; a dump has only properties: md
    members (mdadm's or udisks' keys, by kernel name or any /dev link) and kpartx maps."""
    graph = _Graph()
    by_node = {f"/dev/{link}": r.name for r in records for link in (*r.links, r.name)}
    by_uuid = {uuid: r.name for r in records if (uuid := r.prop("DM_UUID"))}
    for record in records:
        for upper in source.entries(f"{record.path}/holders"):
            graph.link(record.name, upper)
        # only md, dm and their kin (all virtual) are built on slaves: not listed for the rest
        if record.path.startswith("/devices/virtual/"):
            for lower in source.entries(f"{record.path}/slaves"):
                graph.link(lower, record.name)
        for member in member_names(record, by_node):
            graph.link(member, record.name)
        partition_of = _DM_PARTITION.match(record.prop("DM_UUID") or "")
        if partition_of and partition_of.group(1) in by_uuid:
            graph.link(by_uuid[partition_of.group(1)], record.name)
    return graph


def _system_reasons(
    source: DeviceSource, records: list[DeviceRecord], graph: _Graph, owner: dict[str, str]
) -> dict[str, list[str]]:
    """Whole-disk name -> why it holds the running system (/, /boot, /usr, active swap)."""
    from stripewise.system.mounts import is_system_mountpoint

    reasons: dict[str, list[str]] = {}
    for record in records:
        mounted = source.mounts.mountpoints(record.name, facts.devno(source, record))
        why = [f"{m} on {record.name}" for m in mounted if is_system_mountpoint(m)]
        if source.mounts.is_swap(record.name):
            why.append(f"swap on {record.name}")
        if not why:
            continue
        for leaf in _leaves(record.name, graph):
            disk = owner.get(leaf, leaf)
            for reason in why:
                if reason not in reasons.setdefault(disk, []):
                    reasons[disk].append(reason)
    return reasons


def _leaves(name: str, graph: _Graph, depth: int = 0) -> set[str]:
    below = graph.slaves.get(name)
    if not below or depth > 16:
        return {name}
    return set().union(*(_leaves(n, graph, depth + 1) for n in below))


def _disk(
    source: DeviceSource,
    record: DeviceRecord,
    kind: DiskKind,
    partitions: list[DeviceRecord],
    graph: _Graph,
    owned: Sequence[str],
    system: dict[str, list[str]],
    port: ports.PortInfo | None,
) -> Disk:
    model, vendor = facts.model_and_vendor(source, record)
    active, choices = facts.scheduler(source, record.path)
    number = facts.devno(source, record)
    parts = tuple(
        Partition(
            name=p.name,
            size_bytes=facts.size_bytes(source, p),
            fs_type=p.prop("ID_FS_TYPE") or source.probe_fs_type(p, facts.devno(source, p)),
            fs_label=p.prop("ID_FS_LABEL"),
            mountpoints=source.mounts.mountpoints(p.name, facts.devno(source, p)),
            holders=graph.holders_of(p.name),
        )
        for p in sorted(partitions, key=lambda p: natural_key(p.name))
    )
    listed = {p.name for p in partitions}
    unlisted = [n for n in owned if n not in listed]
    holders = {*graph.holders_of(record.name), *(h for n in unlisted for h in graph.holders_of(n))}
    swapped = source.mounts.is_swap(record.name) or any(
        source.mounts.is_swap(p.name) for p in partitions
    )
    links = with_derived_links(record)  # a recording without udev's S: lines (issue 29.2)
    return Disk(
        name=record.name,
        kind=kind,
        devnode=record.prop("DEVNAME") or f"/dev/{record.name}",
        major_minor=number,
        wwn=facts.wwn(source, record),
        serial=facts.serial(source, record, port.controller_path if port else None),
        by_id=tuple(sorted(link for link in links if link.startswith("disk/by-id/"))),
        by_path=tuple(sorted(link for link in links if link.startswith("disk/by-path/"))),
        vendor=vendor,
        model=model,
        size_bytes=facts.size_bytes(source, record),
        logical_block_size=facts.int_attr(source, record.path, "queue/logical_block_size"),
        physical_block_size=facts.int_attr(source, record.path, "queue/physical_block_size"),
        rotational=facts.rotational(source, record),
        transport=port.transport if port else _transport_without_port(kind),
        hctl=port.hctl if port else None,
        partition_table=record.prop("ID_PART_TABLE_TYPE"),
        fs_type=record.prop("ID_FS_TYPE") or source.probe_fs_type(record, number),
        partitions=parts,
        mountpoints=source.mounts.mountpoints(record.name, number),
        holders=tuple(sorted(holders)),
        swap=swapped,
        system_reasons=tuple(system.get(record.name, ())),
        read_ahead_kb=facts.int_attr(source, record.path, "queue/read_ahead_kb"),
        scheduler=active,
        schedulers=choices,
        sys_path=record.path,
        usage_known=source.mounts_known,
        diskseq=facts.int_attr(source, record.path, "diskseq"),
    )


def _transport_without_port(kind: DiskKind) -> Transport:
    return Transport.VIRTUAL if kind is not DiskKind.DISK else Transport.UNKNOWN


def _array(
    source: DeviceSource,
    record: DeviceRecord,
    kind: DiskKind,
    graph: _Graph,
    owner: Mapping[str, str],
    disk: Disk,
) -> Array:
    raid_devices = None
    if kind is DiskKind.ARRAY:
        level = source.attribute(record.path, "md/level") or md_prop(record, "LEVEL")
        chunk = facts.int_attr(source, record.path, "md/chunk_size")
        state = source.attribute(record.path, "md/array_state")
        label = md_prop(record, "DEVNAME") or md_prop(record, "NAME")
        uuid = md_prop(record, "UUID") or source.attribute(record.path, "md/uuid")
        raid_devices = facts.int_attr(source, record.path, "md/raid_disks")
        count = (md_prop(record, "DEVICES") or "").strip()
        if raid_devices is None and count.isascii() and count.isdigit():
            raid_devices = int(count)
    else:
        uuid = record.prop("DM_UUID") or source.attribute(record.path, "dm/uuid")
        level = _dm_kind(uuid)
        chunk, state = None, None
        label = record.prop("DM_NAME") or source.attribute(record.path, "dm/name")
    members = tuple(sorted(graph.slaves.get(record.name, ()), key=natural_key))
    return Array(
        name=record.name,
        kind=kind,
        level=level,
        members=members,
        member_disks=tuple(dict.fromkeys(owner.get(m, m) for m in members)),
        raid_devices=raid_devices,
        size_bytes=disk.size_bytes,
        chunk_kib=chunk // 1024 if chunk else None,
        uuid=uuid,
        label=label,
        mountpoints=disk.all_mountpoints,
        state=state,
    )


def _dm_kind(uuid: str | None) -> str | None:
    prefixes = {"LVM-": "lvm", "CRYPT-": "crypt", "mpath-": "multipath", "part": "partition"}
    return next(
        (kind for prefix, kind in prefixes.items() if uuid and uuid.startswith(prefix)), None
    )

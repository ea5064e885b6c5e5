"""Turn a device source into the hardware map: controllers, slots, disks, arrays."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from stripewise.inventory import disks as facts
from stripewise.inventory import ports
from stripewise.inventory.enclosures import BayMap, read_enclosures
from stripewise.inventory.pci import hex_id, parse_link, pci_names
from stripewise.inventory.sources import DeviceRecord, DeviceSource
from stripewise.model.topology import (
    Array,
    Controller,
    Disk,
    DiskKind,
    Inventory,
    Partition,
    PciFunction,
    Slot,
    Transport,
)

_VIRTUAL = re.compile(r"^(loop|zram|ram|nbd|rbd|zd)\d+")
_MD_MEMBER = re.compile(r"^MD_DEVICE_(?:ev_|dev_)?(.+)_DEV$")


@dataclass
class _Graph:
    """Who is built on whom: md/dm holders and their slaves, by kernel name."""

    holders: dict[str, set[str]] = field(default_factory=dict)
    slaves: dict[str, set[str]] = field(default_factory=dict)

    def link(self, lower: str, upper: str) -> None:
        self.holders.setdefault(lower, set()).add(upper)
        self.slaves.setdefault(upper, set()).add(lower)


def build_inventory(source: DeviceSource, labels: Mapping[str, str] | None = None) -> Inventory:
    records = source.block_devices()
    partitions_of: dict[str, list[DeviceRecord]] = {}
    for record in records:
        if _is_partition(record):
            parent = record.path.rsplit("/", 1)[0].rsplit("/", 1)[-1]
            partitions_of.setdefault(parent, []).append(record)
    owner = {p.name: disk for disk, parts in partitions_of.items() for p in parts}
    graph = _holder_graph(source, records)
    system = _system_reasons(source, records, graph, owner)
    warnings: list[str] = []
    if source.kind in ("udev-dump", "umockdev-file"):
        warnings.append("mounts and swap are not recorded in a dump: system disks are unknown")

    physical: list[tuple[Disk, ports.PortInfo]] = []
    virtual: list[Disk] = []
    arrays: list[Array] = []
    for record in records:
        if _is_partition(record) or record.devtype not in (None, "disk"):
            continue
        if _not_a_disk(source, record):
            continue
        kind = _kind(record)
        port = ports.locate(source, record) if kind is DiskKind.DISK else None
        disk = _disk(source, record, kind, partitions_of.get(record.name, []), graph, system, port)
        if kind is DiskKind.DISK and port is not None:
            physical.append((disk, port))
        elif kind in (DiskKind.ARRAY, DiskKind.VOLUME):
            arrays.append(_array(source, record, kind, graph, disk))
        else:
            virtual.append(
                replace(disk, kind=DiskKind.VIRTUAL if kind is DiskKind.VIRTUAL else kind)
            )
    bays = read_enclosures(source)
    controllers = _controllers(source, physical, bays, labels or {})
    return Inventory(
        host=source.host,
        source=source.kind,
        controllers=controllers,
        virtual=tuple(sorted(virtual, key=lambda d: _natural(d.name))),
        arrays=tuple(sorted(arrays, key=lambda a: _natural(a.name))),
        warnings=tuple(warnings),
        taken_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


_NOT_DISKS = re.compile(r"^(sr\d+|fd\d+|mmcblk\d+(boot\d+|rpmb)|nvme\d+c\d+n\d+)$")


def _not_a_disk(source: DeviceSource, record: DeviceRecord) -> bool:
    """Optical drives, floppies, eMMC boot/RPMB areas, and the hidden per-path devices of a
    multipathed NVMe namespace (the namespace itself is listed once)."""
    if record.prop("ID_CDROM") == "1" or _NOT_DISKS.match(record.name):
        return True
    return source.attribute(record.path, "hidden") == "1"


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
    graph = _Graph()
    for record in records:
        for upper in source.entries(f"{record.path}/holders"):
            graph.link(record.name, upper)
        for lower in source.entries(f"{record.path}/slaves"):
            graph.link(lower, record.name)
        for key, value in record.properties.items():  # dumps: mdadm --export members
            if _MD_MEMBER.match(key) and value.startswith("/dev/"):
                graph.link(value.rsplit("/", 1)[-1], record.name)
    return graph


def _system_reasons(
    source: DeviceSource, records: list[DeviceRecord], graph: _Graph, owner: dict[str, str]
) -> dict[str, list[str]]:
    """Whole-disk name -> why it holds the running system (/, /boot, /usr, active swap)."""
    from stripewise.inventory.mounts import is_system_mountpoint

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
            holders=tuple(sorted(graph.holders.get(p.name, ()))),
        )
        for p in sorted(partitions, key=lambda p: _natural(p.name))
    )
    swapped = source.mounts.is_swap(record.name) or any(
        source.mounts.is_swap(p.name) for p in partitions
    )
    return Disk(
        name=record.name,
        kind=kind,
        devnode=record.prop("DEVNAME") or f"/dev/{record.name}",
        major_minor=number,
        wwn=facts.wwn(source, record),
        serial=facts.serial(source, record, port.controller_path if port else None),
        by_id=tuple(sorted(link for link in record.links if link.startswith("disk/by-id/"))),
        by_path=tuple(sorted(link for link in record.links if link.startswith("disk/by-path/"))),
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
        holders=tuple(sorted(graph.holders.get(record.name, ()))),
        swap=swapped,
        system_reasons=tuple(system.get(record.name, ())),
        read_ahead_kb=facts.int_attr(source, record.path, "queue/read_ahead_kb"),
        scheduler=active,
        schedulers=choices,
        sys_path=record.path,
        usage_known=source.mounts_known,
    )


def _transport_without_port(kind: DiskKind) -> Transport:
    return Transport.VIRTUAL if kind is not DiskKind.DISK else Transport.UNKNOWN


def _array(
    source: DeviceSource, record: DeviceRecord, kind: DiskKind, graph: _Graph, disk: Disk
) -> Array:
    if kind is DiskKind.ARRAY:
        level = source.attribute(record.path, "md/level") or record.prop("MD_LEVEL")
        chunk = facts.int_attr(source, record.path, "md/chunk_size")
        state = source.attribute(record.path, "md/array_state")
        label = record.prop("MD_DEVNAME") or record.prop("MD_NAME")
        uuid = record.prop("MD_UUID") or source.attribute(record.path, "md/uuid")
    else:
        uuid = record.prop("DM_UUID") or source.attribute(record.path, "dm/uuid")
        level = _dm_kind(uuid)
        chunk, state = None, None
        label = record.prop("DM_NAME") or source.attribute(record.path, "dm/name")
    return Array(
        name=record.name,
        kind=kind,
        level=level,
        members=tuple(sorted(graph.slaves.get(record.name, ()), key=_natural)),
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


def _controllers(
    source: DeviceSource,
    physical: list[tuple[Disk, ports.PortInfo]],
    bays: BayMap,
    labels: Mapping[str, str],
) -> tuple[Controller, ...]:
    grouped: dict[str, list[tuple[Disk, ports.PortInfo]]] = {}
    for disk, port in physical:
        grouped.setdefault(port.controller_path, []).append((disk, port))
    for path in bays.controller_paths():
        grouped.setdefault(path, [])
    built = [_controller(source, path, members, bays, labels) for path, members in grouped.items()]
    return tuple(sorted(built, key=lambda c: (c.root is None, c.root or "", _natural(c.id))))


def _controller(
    source: DeviceSource,
    path: str,
    members: list[tuple[Disk, ports.PortInfo]],
    bays: BayMap,
    labels: Mapping[str, str],
) -> Controller:
    record = source.device(path)
    name = path.rsplit("/", 1)[-1]
    pci = None
    vendor_name = model_name = None
    if ports.PCI_ADDRESS.match(name):
        vendor_id = hex_id(source.attribute(path, "vendor")) or _pci_id(record, 0)
        device_id = hex_id(source.attribute(path, "device")) or _pci_id(record, 1)
        pci = PciFunction(
            address=name,
            vendor_id=vendor_id,
            device_id=device_id,
            driver=record.driver if record else None,
            link=parse_link(
                source.attribute(path, "current_link_speed"),
                source.attribute(path, "current_link_width"),
            ),
            max_link=parse_link(
                source.attribute(path, "max_link_speed"), source.attribute(path, "max_link_width")
            ),
        )
        db_vendor, db_model = pci_names(vendor_id, device_id)
        vendor_name = (record.prop("ID_VENDOR_FROM_DATABASE") if record else None) or db_vendor
        model_name = (record.prop("ID_MODEL_FROM_DATABASE") if record else None) or db_model
        if model_name is None and vendor_id:
            model_name = f"PCI device {vendor_id}:{device_id or '????'}"
    elif record is not None and record.driver:
        model_name = f"{record.driver} controller ({record.subsystem or 'platform'} device)"
    kinds = {port.kind for _disk, port in members}
    driver = record.driver if record else None
    kind = driver or (kinds.pop() if len(kinds) == 1 else "unknown")
    root, bridges = ports.pci_chain(path)
    controller_id = name
    slots, port_count = _slots(source, path, controller_id, members, bays, labels)
    return Controller(
        id=controller_id,
        kind=kind,
        model=model_name,
        vendor=vendor_name,
        driver=driver,
        pci=pci,
        root=root,
        bridges=bridges,
        port_count=port_count,
        slots=slots,
    )


def _pci_id(record: DeviceRecord | None, index: int) -> str | None:
    pci_id = record.prop("PCI_ID") if record else None  # "11AB:6081"
    if pci_id and ":" in pci_id:
        return hex_id(pci_id.split(":")[index])
    return None


def _slots(
    source: DeviceSource,
    path: str,
    controller_id: str,
    members: list[tuple[Disk, ports.PortInfo]],
    bays: BayMap,
    labels: Mapping[str, str],
) -> tuple[tuple[Slot, ...], int | None]:
    """Occupied ports, plus empty ones where the controller says how many it has."""
    entries: dict[str, tuple[tuple[object, ...], Slot]] = {}
    for disk, port in members:
        bay = bays.bay_of(disk.sys_path or "")
        if bay is not None:
            key = f"{bay.enclosure}/{bay.name}"
            slot = Slot(0, f"{bay.name} ({port.port})", key, disk, bay)
            entries[key] = ((0, *bays.order(bay)), slot)
        else:
            key = f"{controller_id}/{port.key}"
            if key in entries:  # two disks the port scheme cannot tell apart: keep both
                key = f"{key}/{disk.name}"
            entries[key] = ((1, *port.order), Slot(0, port.port, key, disk))
    port_count: int | None = None
    kinds = {port.kind for _disk, port in members}
    ata = ports.ata_ports(source, path)
    if ata and kinds <= {"ata"}:
        port_count = len(ata)
        for _name, number in ata:
            key = f"{controller_id}/ata-{number}"
            if key not in entries:
                entries[key] = ((1, number, 0, 0), Slot(0, f"port {number - 1}", key))
    phys = ports.sas_phys(source, path)
    if phys and kinds <= {"sas"}:
        port_count = len(phys)
        for phy, expander in phys.items():
            key = f"{controller_id}/phy-{phy}"
            if key not in entries:
                note = f"cable to expander {expander}" if expander else None
                entries[key] = ((1, 0, phy), Slot(0, f"phy {phy}", key, note=note))
    for bay in bays.bays_under(path):
        key = f"{bay.enclosure}/{bay.name}"
        if key not in entries:
            entries[key] = ((0, *bays.order(bay)), Slot(0, bay.name, key, None, bay))
    ordered = sorted(entries.values(), key=lambda item: item[0])
    slots = tuple(
        replace(slot, index=index, label=labels.get(slot.key))
        for index, (_order, slot) in enumerate(ordered)
    )
    return slots, port_count


def _natural(text: str) -> tuple[object, ...]:
    """sdb < sdaa, md2 < md10: kernel names in the order people expect."""
    return tuple(
        (len(part), part) if not part.isdigit() else (0, int(part))
        for part in re.findall(r"\d+|\D+", text)
    )

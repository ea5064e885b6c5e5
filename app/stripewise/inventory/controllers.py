"""Controllers and their slots in physical port order, from the disks found behind them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from stripewise.inventory import ports
from stripewise.inventory.enclosures import BayMap
from stripewise.inventory.kernel_names import natural_key
from stripewise.model.topology import Controller, Disk, PciFunction, Slot
from stripewise.system.device_sources import DeviceRecord, DeviceSource
from stripewise.system.pci import PCI_ADDRESS, hex_id, parse_link, pci_names


@dataclass(frozen=True)
class Occupant:
    """What a port holds: a disk, or a further path to a multipathed disk shown at its first
    path (`disk` None, `path_of` naming that disk)."""

    port: ports.PortInfo
    name: str  # kernel name of the device at this port
    sys_path: str  # its devpath: what an enclosure bay points to
    disk: Disk | None = None
    path_of: str | None = None
    note: str | None = None


def controller_id(controller_path: str) -> str:
    """A controller's id: its PCI address, or its platform or virtual device name."""
    return controller_path.rsplit("/", 1)[-1]


def with_lun(port: ports.PortInfo) -> ports.PortInfo:
    """Volumes of an array behind one SAS port differ only by LUN: name it, past LUN 0 (whose
    slot key stays what it always was, so labels keep their slots)."""
    lun = int(port.hctl.rsplit(":", 1)[1]) if port.hctl else 0
    if not lun or "lun" in port.port:
        return port
    return replace(
        port, port=f"{port.port} lun {lun}", key=f"{port.key}-lun-{lun}", order=(*port.order, lun)
    )


def controllers(
    source: DeviceSource,
    physical: list[Occupant],
    bays: BayMap,
    labels: Mapping[str, str],
) -> tuple[Controller, ...]:
    grouped: dict[str, list[Occupant]] = {}
    for occupant in physical:
        grouped.setdefault(occupant.port.controller_path, []).append(occupant)
    for path in [*bays.controller_paths(), *storage_functions(source)]:
        grouped.setdefault(path, [])  # shown with no disks: an admin plans purchases onto them
    built = [_controller(source, path, members, bays, labels) for path, members in grouped.items()]
    return tuple(sorted(built, key=lambda c: (c.root is None, c.root or "", natural_key(c.id))))


_STORAGE_CLASS = 0x01  # PCI base class "mass storage controller": SCSI, IDE, RAID, SATA, SAS, NVM
_NOT_FOR_THIS_HOST = frozenset({"vfio-pci", "pci-stub"})  # handed to a virtual machine


def storage_functions(source: DeviceSource) -> list[str]:
    """Devpaths of the PCI storage controllers with a driver bound, with disks or without."""
    found = []
    for record in source.devices_of("pci"):
        code = source.attribute(record.path, "class") or record.prop("PCI_CLASS") or ""
        try:
            base = int(code.strip(), 16) >> 16
        except ValueError:
            continue
        if base == _STORAGE_CLASS and record.driver and record.driver not in _NOT_FOR_THIS_HOST:
            found.append(record.path)
    return found


def _controller(
    source: DeviceSource,
    path: str,
    members: list[Occupant],
    bays: BayMap,
    labels: Mapping[str, str],
) -> Controller:
    record = source.device(path)
    name = controller_id(path)
    pci = None
    vendor_name = model_name = None
    if PCI_ADDRESS.match(name):
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
    kinds = {occupant.port.kind for occupant in members}
    driver = record.driver if record else None
    kind = driver or (kinds.pop() if len(kinds) == 1 else "unknown")
    root, bridges = ports.pci_chain(path)
    slots, port_count = _slots(source, path, name, members, bays, labels)
    return Controller(
        id=name,
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
    ident: str,
    members: list[Occupant],
    bays: BayMap,
    labels: Mapping[str, str],
) -> tuple[tuple[Slot, ...], int | None]:
    """Occupied ports, plus empty ones where the controller says how many it has."""
    entries: dict[str, tuple[tuple[object, ...], Slot]] = {}
    for occupant in members:
        port, disk = occupant.port, occupant.disk
        bay = bays.bay_of(occupant.sys_path)
        note, path_of = occupant.note, occupant.path_of  # made whole: no replace() a disk
        if bay is not None:
            key = f"{bay.enclosure}/{bay.name}"
            slot = Slot(0, f"{bay.name} ({port.port})", key, disk, bay, note=note, path_of=path_of)
            order: tuple[object, ...] = (0, *bays.order(bay))
        else:
            key = f"{ident}/{port.key}"
            if key in entries:  # two disks the port scheme cannot tell apart: keep both
                key = f"{key}/{occupant.name}"
            slot = Slot(0, port.port, key, disk, note=note, path_of=path_of)
            order = (1, *port.order)
        entries[key] = (order, slot)
    port_count: int | None = None
    kinds = {occupant.port.kind for occupant in members}
    ata = ports.ata_ports(source, path)
    if ata and kinds <= {"ata"}:
        port_count = len(ata)
        for _name, number in ata:
            key = f"{ident}/ata-{number}"
            if key not in entries:
                entries[key] = ((1, number, 0, 0), Slot(0, f"port {number - 1}", key))
    phys = ports.sas_phys(source, path)
    if phys and kinds <= {"sas"}:
        port_count = len(phys)
        for phy, expander in phys.items():
            key = f"{ident}/phy-{phy}"
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

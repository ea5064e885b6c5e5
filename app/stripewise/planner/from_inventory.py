"""Plans start from hardware: the real controllers and disks of an inventory, or catalog
entries for hardware not bought yet."""

from __future__ import annotations

from collections.abc import Mapping

from stripewise.model.plan import DEFAULT_INNER_RATIO, Plan, PlanController, PlanDisk
from stripewise.model.topology import Controller, Disk, Inventory
from stripewise.planner.catalog import Catalog, CatalogController, CatalogDisk, load_catalog
from stripewise.planner.sizes import UNKNOWN_SIZE

_BY_ID_PREFERRED = ("ata-", "scsi-", "nvme-")
BAY_PREFIX = "bay "


def plan_from_inventory(
    inventory: Inventory,
    catalog: Catalog | None = None,
    name: str = "Untitled plan",
    bays: Mapping[str, str] | None = None,
) -> Plan:
    """Every controller and every disk on the map, no arrays yet. Speeds come from the catalog
    when it knows the disk's model; a controller whose link the kernel does not report (PCI,
    PCI-X) gets its catalog ceiling. A size the inventory does not know (a udev dump records
    none) stays unknown: UNKNOWN_SIZE, never a size looked up by model (see planner.sizes).
    A disk in a mapped bay (`bays`: disk name -> label) has "bay LABEL" for its slot."""
    bays = bays or {}
    catalog = catalog if catalog is not None else load_catalog()
    controllers = tuple(_controller(c, catalog) for c in inventory.controllers)
    disks = tuple(
        _disk(slot.disk, controller.id, bay_slot(bays.get(slot.disk.name)) or slot.title, catalog)
        for controller in inventory.controllers
        for slot in controller.slots
        if slot.disk is not None
    )
    return Plan(name=name, controllers=controllers, disks=disks, host=inventory.host.key)


def bay_slot(label: str | None) -> str | None:
    """How a plan names a disk's bay: "bay 2-03" (the chips show "bay 2-03 (sdk)")."""
    return f"{BAY_PREFIX}{label}" if label else None


def stable_path(disk: Disk) -> str | None:
    """/dev/disk/by-id/wwn-* first, then ata-/scsi-/nvme-, then any other by-id, then by-path."""
    by_id = [link for link in disk.by_id if "-part" not in link.rsplit("/", 1)[-1]]

    def first(*prefixes: str) -> str | None:
        return next((x for x in by_id if x.rsplit("/", 1)[-1].startswith(prefixes)), None)

    choice = (
        first("wwn-") or first(*_BY_ID_PREFERRED) or first("") or next(iter(disk.by_path), None)
    )
    if choice is None:
        return None
    return choice if choice.startswith("/") else f"/dev/{choice}"


def state_reason(disk: Disk) -> str | None:
    """Why a real disk is not free, in the inventory's words ("/ on sdi1", "member of md4")."""
    reasons = list(disk.system_reasons)
    arrays = [h for h in disk.all_holders if h.startswith("md")]
    if arrays:
        reasons.append("member of " + ", ".join(arrays))
    volumes = [h for h in disk.all_holders if not h.startswith("md")]
    if volumes:
        reasons.append("held by " + ", ".join(volumes))
    if disk.all_mountpoints and not disk.system_reasons:
        reasons.append("mounted at " + ", ".join(disk.all_mountpoints))
    if disk.swap and not disk.system_reasons:
        reasons.append("swap")
    return "; ".join(dict.fromkeys(reasons)) or None


def _controller(controller: Controller, catalog: Catalog) -> PlanController:
    pci = controller.pci
    pci_id = f"{pci.vendor_id}:{pci.device_id}" if pci and pci.vendor_id and pci.device_id else None
    entry = catalog.match_controller(controller.model, pci_id)
    bus_mb_s = controller.link_mb_s
    if bus_mb_s is None and entry is not None:
        bus_mb_s = entry.bus_mb_s
    ports = controller.port_count
    attached = sum(1 for slot in controller.slots if slot.disk is not None)
    if ports is not None and attached > ports:
        ports = None  # an expander or port multiplier: its own ports do not bound the disks
    return PlanController(
        id=controller.id,
        model=controller.model,
        bus=controller.bus,
        bus_mb_s=None if bus_mb_s is None else float(bus_mb_s),
        ports=ports,
    )


def _disk(disk: Disk, controller_id: str, slot: str, catalog: Catalog) -> PlanDisk:
    entry = catalog.match_disk(disk.model)
    return PlanDisk(
        id=disk.name,
        controller=controller_id,
        capacity_bytes=disk.size_bytes or UNKNOWN_SIZE,
        seq_read_mb_s=entry.outer_mb_s if entry else None,
        seq_write_mb_s=entry.outer_write_mb_s if entry else None,
        inner_ratio=entry.inner_ratio if entry else DEFAULT_INNER_RATIO,
        random_iops=entry.random_iops if entry else None,
        model=disk.model,
        serial=disk.serial,
        wwn=disk.wwn,
        stable_path=stable_path(disk),
        slot=slot,
        state=disk.state.value,
        state_reason=state_reason(disk),
        read_from_machine=True,
    )


def catalog_controller(entry: CatalogController, id: str) -> PlanController:
    """A controller to buy: its own bus unless the plan puts it on a shared one."""
    return PlanController(
        id=id,
        model=entry.title,
        bus=None,
        bus_mb_s=float(entry.bus_mb_s),
        ports=entry.ports,
        hypothetical=True,
        price=entry.price,
    )


def catalog_disk(entry: CatalogDisk, controller: str, id: str) -> PlanDisk:
    """A disk to buy, on `controller` (a plan controller id)."""
    return PlanDisk(
        id=id,
        controller=controller,
        capacity_bytes=entry.capacity_bytes,
        seq_read_mb_s=entry.outer_mb_s,
        seq_write_mb_s=entry.outer_write_mb_s,
        inner_ratio=entry.inner_ratio,
        random_iops=entry.random_iops,
        price=entry.price,
        model=entry.title,
        hypothetical=True,
    )

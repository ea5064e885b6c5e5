"""What a scaling test reads: the disks of a controller, a bus or an array as the inventory
knows them, or disks named one by one, each with its model, size and slot (model/scaling.py's
peers and outliers). Shared by `stripewise bench scaling` and the Hardware page's dialog."""

from __future__ import annotations

from dataclasses import dataclass

from stripewise.model.scaling import DiskIdentity
from stripewise.model.topology import Inventory


class ScalingSetError(ValueError):
    """The set asked for is not on this inventory (an unknown controller, no disks...)."""


@dataclass(frozen=True)
class DiskSet:
    """What is measured, and what the inventory says of it."""

    name: str  # the controller's id, or the disks named
    disks: tuple[str, ...]
    identities: dict[str, DiskIdentity]
    controller: str | None = None
    bus: str | None = None


def identities_of(inventory: Inventory | None) -> dict[str, DiskIdentity]:
    """Model, size and slot of every disk the inventory knows (virtual ones: no slot)."""
    if inventory is None:
        return {}
    found = {d.name: DiskIdentity(d.model, d.size_bytes) for d in inventory.virtual}
    for controller in inventory.controllers:
        for slot in controller.slots:
            disk = slot.disk
            if disk is not None:
                where = slot.label or (slot.enclosure.name if slot.enclosure else None)
                shown = where or f"{controller.id} {slot.port}"
                found[disk.name] = DiskIdentity(disk.model, disk.size_bytes, shown)
    return found


def named_set(names: str | tuple[str, ...], inventory: Inventory | None) -> DiskSet:
    """Disks picked one by one (`sdb,sdc` or a tuple; `/dev/` may be written in front):
    they measure no link, so neither controller nor bus is named."""
    listed = names.split(",") if isinstance(names, str) else names
    disks = tuple(d.strip().removeprefix("/dev/") for d in listed if d.strip())
    return DiskSet(",".join(disks), disks, identities_of(inventory))


def controller_set(controller_id: str, inventory: Inventory | None) -> DiskSet:
    """Every disk the inventory puts under the controller, in slot order."""
    controller = next(
        (c for c in (inventory.controllers if inventory else ()) if c.id == controller_id), None
    )
    if controller is None:
        known = ", ".join(c.id for c in inventory.controllers) if inventory else "none"
        raise ScalingSetError(f"no controller {controller_id!r} here (controllers: {known})")
    disks = tuple(d.name for d in controller.disks)
    if not disks:
        raise ScalingSetError(f"controller {controller.id} has no disks")
    identities = identities_of(inventory)
    return DiskSet(controller.id, disks, identities, controller.id, controller.bus)


def bus_set(bus: str, inventory: Inventory | None) -> DiskSet:
    """Every disk of every controller on the bus."""
    controllers = [c for c in (inventory.controllers if inventory else ()) if c.bus == bus]
    if not controllers:
        known = sorted({c.bus for c in inventory.controllers}) if inventory else []
        raise ScalingSetError(f"no bus {bus!r} here (buses: {', '.join(known) or 'none'})")
    disks = tuple(d.name for c in controllers for d in c.disks)
    if not disks:
        raise ScalingSetError(f"bus {bus} has no disks")
    return DiskSet(bus, disks, identities_of(inventory), None, bus)


def array_set(name: str, inventory: Inventory | None) -> DiskSet:
    """The member disks of an md array or dm volume."""
    bare = name.removeprefix("/dev/")
    array = next((a for a in (inventory.arrays if inventory else ()) if a.name == bare), None)
    if array is None:
        known = ", ".join(a.name for a in inventory.arrays) if inventory else ""
        raise ScalingSetError(f"no array {name!r} here (arrays: {known or 'none'})")
    disks = tuple(dict.fromkeys(array.member_disks or array.members))
    if len(disks) < 2:
        raise ScalingSetError(f"{array.name} has {len(disks)} member disk(s): nothing to scale")
    return DiskSet(array.name, disks, identities_of(inventory))


def subset(chosen: DiskSet, disks: tuple[str, ...]) -> DiskSet:
    """Some of the set's disks (the dialog's unticked ones left out), in the set's order. A
    controller's set stays that controller's: what tops out with fewer of its disks is still
    its path's ceiling (a disk in use or failing is left out, not the controller)."""
    kept = tuple(d for d in chosen.disks if d in disks)
    named_by_disks = chosen.name == ",".join(chosen.disks)
    name = ",".join(kept) if named_by_disks else chosen.name
    return DiskSet(name, kept, chosen.identities, chosen.controller, chosen.bus)

"""Which disk sits in which bay: a host's mapping of bay labels to ports, kept by by-path.

A port's by-path name (`pci-0000:03:00.0-sas-exp0x5003...-phy4-lun-0`) stays with the port: a
disk replaced in the same bay keeps it, whatever its serial and kernel name. The mapping is
made three ways: from SES enclosure slots (automatic), by walking the bays with the locate LED,
or by placing a disk on a bay by hand.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from stripewise.model.chassis import MAX_BAYS, Bay, ChassisLayout, Face, Panel, natural_sorted
from stripewise.model.topology import Disk, Inventory, Slot
from stripewise.model.wording import count_noun


@dataclass(frozen=True)
class PlacedBay:
    """A bay of the layout with the disk in it now, or None when it is empty or unmapped."""

    bay: Bay
    port: str | None  # the by-path the bay is mapped to
    disk: Disk | None


BY_PATH = "disk/by-path/"  # udev's link names carry it; mappings keep the name alone


def port_name(link: str) -> str:
    return link.removeprefix(BY_PATH)


def port_of(disk: Disk) -> str | None:
    """The by-path a disk is mapped by: its first path's, for a multipathed one."""
    if disk.by_path:
        return port_name(disk.by_path[0])
    for path in disk.paths:
        if path.by_path:
            return port_name(path.by_path[0])
    return None


def disks_by_port(inventory: Inventory) -> dict[str, Disk]:
    """Every by-path name of every disk on the map (a multipathed disk under each path's)."""
    found: dict[str, Disk] = {}
    for disk in inventory.disks:
        names = list(disk.by_path) + [p for path in disk.paths for p in path.by_path]
        for name in names:
            found.setdefault(port_name(name), disk)
    return found


def place(layout: ChassisLayout, ports: Mapping[str, str], inventory: Inventory) -> list[PlacedBay]:
    """Each bay of the layout in drawing order with the disk its port holds now."""
    by_port = disks_by_port(inventory)
    placed = []
    for bay in layout.bays:
        port = ports.get(bay.label)
        placed.append(PlacedBay(bay, port, by_port.get(port) if port else None))
    return placed


def bay_of_disks(
    layout: ChassisLayout, ports: Mapping[str, str], inventory: Inventory
) -> dict[str, Bay]:
    """Disk kernel name -> its bay, for the disks that sit in a mapped bay."""
    return {p.disk.name: p.bay for p in place(layout, ports, inventory) if p.disk is not None}


def assign(ports: Mapping[str, str], label: str, port: str | None) -> dict[str, str]:
    """The mapping with `label` on `port` (None: the bay unmapped); a port sits in one bay only,
    so a port placed anew leaves the bay it was in."""
    changed = {k: v for k, v in ports.items() if k != label and v != port}
    if port:
        changed[label] = port
    return changed


@dataclass(frozen=True)
class Refit:
    """A host's mapping moved onto a new layout: the bays it still has keep their ports."""

    kept: dict[str, str]
    dropped: dict[str, str]  # bays the layout no longer has, with the ports they held

    def note(self) -> str:
        """What became of the bays that no longer fit ("" when none)."""
        if not self.dropped:
            return ""
        shown = ", ".join(natural_sorted(self.dropped)[:5])
        more = "" if len(self.dropped) <= 5 else f" and {len(self.dropped) - 5} more"
        bays = count_noun(len(self.dropped), "mapped bay")
        return f"{bays} not in the layout any more, unmapped: {shown}{more}"


def refit(layout: ChassisLayout, ports: Mapping[str, str]) -> Refit:
    """`ports` (the host's mapping, or an imported file's [ports]) on `layout`: a bay's port
    stays where the layout still has a bay of that label."""
    labels = {b.label for b in layout.bays}
    return Refit(
        {k: v for k, v in ports.items() if k in labels},
        {k: v for k, v in ports.items() if k not in labels},
    )


def _slot_number(slot: Slot) -> int | None:
    if slot.enclosure is None:
        return None
    digits = re.findall(r"\d+", slot.enclosure.name)
    return int(digits[-1]) if digits else None


def from_enclosures(layout: ChassisLayout, inventory: Inventory) -> dict[str, str]:
    """Bays mapped from SES slots: enclosure n's slot k goes to the bay numbered k on panel n
    (on the one panel when the layout has fewer panels than enclosures)."""
    enclosures = sorted(
        {s.enclosure.enclosure for c in inventory.controllers for s in c.slots if s.enclosure}
    )
    mapped: dict[str, str] = {}
    for controller in inventory.controllers:
        for slot in controller.slots:
            number = _slot_number(slot)
            port = port_of(slot.disk) if slot.disk else None
            if number is None or port is None or slot.enclosure is None:
                continue
            which = enclosures.index(slot.enclosure.enclosure)
            panel = which if which < len(layout.panels) else 0
            bay = next((b for b in layout.bays if b.panel == panel and b.number == number), None)
            if bay is not None and bay.label not in mapped:
                mapped[bay.label] = port
    return mapped


def layout_from_enclosures(product: str, inventory: Inventory) -> ChassisLayout | None:
    """One front row per SES enclosure, its bays numbered as the enclosure numbers its slots
    (the second enclosure's labels prefixed "2:"); None when the map has no enclosure."""
    numbers: dict[str, list[int]] = {}
    for controller in inventory.controllers:
        for slot in controller.slots:
            number = _slot_number(slot)
            if slot.enclosure is not None and number is not None:
                numbers.setdefault(slot.enclosure.enclosure, []).append(number)
    if not numbers:
        return None
    panels = []
    for index, enclosure in enumerate(sorted(numbers)):
        found = numbers[enclosure]
        columns = max(found) - min(found) + 1
        prefix = f"{index + 1}:" if index else ""
        panels.append(Panel(Face.FRONT, 1, min(columns, MAX_BAYS), min(found), prefix=prefix))
    source = "the SES enclosures' slot numbers (check the order against the bays' labels)"
    return ChassisLayout(product, source=source, panels=tuple(panels))


def with_enclosures(
    layout: ChassisLayout, saved: Mapping[str, str], inventory: Inventory
) -> dict[str, str]:
    """The saved mapping, with the bays it leaves open filled from SES slots: what the admin
    placed wins over what an enclosure reports."""
    taken = set(saved.values())
    found = {
        label: port
        for label, port in from_enclosures(layout, inventory).items()
        if label not in saved and port not in taken
    }
    return {**found, **saved}


def walk_order(inventory: Inventory) -> list[Disk]:
    """The disks a locate walk lights, controller by controller in port order."""
    return [slot.disk for c in inventory.controllers for slot in c.slots if slot.disk is not None]


class BayWalk:
    """Walking the bays with the locate LED: the disk whose LED is lit now, the bay the admin
    clicked for it, then the next. Lighting is the caller's (through the helper)."""

    def __init__(self, inventory: Inventory, ports: Mapping[str, str]) -> None:
        self.disks = [d for d in walk_order(inventory) if port_of(d)]
        self.ports = dict(ports)
        self.index = 0

    @property
    def current(self) -> Disk | None:
        return self.disks[self.index] if self.index < len(self.disks) else None

    @property
    def done(self) -> bool:
        return self.current is None

    def place(self, label: str) -> None:
        """The lit disk is in bay `label`: kept there, and on to the next."""
        disk = self.current
        if disk is not None:
            self.ports = assign(self.ports, label, port_of(disk))
            self.index += 1

    def skip(self) -> None:
        """No LED seen (or no bay for it): the disk keeps whatever bay it had."""
        self.index += 1


def disk_title(name: str, bays: Mapping[str, Bay]) -> str:
    """ "bay 2-03 (sdk)" for a disk in a mapped bay, its kernel name otherwise."""
    bay = bays.get(name)
    return f"bay {bay.label} ({name})" if bay else name


def bay_json(bay: Bay) -> dict[str, object]:
    """What `inventory --json` gives a mapped disk: its bay's label and 1-based place."""
    return {"label": bay.label, "row": bay.row + 1, "column": bay.column + 1}


def unmapped_disks(placed: Iterable[PlacedBay], inventory: Inventory) -> list[Disk]:
    """The disks of the map in no bay yet, in port order: what can still be placed."""
    inside = {p.disk.name for p in placed if p.disk is not None}
    return [d for d in walk_order(inventory) if d.name not in inside]

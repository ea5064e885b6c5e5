"""SES enclosure bays from /sys/class/enclosure: names, locate LEDs, and which disk sits where."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from stripewise.model.topology import EnclosureSlot
from stripewise.system.device_sources import DeviceSource

_BAY_ATTRS = ("locate", "fault", "status", "slot", "device", "active", "type")


@dataclass
class BayMap:
    """Every bay of every enclosure, and the SCSI device each occupied bay holds."""

    bays: list[tuple[str, EnclosureSlot, int | None]] = field(default_factory=list)
    # (devpath of the controller the enclosure hangs off, bay, slot number)
    occupant: dict[str, EnclosureSlot] = field(default_factory=dict)  # scsi device path -> bay

    def bay_of(self, disk_path: str) -> EnclosureSlot | None:
        for device_path, bay in self.occupant.items():
            if disk_path.startswith(device_path + "/"):
                return bay
        return None

    def controller_paths(self) -> list[str]:
        return sorted({path for path, _bay, _n in self.bays})

    def bays_under(self, controller_path: str) -> list[EnclosureSlot]:
        return [bay for path, bay, _n in self.bays if path == controller_path]

    def order(self, bay: EnclosureSlot) -> tuple[object, ...]:
        number = next((n for _p, b, n in self.bays if b == bay), None)
        return (bay.enclosure, number if number is not None else 10_000, bay.name)


def read_enclosures(source: DeviceSource) -> BayMap:
    found = BayMap()
    for enclosure in source.devices_of("enclosure"):
        controller = _controller_path(enclosure.path)
        for entry in source.entries(enclosure.path):
            if entry in ("power", "subsystem", "device", "uevent", "components", "id"):
                continue
            bay_path = f"{enclosure.path}/{entry}"
            if not any(
                source.attribute(bay_path, a) is not None or source.link_target(bay_path, a)
                for a in ("slot", "status", "device", "locate")
            ):
                continue  # an attribute of the enclosure itself, not a bay
            locate = source.attribute(bay_path, "locate")
            bay = EnclosureSlot(
                enclosure=enclosure.name,
                name=entry,
                locate_path=f"{bay_path}/locate" if locate is not None else None,
                locate_on=locate.strip() == "1" if locate is not None else None,
            )
            found.bays.append((controller, bay, _slot_number(source, bay_path, entry)))
            occupant = source.link_target(bay_path, "device")
            if occupant:
                found.occupant[occupant] = bay
    return found


def _slot_number(source: DeviceSource, bay_path: str, name: str) -> int | None:
    text = source.attribute(bay_path, "slot")
    if text and text.strip().isdigit():
        return int(text.strip())
    digits = re.findall(r"\d+", name)
    return int(digits[-1]) if digits else None


def _controller_path(enclosure_path: str) -> str:
    from stripewise.inventory.ports import components, controller_prefix

    parts = components(enclosure_path)
    host = next((i for i, p in enumerate(parts) if re.match(r"^host\d+$", p)), len(parts))
    return controller_prefix(parts, host)

"""Mapping bays to ports: the X4500 walked bay by bay through its six controllers, the SAS
server's SES slots mapped by themselves, and a replaced disk kept in its bay by its by-path."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from stripewise.inventory.chassis_files import host_bays, layouts, save_mapping
from stripewise.model.bay_map import (
    BayWalk,
    assign,
    bay_of_disks,
    disk_title,
    layout_from_enclosures,
    place,
    port_of,
    unmapped_disks,
    with_enclosures,
)
from stripewise.model.chassis import ChassisLayout, Face, Panel
from stripewise.model.topology import Inventory
from tests.bays.conftest import x4500_bay_of_port, x4500_port_name
from tests.fixtures.machines import X4500_CONTROLLERS, X4500_SLOT_MAP
from tests.fixtures.machines_sas import SAS_BAYS


def x4500_layout() -> ChassisLayout:
    return layouts(Path("/nonexistent"))["Sun Fire X4500"][0]


def walk_x4500(inventory: Inventory) -> dict[str, str]:
    """The admin's walk: the LED of each port's disk lights in turn (the fake stands in for the
    helper here), and the admin clicks the bay it lit, known from the box's cabling."""
    walk = BayWalk(inventory, {})
    lit = []
    while not walk.done:
        disk = walk.current
        assert disk is not None
        controller = next(c for c in inventory.controllers if disk in c.disks)
        port = next(s.index for s in controller.slots if s.disk == disk)
        lit.append(disk.name)
        walk.place(str(x4500_bay_of_port(X4500_CONTROLLERS.index(controller.id), port)))
    assert len(lit) == 48  # every port of the six controllers, each once
    return walk.ports


def test_x4500_walked_through_its_six_controllers(x4500: Inventory) -> None:
    layout = x4500_layout()
    ports = walk_x4500(x4500)
    assert len(ports) == 48 and len(set(ports.values())) == 48
    bays = bay_of_disks(layout, ports, x4500)
    for name, (controller, port) in X4500_SLOT_MAP.items():
        assert bays[name].number == x4500_bay_of_port(controller, port), name
        assert ports[bays[name].label] == x4500_port_name(controller, port)
    # bay 0 (front row, left) is the first controller's port 0, bay 47 the last one's port 7
    sdi = bays["sdi"]  # the system disk: controller 3 (0-based), port 0
    assert sdi.label == str(3 * 2) and (sdi.row, sdi.column) == (3, 6)  # front row, drawn last
    assert disk_title("sdi", bays) == "bay 6 (sdi)" and disk_title("sdzz", bays) == "sdzz"
    assert unmapped_disks(place(layout, ports, x4500), x4500) == []


def test_a_replaced_disk_stays_in_its_bay(x4500: Inventory, tmp_path: Path) -> None:
    layout = x4500_layout()
    save_mapping("machine:x4500", layout, walk_x4500(x4500), tmp_path)
    old = x4500.find_disk("sdm")
    assert old is not None
    # the disk in sdm's bay fails and is replaced: a new serial and kernel name, the same port
    new = replace(old, name="sdax", serial="NEWDISK0001", wwn="0x5000cca0deadbeef")
    swapped = replace(
        x4500,
        controllers=tuple(
            replace(c, slots=tuple(replace(s, disk=new) if s.disk == old else s for s in c.slots))
            for c in x4500.controllers
        ),
    )
    found = host_bays("machine:x4500", None, tmp_path)
    assert found.layout == layout and len(found.ports) == 48
    before = bay_of_disks(layout, found.ports, x4500)["sdm"]
    after = bay_of_disks(layout, found.ports, swapped)
    assert "sdm" not in after and after["sdax"] == before
    assert port_of(new) == port_of(old)


def test_ses_slots_map_the_sas_server_by_themselves(sas: Inventory) -> None:
    layout = layouts(Path("/nonexistent"))["Generic 2U 12-bay"][0]
    ports = with_enclosures(layout, {}, sas)
    bays = bay_of_disks(layout, ports, sas)
    by_number = {bay.number: name for name, bay in bays.items()}
    assert sorted(by_number) == sorted(SAS_BAYS)  # bays 3, 9, 10, 11 are empty
    for number, name in by_number.items():
        disk = sas.find_disk(name)
        assert disk is not None
        slot = next(s for c in sas.controllers for s in c.slots if s.disk == disk)
        assert slot.enclosure is not None and slot.enclosure.name == f"Slot {number:02d}"
    assert "sdi" not in bays  # cabled straight to the HBA: in no enclosure slot
    # what the admin placed wins: sdi into bay 3 by hand, bay 0's disk moved to bay 11
    bay0_port = ports["0"]
    mine = assign(assign({}, "3", port_of(sas.find_disk("sdi"))), "11", bay0_port)  # type: ignore[arg-type]
    merged = with_enclosures(layout, mine, sas)
    assert merged["3"] == mine["3"] and merged["11"] == bay0_port and "0" not in merged


def test_a_host_with_ses_but_no_layout_gets_one_from_its_slots(sas: Inventory) -> None:
    """The layout suggested for the SAS server: one row of its enclosure's twelve slots, which
    then maps every enclosure disk by itself."""
    layout = layout_from_enclosures("SAS server", sas)
    assert layout is not None and len(layout.panels) == 1
    panel = layout.panels[0]
    assert (panel.face, panel.rows, panel.columns, panel.first) == (Face.FRONT, 1, 12, 0)
    bays = bay_of_disks(layout, with_enclosures(layout, {}, sas), sas)
    assert sorted(b.number for b in bays.values()) == sorted(SAS_BAYS)


def test_no_enclosure_no_suggested_layout(x4500: Inventory) -> None:
    assert layout_from_enclosures("Sun Fire X4500", x4500) is None


def test_a_port_sits_in_one_bay_only() -> None:
    ports = assign({"1": "a", "2": "b"}, "3", "a")
    assert ports == {"2": "b", "3": "a"}
    assert assign(ports, "3", None) == {"2": "b"}


def test_a_panel_of_another_face_is_its_own() -> None:
    layout = ChassisLayout("x", panels=(Panel(Face.FRONT, 1, 2), Panel(Face.BACK, 1, 2, first=2)))
    assert [b.label for b in layout.bays] == ["0", "1", "2", "3"]
    assert [b.panel for b in layout.bays] == [0, 0, 1, 1]

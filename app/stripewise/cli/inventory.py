"""`stripewise inventory`: the hardware map in a terminal, as JSON, or saved as a snapshot."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from stripewise.cli.errors import CliError
from stripewise.cli.options import path_argument
from stripewise.inventory import InventoryError, load_inventory, read_live
from stripewise.inventory.chassis_files import host_bays, read_product
from stripewise.inventory.snapshot import dumps, to_json
from stripewise.model.bay_map import bay_json, bay_of_disks, with_enclosures
from stripewise.model.chassis import ChassisError
from stripewise.model.topology import Controller, Disk, Inventory, link_text
from stripewise.model.units import human_size
from stripewise.model.wording import count_noun
from stripewise.output_files import OutputFileError, write_output


def fill_parser(inventory: argparse.ArgumentParser) -> None:
    inventory.add_argument("--json", action="store_true", help="print the snapshot JSON")
    inventory.add_argument(
        "--from",
        dest="source",
        type=path_argument,
        metavar="FILE",
        help="a saved snapshot, `udevadm info --export-db` output, or a umockdev recording",
    )
    inventory.add_argument(
        "--save", type=path_argument, metavar="FILE", help="write a snapshot file"
    )


def run(args: argparse.Namespace) -> int:
    try:
        inventory = load_inventory(args.source) if args.source else read_live()
    except InventoryError as exc:
        raise CliError(str(exc)) from None
    for warning in inventory.warnings:  # on stderr, so `--json` output stays clean to pipe
        print(f"warning: {warning}", file=sys.stderr)
    text = dumps(inventory)
    if args.save:
        try:
            write_output(args.save, text)
        except OutputFileError as exc:
            raise CliError(str(exc)) from None
        print(f"inventory saved to {args.save}", file=sys.stderr)
    if args.json:
        sys.stdout.write(json.dumps(with_bays(inventory, live=not args.source), indent=2) + "\n")
    elif not args.save:
        print(format_inventory(inventory))
    return 0


def with_bays(inventory: Inventory, live: bool) -> dict[str, Any]:
    """The snapshot JSON, each disk in a mapped bay given its `bay` (label, row, column)."""
    data = to_json(inventory)
    try:
        found = host_bays(inventory.host.key, read_product() if live else None)
    except ChassisError as exc:  # the map stands without its bays
        print(f"warning: bays not read: {exc}", file=sys.stderr)
        return data
    if found.layout is None:
        return data
    bays = bay_of_disks(
        found.layout, with_enclosures(found.layout, found.ports, inventory), inventory
    )
    for controller in data["controllers"]:
        for slot in controller["slots"]:
            disk = slot["disk"]
            if disk and disk["name"] in bays:
                disk["bay"] = bay_json(bays[disk["name"]])
    return data


def _controller_line(controller: Controller) -> str:
    model = controller.model or "unknown controller"
    link = link_text(controller) if controller.pci and controller.pci.link else None
    count = controller.port_count
    ports = None if count is None else count_noun(count, "port")
    extras = ", ".join(x for x in (controller.driver, link, ports) if x)
    return f"{controller.id}  {model}" + (f"  ({extras})" if extras else "")


def _disk_cells(disk: Disk) -> str:
    state = disk.state.value.replace("_", " ")
    serial = f"s/n {disk.serial}" if disk.serial else "s/n unknown"
    paths = f"  paths {' '.join(p.name for p in disk.paths)}" if disk.paths else ""
    return (
        f"{disk.name:<9} {human_size(disk.size_bytes):>12}  {disk.model or 'model unknown'}  "
        f"{serial}  [{state}]{paths}"
    )


def format_inventory(inventory: Inventory) -> str:
    """The map as text; the inventory's warnings are printed apart, on stderr."""
    host = inventory.host.hostname or "unknown host"
    disk_count, controller_count = len(inventory.disks), len(inventory.controllers)
    lines = [
        f"{host}: {count_noun(disk_count, 'disk')} on "
        f"{count_noun(controller_count, 'controller')}"
        f" (from {inventory.source})"
    ]
    for root, controllers in inventory.roots().items():
        lines.append("")
        lines.append(root)
        for controller in controllers:
            behind = f" behind {' > '.join(controller.bridges)}" if controller.bridges else ""
            lines.append(f"  {_controller_line(controller)}{behind}")
            if not controller.slots:  # the driver lists no ports (RAID cards, NVMe)
                lines.append("    (no disks attached)")
            for slot in controller.slots:
                label = f"{slot.title:<14}"
                cell = _disk_cells(slot.disk) if slot.disk else f"({slot.note or 'empty'})"
                lines.append(f"    {label} {cell}")
    if inventory.arrays:
        lines.append("")
        lines.append("Arrays and volumes")
        for array in inventory.arrays:
            members = " ".join(array.members) or "members unknown"
            size = human_size(array.size_bytes)
            lines.append(f"  {array.name:<8} {array.level or '?':<9} {size:>12}  {members}")
    used_virtual = [d for d in inventory.virtual if d.size_bytes]
    if used_virtual:
        lines.append("")
        lines.append("Virtual")
        lines += [f"  {_disk_cells(d)}" for d in used_virtual]
    return "\n".join(lines)

"""`stripewise bays show|import FILE|export FILE`: the chassis as the admin faces it.

show: each bay of this host's layout with the disk in it (mapped by by-path, or from SES slots
where the kernel reports them). export: the layout with this host's mapping, a file another
host of the same model and cabling imports whole. import: a layout file (docs/bays.md) kept in
the user's chassis folder under its product, and its `[ports]`, if any, as this host's mapping.
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from pathlib import Path

from stripewise.cli.errors import CliError
from stripewise.cli.options import path_argument
from stripewise.inventory import InventoryError, load_inventory, read_live
from stripewise.inventory.chassis_files import (
    HostBays,
    host_bays,
    read_layout_file,
    read_product,
    use_layout,
)
from stripewise.model.bay_map import bay_json, place, with_enclosures
from stripewise.model.chassis import ChassisError, ChassisLayout, dump_layout
from stripewise.model.topology import Disk, Inventory
from stripewise.model.units import human_size
from stripewise.model.wording import count_noun
from stripewise.output_files import OutputFileError, write_output


def fill_parser(bays: argparse.ArgumentParser) -> None:
    actions = bays.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="each bay and the disk in it")
    show.add_argument(
        "--json", action="store_true", help="print {product, title, bays: [...]} as JSON"
    )
    export = actions.add_parser("export", help="write this host's layout and mapping to FILE")
    export.add_argument("file", type=path_argument, metavar="FILE")
    imported = actions.add_parser("import", help="use a layout file (and its [ports], if any)")
    imported.add_argument("file", type=path_argument, metavar="FILE")
    for sub in (show, export, imported):
        sub.add_argument(
            "--from",
            dest="source",
            type=path_argument,
            metavar="FILE",
            help="a saved snapshot, udev dump or umockdev recording instead of this machine",
        )
        sub.add_argument(
            "--product",
            metavar="NAME",
            help="the chassis model (default: this machine's DMI product name)",
        )


def run(args: argparse.Namespace) -> int:
    inventory = _inventory(args.source)
    product = args.product or (None if args.source else read_product())
    try:
        found = host_bays(inventory.host.key, product)
    except ChassisError as exc:
        if args.action != "import":  # a broken mapping is replaced by the import
            raise CliError(str(exc)) from None
        found = HostBays(product, None, {})
    if args.action == "import":
        return _import(args.file, inventory, product, found.ports)
    if found.layout is None:
        raise CliError(_no_layout(found, args.source))
    if found.dropped:
        print(f"note: {found.note()}", file=sys.stderr)
    ports = with_enclosures(found.layout, found.ports, inventory)
    if args.action == "export":
        try:
            # a folder the admin named that is not there is a typo: not made (as root)
            write_output(args.file, dump_layout(found.layout, ports))
        except OutputFileError as exc:
            raise CliError(str(exc)) from None
        print(
            f"{found.layout.name}: {len(ports)} of {len(found.layout.bays)} bays mapped, "
            f"written to {args.file}",
            file=sys.stderr,
        )
        return 0
    if args.json:
        print(json.dumps(show_json(found.layout, ports, inventory), indent=2))
    else:
        print(format_bays(found.layout, ports, inventory))
    return 0


def _inventory(source: Path | None) -> Inventory:
    try:
        return load_inventory(source) if source else read_live()
    except InventoryError as exc:
        raise CliError(str(exc)) from None


def _no_layout(found: HostBays, source: Path | None) -> str:
    if source is not None:  # a recording or a snapshot names no DMI product
        named = f'"{found.product}"' if found.product else "not named: give --product NAME"
        where = f"the map in {source} (product {named})"
    else:
        named = f'"{found.product}"' if found.product else "unknown (no DMI product name)"
        where = f"this machine (product {named})"
    return (
        f"no chassis layout for {where}: draw one on the Hardware "
        "page (Bays, Edit Layout), or `stripewise bays import FILE` (docs/bays.md)"
    )


def _import(path: Path, inventory: Inventory, product: str | None, saved: dict[str, str]) -> int:
    """The layout as its product's and this host's, with the file's [ports] if it has some,
    else the host's own mapping where the layout still has those bays (as the GUI does)."""
    try:
        layout = read_layout_file(path)
    except ChassisError as exc:
        raise CliError(str(exc)) from None
    try:
        where, moved = use_layout(inventory.host.key, layout, saved)
    except OSError as exc:
        raise CliError(f"cannot save the layout: {exc}") from None
    print(f"{layout.name}: saved as {where}", file=sys.stderr)
    if moved.kept:
        print(f"{count_noun(len(moved.kept), 'mapped bay')} kept for this host", file=sys.stderr)
    elif product is None:
        print("kept for this host (its product is not known: a file)", file=sys.stderr)
    if moved.dropped:
        print(f"note: {moved.note()}", file=sys.stderr)
    if product and product != layout.product:
        print(
            f'note: this machine is "{product}", the layout is for "{layout.product}"',
            file=sys.stderr,
        )
    return 0


def show_json(
    layout: ChassisLayout, ports: dict[str, str], inventory: Inventory
) -> dict[str, object]:
    bays = []
    for placed in place(layout, ports, inventory):
        disk = placed.disk
        bays.append(
            {
                **bay_json(placed.bay),
                "face": layout.panels[placed.bay.panel].face.value,
                "port": placed.port,
                "disk": disk.name if disk else None,
                "model": disk.model if disk else None,
                "size_bytes": disk.size_bytes if disk else None,
                "state": disk.state.value if disk else None,
            }
        )
    return {"product": layout.product, "title": layout.name, "bays": bays}


def format_bays(layout: ChassisLayout, ports: dict[str, str], inventory: Inventory) -> str:
    """Each panel as a grid, as the admin sees it, then one line a bay."""
    placed = place(layout, ports, inventory)
    lines = [f"{layout.name} ({sum(1 for p in placed if p.port)} of {len(placed)} bays mapped)"]
    for index, panel in enumerate(layout.panels):
        lines += ["", f"{panel.face.value} ({panel.rows} x {panel.columns})"]
        cells = {
            (p.bay.row, p.bay.column): _cell(p.bay.label, p.disk, p.port)
            for p in placed
            if p.bay.panel == index
        }
        width = max(_width(c) for c in cells.values()) + 1  # every column as wide as the widest
        for row in range(panel.rows):
            shown = [_padded(cells[row, column], width) for column in range(panel.columns)]
            lines.append("  " + " ".join(shown))
    lines.append("")
    full = [(p.bay.label, p.disk) for p in placed if p.disk is not None]
    label_width = max([6] + [_width(label) for label, _disk in full])
    for label, disk in full:
        size = human_size(disk.size_bytes)
        lines.append(
            f"  bay {_padded(label, label_width)} {disk.name:<8} {size:>10}  {disk.model or ''}"
        )
    return "\n".join(line.rstrip() for line in lines)


def _width(text: str) -> int:
    """Terminal columns: a wide (CJK) character takes two, a combining mark none."""
    wide = sum(1 for c in text if unicodedata.east_asian_width(c) in "WF")
    marks = sum(1 for c in text if unicodedata.combining(c))
    return len(text) + wide - marks


def _padded(text: str, width: int) -> str:
    return text + " " * max(width - _width(text), 0)


def _cell(label: str, disk: Disk | None, port: str | None) -> str:
    """`12:sdk`, `12:empty` (mapped, no disk now) or `12:?` (not mapped)."""
    return f"{label}:{disk.name if disk else ('empty' if port else '?')}"

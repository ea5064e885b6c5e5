"""Reading hardware into `model.topology`: live from udev/sysfs, or from saved files."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from stripewise.input_files import InputFileError, read_bytes
from stripewise.model.topology import Inventory

__all__ = ["InventoryError", "load_inventory", "read_live", "with_labels"]

# umockdev-record --all of a large server (thousands of devices with their attributes) runs to
# tens of MiB; snapshots and udev dumps are far smaller.
MAX_INVENTORY_BYTES = 256 * 2**20
_OBJECT = re.compile(r"\s*\{")  # a JSON object first (not `text.lstrip()`: a copy of it all)


class InventoryError(ValueError):
    """A file that cannot be read as an inventory; the message names the file and line/field."""


def read_live(labels: Mapping[str, str] | None = None) -> Inventory:
    """This machine now (or the umockdev testbed the process runs in)."""
    from stripewise.inventory.build import build_inventory
    from stripewise.system.device_sources import UdevSource

    return build_inventory(UdevSource(), labels)


def load_inventory(path: Path, labels: Mapping[str, str] | None = None) -> Inventory:
    """A snapshot (JSON), `udevadm info --export-db` text, or a umockdev recording."""
    from stripewise.inventory.build import build_inventory
    from stripewise.inventory.snapshot import SnapshotError, loads
    from stripewise.inventory.udevdump import DumpFormatError, DumpSource, decode_dump, is_udev_json

    try:
        data = read_bytes(path, what="an inventory file", max_bytes=MAX_INVENTORY_BYTES)
    except InputFileError as exc:
        raise InventoryError(str(exc)) from None
    text, not_utf8 = decode_dump(data, str(path))
    bad_byte = _first_bad_byte(data) if not_utf8 else -1
    del data  # a dump runs to tens of MiB: not held twice while it is read
    try:
        if _OBJECT.match(text) and not is_udev_json(text):
            if not_utf8:  # snapshots are written as UTF-8: anything else is not one of ours
                raise InventoryError(f"{path}: not UTF-8 text (byte {bad_byte})")
            inventory = loads(text, str(path))
            return _relabel(inventory, labels) if labels else inventory
        source = DumpSource(text, str(path), (not_utf8,) if not_utf8 else ())
        source.host = replace(source.host, source_file=path.name)
        return build_inventory(source, labels)
    except (SnapshotError, DumpFormatError) as exc:
        raise InventoryError(str(exc)) from None


def _first_bad_byte(data: bytes) -> int:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return -1


def with_labels(inventory: Inventory, labels: Mapping[str, str]) -> Inventory:
    """The same map with the admin's slot labels (a missing key clears a label)."""
    return _relabel(inventory, labels, clear=True)


def _relabel(inventory: Inventory, labels: Mapping[str, str], clear: bool = False) -> Inventory:
    controllers = tuple(
        replace(
            c,
            slots=tuple(
                replace(s, label=labels.get(s.key, None if clear else s.label)) for s in c.slots
            ),
        )
        for c in inventory.controllers
    )
    return replace(inventory, controllers=controllers)

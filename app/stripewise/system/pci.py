"""PCI addresses, link speeds and device names."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from stripewise.model.topology import Link

PCI_ADDRESS = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
PCI_ROOT = re.compile(r"^pci[0-9a-f]{4}:[0-9a-f]{2}$")
_SPEED = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*GT/s")
PCI_IDS_FILES = (Path("/usr/share/misc/pci.ids"), Path("/usr/share/hwdata/pci.ids"))


def parse_link(speed: str | None, width: str | None) -> Link | None:
    """`8.0 GT/s PCIe` and `4` -> Link; None for conventional PCI, `Unknown` or width 0."""
    if not speed or not width:
        return None
    match = _SPEED.match(speed)
    try:
        lanes = int(width.strip())
    except ValueError:
        return None
    if match is None or lanes <= 0:
        return None
    return Link(float(match.group(1)), lanes)


def hex_id(value: str | None) -> str | None:
    """`0x11ab` -> `11ab`."""
    if not value:
        return None
    text = value.strip().lower().removeprefix("0x")
    return text if re.fullmatch(r"[0-9a-f]{4}", text) else None


@lru_cache(maxsize=1)
def _pci_ids() -> dict[str, tuple[str, dict[str, str]]]:
    """vendor id -> (vendor name, device id -> device name), from the hwdata file if present."""
    table: dict[str, tuple[str, dict[str, str]]] = {}
    path = next((p for p in PCI_IDS_FILES if p.is_file()), None)
    if path is None:
        return table
    vendor: tuple[str, dict[str, str]] | None = None
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if line.startswith("C "):  # device classes follow: no more vendors
                break
            if not line.strip() or line.startswith("#"):
                continue
            if not line.startswith("\t"):
                vendor = (line[6:].strip(), {})
                table[line[:4].lower()] = vendor
            elif vendor is not None and not line.startswith("\t\t"):
                vendor[1][line[1:5].lower()] = line[7:].strip()
    return table


def pci_names(vendor_id: str | None, device_id: str | None) -> tuple[str | None, str | None]:
    """Vendor and device names from pci.ids, when the file and the ids are known."""
    if vendor_id is None:
        return None, None
    entry = _pci_ids().get(vendor_id)
    if entry is None:
        return None, None
    return entry[0], entry[1].get(device_id or "")

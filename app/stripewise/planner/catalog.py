"""The disk and controller catalog shipped in resources/catalog: hardware to plan with before
buying it, and figures for real disks and controllers whose model it knows.

Units are documented at the top of each TOML file. Every entry is validated on load; a bad
entry raises `CatalogError` naming the file, the table, the entry and the key.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import as_file
from typing import Any, TypeVar

from stripewise.input_files import InputFileError, parse_toml, read_text
from stripewise.model.topology import pcie_link_mb_s

DISK_INTERFACES = (
    "ata-100",
    "sata-1.5g",
    "sata-3g",
    "sata-6g",
    "sas-6g",
    "sas-12g",
    "nvme-pcie3x4",
    "nvme-pcie4x4",
)
CONTROLLER_INTERFACES = ("pcie", "dmi", "pci-x", "pci", "hub-link")
PCIE_GT_S = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
MAX_CATALOG_BYTES = 2**20  # the shipped files hold 10 KiB together
_T = TypeVar("_T")


class CatalogError(ValueError):
    """A catalog entry that is missing a key or has a value out of range."""


@dataclass(frozen=True)
class CatalogDisk:
    id: str
    vendor: str
    model: str
    capacity_gb: float
    rpm: int
    outer_mb_s: float
    inner_mb_s: float
    outer_write_mb_s: float
    inner_write_mb_s: float
    random_iops: float
    price: float
    year: int
    interface: str
    matches: tuple[str, ...] = ()

    @property
    def capacity_bytes(self) -> int:
        return round(self.capacity_gb * 10**9)

    @property
    def inner_ratio(self) -> float:
        return round(self.inner_mb_s / self.outer_mb_s, 3)

    @property
    def ssd(self) -> bool:
        return self.rpm == 0

    @property
    def title(self) -> str:
        return f"{self.vendor} {self.model}"


@dataclass(frozen=True)
class CatalogController:
    id: str
    vendor: str
    model: str
    ports: int
    interface: str
    bus_mb_s: int
    price: float
    year: int
    matches: tuple[str, ...] = ()
    pci_ids: tuple[str, ...] = ()
    pcie_gen: int | None = None  # its PCIe (or DMI) link, where it has one
    lanes: int | None = None

    @property
    def title(self) -> str:
        return f"{self.vendor} {self.model}"


@dataclass(frozen=True)
class Catalog:
    disks: tuple[CatalogDisk, ...] = ()
    controllers: tuple[CatalogController, ...] = ()

    def disk(self, entry_id: str) -> CatalogDisk | None:
        return next((d for d in self.disks if d.id == entry_id), None)

    def controller(self, entry_id: str) -> CatalogController | None:
        return next((c for c in self.controllers if c.id == entry_id), None)

    def match_disk(self, model: str | None) -> CatalogDisk | None:
        """The entry whose `matches` occur in a kernel model string ("HITACHI HDS7250SASUN500G")."""
        return next((d for d in self.disks if _matches(model, d.matches)), None)

    def match_controller(
        self, model: str | None, pci_id: str | None = None
    ) -> CatalogController | None:
        """By PCI "vendor:device" first (exact), then by a substring of the model."""
        if pci_id:
            found = next((c for c in self.controllers if pci_id.lower() in c.pci_ids), None)
            if found:
                return found
        return next((c for c in self.controllers if _matches(model, c.matches)), None)


def _matches(model: str | None, needles: tuple[str, ...]) -> bool:
    if not model:
        return False
    text = " ".join(model.replace("_", " ").split()).casefold()
    return any(n.casefold() in text for n in needles)


@cache
def load_catalog() -> Catalog:
    """The shipped catalog (read once per process)."""
    from stripewise.resources import resource

    texts = []
    for name in ("disks.toml", "controllers.toml"):
        with as_file(resource("catalog", name)) as path:
            try:
                texts.append(read_text(path, what="a catalog file", max_bytes=MAX_CATALOG_BYTES))
            except InputFileError as exc:
                raise CatalogError(str(exc)) from None
    return loads_catalog(*texts)


def loads_catalog(
    disks_text: str,
    controllers_text: str,
    disks_origin: str = "disks.toml",
    controllers_origin: str = "controllers.toml",
) -> Catalog:
    disks = _entries(disks_text, disks_origin, "disk", _disk)
    controllers = _entries(controllers_text, controllers_origin, "controller", _controller)
    return Catalog(disks=tuple(disks), controllers=tuple(controllers))


class _Entry:
    """Typed access to one table, with errors that say where."""

    def __init__(self, data: Mapping[str, Any], where: str) -> None:
        self.data = data
        self.where = where

    def fail(self, key: str, message: str) -> CatalogError:
        return CatalogError(f"{self.where} {key}: {message}")

    def text(self, key: str, default: str | None = None) -> str:
        value = self.data.get(key, default)
        if value is None:
            raise self.fail(key, "missing")
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"must be a non-empty string, got {value!r}")
        return value

    def number(self, key: str, low: float, high: float, default: float | None = None) -> float:
        value = self.data.get(key, default)
        if value is None:
            raise self.fail(key, "missing")
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            raise self.fail(key, f"must be a number, got {value!r}")
        if not low <= value <= high:
            raise self.fail(key, f"must be between {low:g} and {high:g}, got {value!r}")
        return float(value)

    def whole(self, key: str, low: int, high: int) -> int:
        value = self.data.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(
                key, "missing" if value is None else f"must be a whole number, got {value!r}"
            )
        if not low <= value <= high:
            raise self.fail(key, f"must be between {low} and {high}, got {value}")
        return value

    def texts(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(key, f"must be a list of non-empty strings, got {value!r}")
        return tuple(value)


def _entries(text: str, origin: str, table: str, build: Callable[[_Entry], _T]) -> list[_T]:
    try:
        data = parse_toml(text, origin)
    except InputFileError as exc:
        raise CatalogError(str(exc)) from None
    rows = data.get(table)
    if not isinstance(rows, list) or not rows:
        raise CatalogError(f"{origin}: no [[{table}]] entries")
    seen: set[str] = set()
    out = []
    for index, row in enumerate(rows, 1):
        raw_id = row.get("id")
        where = f"{origin}: [[{table}]] " + (
            f"'{raw_id}'" if isinstance(raw_id, str) else f"#{index}"
        )
        entry = _Entry(row, where)
        entry_id = entry.text("id")
        if not _ID.match(entry_id):
            raise entry.fail("id", "use lower-case letters, digits, '-', '.' and '_'")
        if entry_id in seen:
            raise entry.fail("id", "used twice")
        seen.add(entry_id)
        out.append(build(entry))
    return out


def _disk(entry: _Entry) -> CatalogDisk:
    outer = entry.number("outer_mb_s", 1, 100_000)
    inner = entry.number("inner_mb_s", 1, 100_000)
    if inner > outer:
        raise entry.fail("inner_mb_s", f"faster than outer_mb_s ({inner:g} > {outer:g})")
    outer_write = entry.number("outer_write_mb_s", 1, 100_000, default=outer)
    scaled = inner * outer_write / outer
    inner_write = entry.number("inner_write_mb_s", 1, 100_000, default=scaled)
    if inner_write > outer_write:
        raise entry.fail("inner_write_mb_s", "faster than outer_write_mb_s")
    interface = entry.text("interface")
    if interface not in DISK_INTERFACES:
        raise entry.fail("interface", f"{interface!r} is not one of {', '.join(DISK_INTERFACES)}")
    rpm = entry.whole("rpm", 0, 20_000)
    if 0 < rpm < 3600:
        raise entry.fail("rpm", f"0 for an SSD or 3600-20000 for a disk, got {rpm}")
    return CatalogDisk(
        id=entry.text("id"),
        vendor=entry.text("vendor"),
        model=entry.text("model"),
        capacity_gb=entry.number("capacity_gb", 0.001, 1_000_000),
        rpm=rpm,
        outer_mb_s=outer,
        inner_mb_s=inner,
        outer_write_mb_s=outer_write,
        inner_write_mb_s=inner_write,
        random_iops=entry.number("random_iops", 1, 100_000_000),
        price=entry.number("price", 0, 1_000_000),
        year=entry.whole("year", 1980, 2100),
        interface=interface,
        matches=entry.texts("matches"),
    )


def _controller(entry: _Entry) -> CatalogController:
    interface = entry.text("interface")
    if interface not in CONTROLLER_INTERFACES:
        raise entry.fail(
            "interface", f"{interface!r} is not one of {', '.join(CONTROLLER_INTERFACES)}"
        )
    computed: int | None = None
    gen: int | None = None
    lanes: int | None = None
    if interface in ("pcie", "dmi"):
        gen, lanes = entry.whole("pcie_gen", 1, 6), entry.whole("lanes", 1, 32)
        computed = pcie_link_mb_s(PCIE_GT_S[gen], lanes)
    elif interface in ("pci", "pci-x"):
        mhz = entry.number("bus_mhz", 33, 533)
        computed = int(mhz * entry.whole("bus_bits", 32, 64) / 8)
    if "bus_mb_s" in entry.data or computed is None:
        given = entry.number("bus_mb_s", 1, 1_000_000)
        if computed is not None and abs(given - computed) > computed / 100:
            raise entry.fail(
                "bus_mb_s", f"{given:g} disagrees with {computed} computed from the interface"
            )
        computed = int(given)
    pci_ids = entry.texts("pci_ids")
    for pci_id in pci_ids:
        if not re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{4}", pci_id):
            raise entry.fail("pci_ids", f"{pci_id!r} is not a lower-case hex vendor:device pair")
    return CatalogController(
        id=entry.text("id"),
        vendor=entry.text("vendor"),
        model=entry.text("model"),
        ports=entry.whole("ports", 1, 1024),
        interface=interface,
        bus_mb_s=computed,
        price=entry.number("price", 0, 1_000_000),
        year=entry.whole("year", 1980, 2100),
        matches=entry.texts("matches"),
        pci_ids=pci_ids,
        pcie_gen=gen,
        lanes=lanes,
    )

"""Chassis layouts and bay mappings on disk.

Layouts: shipped ones in `stripewise/resources/chassis/`, the user's own in
`$XDG_CONFIG_HOME/stripewise/chassis/`, one TOML file per chassis model, found by the DMI product
name they name (a user file replaces a shipped one of the same product). Mappings (bay label ->
by-path): one file per host, `$XDG_CONFIG_HOME/stripewise/bays/<host>.toml`, written with the
same format and a `[ports]` table, so `bays export` gives a file another host of the same model
and cabling can import whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from importlib.resources import as_file
from importlib.resources.abc import Traversable
from pathlib import Path

from stripewise.input_files import InputFileError, read_text
from stripewise.model.chassis import ChassisError, ChassisLayout, dump_layout, parse_layout
from stripewise.output_files import write_output

SUFFIX = ".toml"
MAX_LAYOUT_BYTES = 2**20
DMI_PRODUCT = Path("/sys/class/dmi/id/product_name")
_NOT_A_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class HostBays:
    """A host's layout (None when none is known for its product) and its mapping."""

    product: str | None
    layout: ChassisLayout | None
    ports: dict[str, str]
    layout_path: str | None = None


def config_folder() -> Path:
    from platformdirs import user_config_dir

    return Path(user_config_dir("stripewise"))


def read_product(path: Path = DMI_PRODUCT) -> str | None:
    """The DMI product name, or None where the firmware gives none (VMs may say anything)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return text or None


def file_name(text: str) -> str:
    """A file name for a product or host key: readable, and never a path."""
    return (_NOT_A_NAME.sub("_", text).strip("._") or "unnamed")[:120] + SUFFIX


def read_layout_file(location: Traversable) -> ChassisLayout:
    try:
        with as_file(location) as path:
            text = read_text(path, what="a chassis layout", max_bytes=MAX_LAYOUT_BYTES)
    except InputFileError as exc:
        raise ChassisError(str(exc), str(location)) from None
    return parse_layout(text, str(location))


def _entries(folder: Traversable) -> list[Traversable]:
    try:
        if not folder.is_dir():
            return []
        return sorted(
            (e for e in folder.iterdir() if e.name.endswith(SUFFIX) and e.is_file()),
            key=lambda e: e.name,
        )
    except OSError:
        return []


def shipped_folder() -> Traversable:
    from stripewise.resources import resource

    return resource("chassis")


def layouts(config: Path | None = None) -> dict[str, tuple[ChassisLayout, str]]:
    """Every readable layout by product: (layout, where it was read); the user's win."""
    found: dict[str, tuple[ChassisLayout, str]] = {}
    for folder in (shipped_folder(), (config or config_folder()) / "chassis"):
        for entry in _entries(folder):
            try:
                layout = read_layout_file(entry)
            except ChassisError:
                continue  # `bays show` names a broken file when it is the one asked for
            found[layout.product] = (replace(layout, ports={}), str(entry))
    return found


def layout_for(product: str | None, config: Path | None = None) -> tuple[ChassisLayout, str] | None:
    if not product:
        return None
    return layouts(config).get(product)


def mapping_path(host_key: str, config: Path | None = None) -> Path:
    return (config or config_folder()) / "bays" / file_name(host_key)


def host_bays(host_key: str, product: str | None, config: Path | None = None) -> HostBays:
    """The host's saved bays (the layout they were mapped on, with their ports), else the
    layout of its product with no bay mapped yet."""
    path = mapping_path(host_key, config)
    if path.is_file():
        saved = read_layout_file(path)
        return HostBays(saved.product, replace(saved, ports={}), dict(saved.ports), str(path))
    found = layout_for(product, config)
    if found is None:
        return HostBays(product, None, {})
    return HostBays(product, found[0], {}, found[1])


def save_mapping(
    host_key: str, layout: ChassisLayout, ports: dict[str, str], config: Path | None = None
) -> Path:
    path = mapping_path(host_key, config)
    write_atomically(path, dump_layout(layout, ports))
    return path


def save_layout(layout: ChassisLayout, config: Path | None = None) -> Path:
    """Into the user's chassis folder, under its product's name (its ports are not kept
    there: they belong to a host)."""
    path = (config or config_folder()) / "chassis" / file_name(layout.product)
    write_atomically(path, dump_layout(replace(layout, ports={})))
    return path


def write_atomically(path: Path, text: str) -> None:
    """Whole or not at all, its directory made first (output_files: never over a device)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_output(path, text)

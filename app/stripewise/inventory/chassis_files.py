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
from dataclasses import dataclass, field, replace
from importlib.resources import as_file
from importlib.resources.abc import Traversable
from pathlib import Path

from stripewise.input_files import InputFileError, read_text
from stripewise.model.bay_map import Refit, refit
from stripewise.model.chassis import ChassisError, ChassisLayout, dump_layout, parse_layout
from stripewise.output_files import write_output

SUFFIX = ".toml"
MAX_LAYOUT_BYTES = 2**20
DMI_PRODUCT = Path("/sys/class/dmi/id/product_name")
_NOT_A_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class HostBays:
    """A host's layout (None when none is known for its product) and its mapping; `dropped`:
    saved bays its product's layout no longer has (drawn anew since), with their ports."""

    product: str | None
    layout: ChassisLayout | None
    ports: dict[str, str]
    layout_path: str | None = None
    dropped: dict[str, str] = field(default_factory=dict)

    def note(self) -> str:
        """What became of saved bays the product's layout no longer has ("" when none)."""
        if not self.dropped:
            return ""
        moved = Refit(self.ports, self.dropped).note()
        return f'the layout of "{self.product}" changed since this host was mapped: {moved}'


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
    """The host's saved bays on its product's layout (the one its mapping was made on is kept
    with it, for when no layout of that product is found any more), else the layout of its
    product with no bay mapped yet. A layout saved for the product since (on another host of
    the model, or imported) is this host's too: its saved bays keep their ports where the new
    layout still has them."""
    path = mapping_path(host_key, config)
    if path.is_file():
        saved = read_layout_file(path)
        ports = dict(saved.ports)
        current = layout_for(saved.product, config)
        if current is None:
            return HostBays(saved.product, replace(saved, ports={}), ports, str(path))
        moved = refit(current[0], ports)
        return HostBays(saved.product, current[0], moved.kept, current[1], moved.dropped)
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


def use_layout(
    host_key: str, layout: ChassisLayout, saved: dict[str, str], config: Path | None = None
) -> tuple[Path, Refit]:
    """A layout (drawn, or imported) as its product's, for every host of the model, and as
    this host's, with its mapping: the layout's own [ports] when it brings some, else the
    host's `saved` one, kept where the layout still has those bays. Where the product's
    layout was saved, and the mapping kept. The CLI's import and the GUI's do this alike."""
    moved = refit(layout, dict(layout.ports) or saved)
    where = save_layout(layout, config)
    save_mapping(host_key, replace(layout, ports={}), moved.kept, config)
    return where, moved


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

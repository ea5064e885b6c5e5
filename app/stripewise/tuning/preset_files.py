"""Preset files: the shipped ones (resources/presets) and the user's own.

User presets live in `$XDG_CONFIG_HOME/stripewise/presets/NAME.toml` (platformdirs' config
folder); one with the name of a shipped preset replaces it. Includes are looked up by name among
all of them. A file's `name` must be its file name without `.toml`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib.resources import as_file
from importlib.resources.abc import Traversable
from pathlib import Path

from stripewise.input_files import InputFileError, read_text
from stripewise.model.presets import Preset, PresetError, PresetFile, combine, parse_preset

SHIPPED = "shipped"
USER = "user"
FILE = "file"  # given by path on the command line
SUFFIX = ".toml"
MAX_PRESET_BYTES = 2**20  # the shipped presets are 1-3 KiB each


@dataclass(frozen=True)
class PresetSource:
    name: str
    kind: str  # shipped, user or file
    location: Traversable  # a Path, or the shipped resource

    @property
    def path(self) -> str:
        return str(self.location)

    def read(self) -> PresetFile:
        try:
            with as_file(self.location) as path:
                text = read_text(path, what="a preset", max_bytes=MAX_PRESET_BYTES)
        except InputFileError as exc:
            raise PresetError(str(exc), self.path) from None
        return parse_preset(text, self.path, self.name)


def shipped_folder() -> Traversable:
    from stripewise.resources import resource

    return resource("presets")


def user_folder() -> Path:
    """`presets` in the per-user config folder (not created: only read here)."""
    from platformdirs import user_config_dir

    return Path(user_config_dir("stripewise")) / "presets"


def available(user: Path | None = None) -> dict[str, PresetSource]:
    """Every preset by name, sorted; a user preset replaces a shipped one of the same name."""
    found: dict[str, PresetSource] = {}
    for kind, folder in ((SHIPPED, shipped_folder()), (USER, user or user_folder())):
        for entry in _entries(folder):
            name = entry.name.removesuffix(SUFFIX)
            found[name] = PresetSource(name, kind, entry)
    return dict(sorted(found.items()))


def _entries(folder: Traversable) -> list[Traversable]:
    try:
        if not folder.is_dir():
            return []
        return [e for e in folder.iterdir() if e.name.endswith(SUFFIX) and e.is_file()]
    except OSError:
        return []


class _Library(Mapping[str, PresetFile]):
    """Presets by name, each read and parsed when an include first asks for it."""

    def __init__(self, sources: Mapping[str, PresetSource]) -> None:
        self.sources = sources
        self.read: dict[str, PresetFile] = {}

    def __getitem__(self, name: str) -> PresetFile:
        if name not in self.read:
            self.read[name] = self.sources[name].read()
        return self.read[name]

    def __contains__(self, name: object) -> bool:
        return name in self.sources

    def __iter__(self) -> Iterator[str]:
        return iter(self.sources)

    def __len__(self) -> int:
        return len(self.sources)


def find(name_or_path: str, user: Path | None = None) -> PresetSource:
    """A preset by name, or a `.toml` file given by path."""
    sources = available(user)
    if name_or_path.endswith(SUFFIX) or "/" in name_or_path:
        path = Path(name_or_path)
        return PresetSource(path.name.removesuffix(SUFFIX), FILE, path)
    if name_or_path not in sources:
        known = ", ".join(sources) or "none"
        raise PresetError(f"unknown preset {name_or_path!r} (known: {known})")
    return sources[name_or_path]


def load(name_or_path: str, user: Path | None = None) -> tuple[Preset, PresetSource]:
    """The preset with its includes merged, and where it came from."""
    source = find(name_or_path, user)
    library = _Library(available(user))
    return combine(source.read(), library), source

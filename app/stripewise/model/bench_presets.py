"""The Benchmark view's presets: named starting points for the form, never hidden settings.

Sizes depend on the machine: bonnie++'s rule is a file of twice the RAM so the page cache
cannot hold it; with direct I/O the cache is bypassed and a smaller file is honest too, so
when 2 x RAM does not fit the target (a small device, a full filesystem) the preset falls
back to direct I/O on what fits.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from stripewise.model.bench import Phase
from stripewise.model.units import binary_size

GiB = 2**30
MiB = 2**20


@dataclass(frozen=True)
class PresetValues:
    phases: tuple[Phase, ...]
    size_bytes: int
    block_bytes: int = MiB
    random_block_bytes: int = 4096
    direct: bool = True
    queue_depth: int = 1
    streams: int = 1
    repetitions: int = 1
    runtime_cap_s: float = 600.0
    note: str = ""


@dataclass(frozen=True)
class Preset:
    name: str
    summary: str


PRESETS = (
    Preset("Quick check", "about a minute: sequential write and read, random reads, direct I/O"),
    Preset(
        "bonnie-style",
        "sequential write, rewrite, sequential read and random seeks on a file of 2 x RAM "
        "(or direct I/O when 2 x RAM does not fit), three passes",
    ),
    Preset("Sequential 1M Q8", "1 MiB sequential write and read, 8 I/Os in flight, direct"),
    Preset("Random 4K Q32", "4 KiB random reads, writes and 70/30 mix, 32 in flight, direct"),
)


def _whole_mib(size: int) -> int:
    return size // MiB * MiB


def _room(free_bytes: int | None, device_bytes: int | None) -> int:
    """What a preset may ask for, in whole MiB: all of a block device (the helper refuses
    more than it holds, not less), 90 % of a filesystem's free space (leave it some air), or
    64 GiB when neither is known (the helper checks)."""
    if device_bytes is not None:
        return _whole_mib(device_bytes)
    return _whole_mib(int((free_bytes if free_bytes is not None else 64 * GiB) * 0.9))


def preset_values(
    name: str, ram_bytes: int, free_bytes: int | None, *, device_bytes: int | None = None
) -> PresetValues:
    """The form values for `name` on a machine with `ram_bytes`: on a directory with
    `free_bytes` free (None: unknown), or on a block device of `device_bytes`. Sizes are
    whole MiB, so the form shows them as M or G, never as a count of KiB."""
    room = _room(free_bytes, device_bytes)

    def fitting(size: int) -> int:
        return max(MiB, min(size, room))

    if name == "Quick check":
        return PresetValues(
            (Phase.SEQ_WRITE, Phase.SEQ_READ, Phase.RANDOM_READ),
            fitting(GiB),
            runtime_cap_s=20.0,
        )
    if name == "bonnie-style":
        twice_ram = -(-2 * ram_bytes // GiB) * GiB  # rounded up: never under 2 x RAM
        base = PresetValues(
            (Phase.SEQ_WRITE, Phase.REWRITE, Phase.SEQ_READ, Phase.RANDOM_READ),
            twice_ram,
            direct=False,
            repetitions=3,
        )
        if twice_ram <= room:
            return replace(
                base,
                note=f"buffered, as bonnie++ runs: the file ({binary_size(twice_ram)}) is "
                f"2 x RAM ({binary_size(ram_bytes)})",
            )
        size = fitting(4 * GiB)
        return replace(
            base,
            size_bytes=size,
            direct=True,
            note=f"2 x RAM ({binary_size(twice_ram)}) does not fit here: direct I/O on "
            f"{binary_size(size)} keeps the page cache out instead",
        )
    if name == "Sequential 1M Q8":
        return PresetValues((Phase.SEQ_WRITE, Phase.SEQ_READ), fitting(4 * GiB), queue_depth=8)
    if name == "Random 4K Q32":
        return PresetValues(
            (Phase.RANDOM_READ, Phase.RANDOM_WRITE, Phase.MIXED),
            fitting(4 * GiB),
            queue_depth=32,
            runtime_cap_s=60.0,
        )
    raise KeyError(f"no preset named {name!r}")

"""The Benchmark view's presets: named starting points for the form, never hidden settings.

Sizes depend on the machine: bonnie++'s rule is a file of twice the RAM so the page cache
cannot hold it; with direct I/O the cache is bypassed and a smaller file is honest too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from stripewise.model.bench import Phase

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


def preset_values(name: str, ram_bytes: int, free_bytes: int | None) -> PresetValues:
    """The form values for `name` on a machine with `ram_bytes` and `free_bytes` at the target
    (None: unknown, as for a raw device, whose size the helper checks)."""
    room = free_bytes if free_bytes is not None else 64 * GiB

    def fitting(size: int) -> int:
        usable = int(room * 0.9) // MiB * MiB  # leave the filesystem some air
        return max(64 * MiB, min(size, usable))

    if name == "Quick check":
        return PresetValues(
            (Phase.SEQ_WRITE, Phase.SEQ_READ, Phase.RANDOM_READ),
            fitting(GiB),
            runtime_cap_s=20.0,
        )
    if name == "bonnie-style":
        base = PresetValues(
            (Phase.SEQ_WRITE, Phase.REWRITE, Phase.SEQ_READ, Phase.RANDOM_READ),
            2 * ram_bytes,
            direct=False,
            repetitions=3,
        )
        if 2 * ram_bytes <= room * 0.9:
            return replace(base, note="buffered, as bonnie++ runs: the file is 2 x RAM")
        return replace(
            base,
            size_bytes=fitting(4 * GiB),
            direct=True,
            note="2 x RAM does not fit here: direct I/O keeps the page cache out instead",
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

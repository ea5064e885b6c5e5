"""Figures a comparison must not judge: the runs differ in a parameter that changes what the
figure means, so its change says nothing about better or worse.

- Block size: IOPS and per-I/O latency follow it. 4 MiB blocks make a quarter of 1 MiB's IOPS
  at the same MB/s, and each I/O takes longer; throughput, CPU and efficiency keep their
  meaning.
- Engine, for latency: each times an I/O its own way (fio from the return of the submission,
  the built-in engine from before it; bonnie++ keeps the slowest operation), docs/history.md.
- File size against RAM: a buffered file under twice the RAM is read partly from the page
  cache (DOMAIN.md 4: 1.5 GB/s "reads" from 8 SATA disks at 1 GB, ~230 MB/s at 8 GB), so a
  reading phase of such a run and of one that reads the disks measure different things.

Each note is against the baseline, as the changes are: "block size differs (1 MiB vs 4 MiB):
IOPS not comparable".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stripewise.model.setting_labels import size_bytes, size_text
from stripewise.model.vocabulary import SEQ_READ_PER_CHAR

# metric -> its name in a note; what an I/O's size changes
PER_IO = {
    "iops": "IOPS",
    "latency_p50": "latency p50",
    "latency_p99": "latency p99",
    "latency_max": "latency max",
}
_RANDOM_PHASES = ("random_read", "random_write", "mixed")
# phases whose figures a page cache can answer: every one that reads the test file
_READING_PHASES = frozenset(("rewrite", "seq_read", "random_read", "mixed", SEQ_READ_PER_CHAR))
_SEQUENTIAL_KEYS = ("spec.block_size", "spec.bs")  # a measured run's, fio's in an import
_RANDOM_KEYS = ("spec.random_block_size", "spec.bs")
CACHED_BELOW = 2.0  # file size / RAM: bonnie++'s rule, a file of twice the RAM
# what the notes above can say, for a legend: every cause, in the order they are tested
CAUSES = (
    "block size for IOPS and latency, the engine for latency, file size against RAM (or the "
    "RAM, or direct I/O) for buffered reads"
)


def not_comparable(
    phase: str, metric: str, contexts: Sequence[Mapping[str, Any]], base: int
) -> tuple[str, ...]:
    """Per run, why its figure is not judged against the baseline's ("" when it is), from
    the flattened contexts `compare` lists "What differs" from."""
    notes = []
    for index, context in enumerate(contexts):
        if index == base:
            notes.append("")
            continue
        reference = contexts[base]
        notes.append(
            _block_note(phase, metric, reference, context)
            or _engine_note(metric, reference, context)
            or _cache_note(phase, reference, context)
        )
    return tuple(notes)


def _block_note(phase: str, metric: str, base: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    if metric not in PER_IO:
        return ""
    keys = _RANDOM_KEYS if phase.startswith(_RANDOM_PHASES) else _SEQUENTIAL_KEYS
    for key in keys:
        before, after = size_bytes(base.get(key)), size_bytes(other.get(key))
        if before is None or after is None:
            continue  # a run that did not record it: nothing known to differ
        if before == after:
            return ""
        sizes = f"{size_text(before)} vs {size_text(after)}"
        return f"block size differs ({sizes}): {PER_IO[metric]} not comparable"
    return ""


def _engine_note(metric: str, base: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    if not metric.startswith("latency"):
        return ""
    before, after = base.get("engine"), other.get("engine")  # the spec's folded in there
    if not before or not after or before == after:
        return ""
    return f"engine differs ({before} vs {after}): latency timed differently, not comparable"


def _cache_note(phase: str, base: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    if phase not in _READING_PHASES and "read" not in phase:  # iozone's reread, fread...
        return ""
    before, after = _exposure(base), _exposure(other)
    if before is None or after is None or before == after:
        return ""
    if not (_cached(before) or _cached(after)):
        return ""  # both read the disks, whatever else differs
    sizes = [size_bytes(c.get("spec.size")) for c in (base, other)]
    if sizes[0] is not None and sizes[1] is not None and sizes[0] != sizes[1]:
        what = (
            f"file size differs ({size_text(sizes[0])} = {before[0]:g}\u00d7 RAM vs "
            f"{size_text(sizes[1])} = {after[0]:g}\u00d7 RAM)"
        )
    elif before[0] != after[0]:
        what = f"RAM differs (file {before[0]:g}\u00d7 vs {after[0]:g}\u00d7 RAM)"
    else:
        words = {True: "direct", False: "buffered"}
        what = (
            f"direct I/O differs ({words[before[1]]} vs {words[after[1]]}, "
            f"file {before[0]:g}\u00d7 RAM)"
        )
    return f"{what}: reads may come from the page cache, not comparable"


def _exposure(context: Mapping[str, Any]) -> tuple[float, bool] | None:
    """(file size / RAM, direct I/O); None when the ratio is unknown. A run that does not say
    whether it was direct counts as buffered: bonnie++ and fio read through the cache unless
    told otherwise."""
    ratio = context.get("workload.file_size_vs_ram")
    if not isinstance(ratio, int | float) or isinstance(ratio, bool):
        return None
    direct = context.get("spec.direct")
    return float(ratio), direct is True or direct in ("1", 1)


def _cached(exposure: tuple[float, bool]) -> bool:
    ratio, direct = exposure
    return not direct and ratio < CACHED_BELOW

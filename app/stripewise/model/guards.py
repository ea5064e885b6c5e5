"""The guards: checks the helper runs on every repetition of a phase, each a name stored with
the figure (`PhaseOutcome.flags` -> `phase_result` -> results -> history) and shown in words.

The table below is the one place the names are defined; docs/protocol.md and docs/history.md
list them. A name this version does not know (a newer helper's) is shown as itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from stripewise.model.setting_labels import size_text


class Severity(StrEnum):
    """How far a tripped guard takes the figure from the disks'."""

    INVALID = "invalid"  # the figure is not the storage's: do not compare it with disks
    CAUTION = "caution"  # the figure is real, but something other than the disks limited it


@dataclass(frozen=True)
class Guard:
    name: str  # on the wire and in the history
    title: str  # a few words, for marks and legends
    meaning: str  # one line an admin can act on
    severity: Severity


ABOVE_CEILING = "above_ceiling"
CACHED_READS = "cached_reads"
CPU_BOUND = "cpu_bound"
SMALL_BUFFERED_FILE = "small_buffered_file"
COMPRESSED_WRITES = "compressed_writes"
MEMBER_STANDS_OUT = "member_stands_out"
NOT_STEADY = "not_steady"

GUARDS: dict[str, Guard] = {
    g.name: g
    for g in (
        Guard(
            ABOVE_CEILING,
            "above the physical ceiling",
            "faster than the slowest link under the target can carry (SATA/SAS/PCIe link, or "
            "memory for a RAM-backed device): the figure counts something other than the disks",
            Severity.INVALID,
        ),
        Guard(
            CACHED_READS,
            "reads served from cache",
            "the disks read less than half of what the engine read: the page cache (or a "
            "cache below it) answered the rest; use direct I/O or a file of twice the RAM",
            Severity.INVALID,
        ),
        Guard(
            CPU_BOUND,
            "CPU-bound",
            "a CPU was saturated for most of the phase: the figure is the CPU's limit, not the "
            "disks'; add streams, use direct I/O or a lighter engine",
            Severity.CAUTION,
        ),
        Guard(
            SMALL_BUFFERED_FILE,
            "buffered file under 2 x RAM",
            "buffered I/O on a file smaller than twice the RAM: the page cache can answer reads "
            "the disks never see; use direct I/O or a larger file",
            Severity.CAUTION,
        ),
        Guard(
            COMPRESSED_WRITES,
            "compressible data, compressing storage",
            "the engine wrote compressible data to a compressing filesystem or device: fewer "
            "bytes reached the disks than the figure counts",
            Severity.INVALID,
        ),
        Guard(
            MEMBER_STANDS_OUT,
            "a member stands out",
            "one member of the array had more than twice the await or utilisation of the "
            "others (the median of theirs): the array waits for it; check its disk, its link "
            "and its health",
            Severity.CAUTION,
        ),
        Guard(
            NOT_STEADY,
            "never steady",
            "the write rate did not settle within the rounds allowed (SNIA PTS: 5 rounds within "
            "20 % of their mean, their trend within 10 %): the figure may be a cache's burst, "
            "not the lasting rate; precondition the target or allow more rounds",
            Severity.INVALID,
        ),
    )
}


def guard(name: str) -> Guard:
    """The guard of that name; one this version does not know is described by its name."""
    return GUARDS.get(name) or Guard(name, name.replace("_", " "), name, Severity.CAUTION)


def describe(flags: tuple[str, ...] | list[str]) -> list[str]:
    """One line per flag, the figure-invalidating ones first: `title: meaning`."""
    found = sorted(
        (guard(f) for f in dict.fromkeys(flags)), key=lambda g: g.severity is not Severity.INVALID
    )
    return [f"{g.title}: {g.meaning}" for g in found]


PAGE_CACHE_FACTOR = 2  # bonnie++'s rule: a file of at least twice the RAM


def page_cache_warning(size_bytes: int, direct: bool, ram_bytes: int) -> str | None:
    """The warning before a buffered run on a file the page cache can hold a large part of;
    the helper and the GUI say it in the same words (the GUI shows it once)."""
    if direct or size_bytes >= PAGE_CACHE_FACTOR * ram_bytes:
        return None
    return (
        f"buffered I/O on a {size_text(size_bytes)} file with {size_text(ram_bytes)} of "
        "RAM: the page cache will inflate the results (use direct I/O, or a file of at least "
        "twice the RAM)"
    )

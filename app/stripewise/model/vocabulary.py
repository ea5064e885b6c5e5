"""One vocabulary for every figure in the history: (phase, quantity, unit).

Measured runs (`PhaseResult.values`) and imported ones (`importers.mapping`) name their
figures from the tables below, so a bonnie++ import and a run Stripewise measured line up row
by row in a comparison. Units are stored in SI: throughput in MB/s (10^6 B/s), never KiB/s;
an import keeps the unit its tool printed in `ResultValue.source_unit`, for display.

A figure with no measured counterpart keeps a name of its own: bonnie++'s per-character
tests are phases `seq_write_per_char` / `seq_read_per_char`; tests only a tool runs (iozone's
`reread`, bonnie++'s file tests) keep the tool's name. When two figures of one run would get
the same (phase, quantity), the phase carries a qualifier: `seq_write (seqw)`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Phases as measured runs name them (model.bench.Phase), in bonnie++'s order.
PHASES = ("seq_write", "rewrite", "seq_read", "random_read", "random_write", "mixed")
# bonnie++'s per-character tests (putc/getc): no measured counterpart, named apart
SEQ_WRITE_PER_CHAR = "seq_write_per_char"
SEQ_READ_PER_CHAR = "seq_read_per_char"


@dataclass(frozen=True)
class Quantity:
    """What a figure measures: its metric name and the one unit it is stored in."""

    metric: str
    unit: str
    lower_is_better: bool
    meaning: str


THROUGHPUT = Quantity("throughput", "MB/s", False, "bytes moved per second, in 10^6 B/s")
IOPS = Quantity("iops", "IOPS", False, "I/O operations per second")
CPU = Quantity("cpu", "%", True, "CPU busy while the phase ran")
LATENCY_P50 = Quantity("latency_p50", "us", True, "median completion latency")
LATENCY_P99 = Quantity("latency_p99", "us", True, "99th percentile completion latency")
# bonnie++ reports the slowest single operation of a test: not a percentile
LATENCY_MAX = Quantity("latency_max", "us", True, "the slowest single operation")
EFFICIENCY = Quantity(
    "efficiency", "KB/s per CPU %", False, "throughput per CPU % (KB = 10^3 B), as the notes"
)

# An import's `cpu` is one process's CPU time over the wall time (fio's usr_cpu + sys_cpu,
# bonnie++'s %CP): 100 % is one CPU, where a measured run's 100 % is every CPU. A CPU-bound
# job reads ~100 % imported and ~50 % measured on two CPUs, so a comparison keeps the two
# apart under these names, and the efficiency made from each apart too.
PROCESS_CPU = Quantity(
    "process_cpu", "% of one CPU", True, "the tool's process's CPU time over the phase's time"
)
PROCESS_EFFICIENCY = Quantity(
    "process_efficiency",
    "KB/s per % of one CPU",
    False,
    "throughput per % of one CPU the tool's process used (KB = 10^3 B)",
)
PER_PROCESS = {CPU.metric: PROCESS_CPU, EFFICIENCY.metric: PROCESS_EFFICIENCY}

QUANTITIES: dict[str, Quantity] = {
    q.metric: q
    for q in (
        THROUGHPUT,
        IOPS,
        CPU,
        LATENCY_P50,
        LATENCY_P99,
        LATENCY_MAX,
        EFFICIENCY,
        PROCESS_CPU,
        PROCESS_EFFICIENCY,
    )
}
# What a measured phase records, in the order PhaseResult.values() gives it.
MEASURED = (THROUGHPUT, IOPS, LATENCY_P50, LATENCY_P99, CPU, EFFICIENCY)

# A steady-state write phase's rounds (model.steady_state), kept per repetition under the
# phase qualified `seq_write (repetition 2)`. The rounds are parts of ONE run of the phase,
# never repetitions: no verdict is tested on them and no phase figure is read from them
# (model.rounds_kept takes them apart from a run's figures as it is read).
ROUND_THROUGHPUT = Quantity(
    "round_throughput",
    "MB/s",
    False,
    "a sequential write's rounds of one steady-state run, not repetitions: each round's MB/s "
    "in run order (passes), the value the window's mean",
)
ROUND_IOPS = Quantity(
    "round_iops",
    "IOPS",
    False,
    "a random write's rounds of one steady-state run, not repetitions: each round's IOPS in "
    "run order (passes), the value the window's mean",
)
ROUND_EXCURSION = Quantity(
    "round_excursion", "%", True, "the window's max - min, in percent of its mean (SNIA PTS)"
)
ROUND_SLOPE = Quantity(
    "round_slope", "%", True, "the window's least-squares line's rise, in percent of its mean"
)
ROUND_STEADY = Quantity("round_steady", "", False, "1 when the window held the rule, else 0")
ROUNDS = (ROUND_THROUGHPUT, ROUND_IOPS, ROUND_EXCURSION, ROUND_SLOPE, ROUND_STEADY)
ROUND_METRICS = frozenset(q.metric for q in ROUNDS)

# A tool's unit -> (the stored unit, factor from the tool's unit to it). bonnie++'s and
# iozone's K is 1024 bytes: 1 KiB/s = 1024 / 10^6 MB/s.
TO_STORED: dict[str, tuple[str, float]] = {
    "B/s": ("MB/s", 1e-6),
    "KiB/s": ("MB/s", 1024 / 1e6),
    "MiB/s": ("MB/s", 2**20 / 1e6),
    "kB/s": ("MB/s", 1e3 / 1e6),
    "MB/s": ("MB/s", 1.0),
    "/s": ("IOPS", 1.0),  # bonnie++'s seeks per second: each seek is a read
    "ops/s": ("IOPS", 1.0),
    "IOPS": ("IOPS", 1.0),
    "ns": ("us", 1e-3),
    "us": ("us", 1.0),
    "ms": ("us", 1e3),
    "s": ("us", 1e6),
    "%": ("%", 1.0),
}

_QUALIFIED = re.compile(r"^(?P<phase>.+?) \((?P<qualifier>.+)\)$")


def to_stored(value: float | None, source_unit: str) -> tuple[float | None, str]:
    """A tool's figure in the stored unit; a unit not in TO_STORED is kept as it is."""
    unit, factor = TO_STORED.get(source_unit, (source_unit, 1.0))
    return (None if value is None else value * factor), unit


def from_stored(value: float | None, source_unit: str) -> float | None:
    """A stored figure back in its tool's unit (for display beside the stored one)."""
    _, factor = TO_STORED.get(source_unit, (source_unit, 1.0))
    return None if value is None else value / factor


def efficiency(throughput_mb_s: float | None, cpu_pct: float | None) -> float | None:
    """KB/s per CPU % (the RAID notes' figure); None without both, or at 0 % CPU."""
    if throughput_mb_s is None or not cpu_pct:
        return None
    return throughput_mb_s * 1000 / cpu_pct


def qualified(phase: str, qualifier: str) -> str:
    """Two figures of one run in the same phase, told apart: `seq_write (seqw)`."""
    return f"{phase} ({qualifier})"


def split_qualified(phase: str) -> tuple[str, str | None]:
    """`seq_write (seqw)` -> ('seq_write', 'seqw'); an unqualified phase -> (phase, None)."""
    match = _QUALIFIED.match(phase)
    if match is None:
        return phase, None
    return match.group("phase"), match.group("qualifier")


def is_round_figure(metric: str) -> bool:
    """A steady-state phase's rounds or their window: never a phase figure or a repetition."""
    return metric in ROUND_METRICS


def is_lower_better(metric: str) -> bool:
    """The table's quantities say; of a tool's own names, latencies and CPU shares are better
    lower (`*_latency_us`, `*_cpu_pct`), an efficiency (`kb_s_per_cpu_pct`) higher."""
    known = QUANTITIES.get(metric)
    if known is not None:
        return known.lower_is_better
    return "latency" in metric or (metric.endswith("_cpu_pct") and "_per_" not in metric)


# --- the tools' names for the same figures ----------------------------------------------------

# bonnie++ (importers.bonnie_fields names): each test's figure, its %CP and its latency.
# (raw metric) -> (phase, quantity); the raw phase is implied by the test.
BONNIE_TESTS: dict[str, tuple[str, Quantity]] = {
    "seq_write_char_kBps": (SEQ_WRITE_PER_CHAR, THROUGHPUT),
    "seq_write_block_kBps": ("seq_write", THROUGHPUT),
    "rewrite_kBps": ("rewrite", THROUGHPUT),
    "seq_read_char_kBps": (SEQ_READ_PER_CHAR, THROUGHPUT),
    "seq_read_block_kBps": ("seq_read", THROUGHPUT),
    "random_seeks_per_s": ("random_read", IOPS),
}

# iozone tests (as importers.iozone_* name them) -> phases; others keep iozone's name.
IOZONE_TESTS: dict[str, str] = {
    "write": "seq_write",
    "rewrite": "rewrite",
    "read": "seq_read",
    "random_read": "random_read",
    "random_write": "random_write",
    "mixed": "mixed",
}

# fio's `rw` -> phase. `rw`/`readwrite` is how Stripewise's own fio engine runs rewrite
# (stripewise/fio/jobs.py); a `write` job with `overwrite=1` writes over a file fio laid
# out first, so it is a rewrite too. Trims have no measured counterpart.
FIO_KINDS: dict[str, str] = {
    "read": "seq_read",
    "write": "seq_write",
    "randread": "random_read",
    "randwrite": "random_write",
    "randrw": "mixed",
    "rw": "rewrite",
    "readwrite": "rewrite",
}

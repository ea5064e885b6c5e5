"""How a benchmark spec lays out as fio jobs: fio's `rw` per phase, the block size a phase
uses, each stream's region and what a phase moves when it runs to its end."""

from __future__ import annotations

from stripewise.model.bench import BenchSpec, Phase

FIO_RW: dict[Phase, str] = {
    Phase.SEQ_WRITE: "write",
    Phase.REWRITE: "readwrite",
    Phase.SEQ_READ: "read",
    Phase.RANDOM_READ: "randread",
    Phase.RANDOM_WRITE: "randwrite",
    Phase.MIXED: "randrw",
}
RANDOM_PHASES = (Phase.RANDOM_READ, Phase.RANDOM_WRITE, Phase.MIXED)


class JobError(ValueError):
    """A spec or target fio cannot be given; the message is one line, for people."""


def block_of(spec: BenchSpec, phase: Phase) -> int:
    return spec.random_block_bytes if phase in RANDOM_PHASES else spec.block_bytes


def stream_bytes(spec: BenchSpec) -> int:
    """Each stream's region: an equal share of the size, whole blocks."""
    return spec.size_bytes // spec.streams // spec.block_bytes * spec.block_bytes


def phase_size(spec: BenchSpec, phase: Phase) -> int:
    """Bytes of its region that one stream touches in `phase` (whole blocks of the phase)."""
    block = block_of(spec, phase)
    size = stream_bytes(spec) // block * block
    if size == 0:
        raise JobError(f"{phase}: a stream's share of the size is smaller than one block")
    return size


def planned_bytes(spec: BenchSpec, phase: Phase) -> int:
    """Bytes (reads plus writes) one repetition of the phase moves when it runs to its end."""
    return phase_size(spec, phase) * spec.streams * (2 if phase is Phase.REWRITE else 1)

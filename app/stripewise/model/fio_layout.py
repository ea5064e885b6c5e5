"""How a benchmark spec lays out as fio jobs, shared by the helper's fio engine and the
multi-host client (which may not import the helper): fio's `rw` per phase, the block size a
phase uses, and each stream's region."""

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


def block_of(spec: BenchSpec, phase: Phase) -> int:
    return spec.random_block_bytes if phase in RANDOM_PHASES else spec.block_bytes


def stream_bytes(spec: BenchSpec) -> int:
    """Each stream's region: an equal share of the size, whole blocks."""
    return spec.size_bytes // spec.streams // spec.block_bytes * spec.block_bytes

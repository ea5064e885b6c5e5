"""Per-phase figures: what counts as throughput, and bonnie++'s names."""

from __future__ import annotations

from stripewise.model.bench import Phase, PhaseOutcome

MB = 10**6


def outcome(phase: Phase, read: int, write: int, elapsed: float = 2.0) -> PhaseOutcome:
    return PhaseOutcome(
        phase=phase,
        repetition=0,
        elapsed_s=elapsed,
        read_bytes=read * MB,
        write_bytes=write * MB,
        read_ops=read,
        write_ops=write,
    )


def test_rewrite_counts_each_block_once_like_bonnie() -> None:
    # 1,000 MB read back and rewritten in 2 s: bonnie++ prints 500 MB/s, not 1,000
    rewrite = outcome(Phase.REWRITE, 1000, 1000)
    assert rewrite.mb_s == 500.0
    assert rewrite.iops == 500.0


def test_other_phases_count_reads_plus_writes() -> None:
    assert outcome(Phase.MIXED, 700, 300).mb_s == 500.0
    assert outcome(Phase.SEQ_WRITE, 0, 1000).mb_s == 500.0
    assert outcome(Phase.SEQ_READ, 1000, 0).iops == 500.0


def test_no_elapsed_time_gives_zero_not_a_division_error() -> None:
    assert outcome(Phase.SEQ_READ, 10, 0, elapsed=0.0).mb_s == 0.0

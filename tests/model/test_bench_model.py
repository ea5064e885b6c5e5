"""Per-phase figures: what counts as throughput, and bonnie++'s names."""

from __future__ import annotations

import pytest

from stripewise.model.bench import Phase, PhaseOutcome, summarize

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


def test_rewrite_counts_the_region_when_fios_mix_wraps_one_side() -> None:
    """fio's read/write mix of a 32 MiB region read 30 MiB and wrote 34 (one side wrapped past
    the end): each block counts once, 32 MiB, not the 34 written (about 6 % high)."""
    rewrite = outcome(Phase.REWRITE, 30, 34, elapsed=1.0)
    assert rewrite.mb_s == 32.0
    assert rewrite.iops == 32.0


def test_other_phases_count_reads_plus_writes() -> None:
    assert outcome(Phase.MIXED, 700, 300).mb_s == 500.0
    assert outcome(Phase.SEQ_WRITE, 0, 1000).mb_s == 500.0
    assert outcome(Phase.SEQ_READ, 1000, 0).iops == 500.0


def test_no_elapsed_time_gives_zero_not_a_division_error() -> None:
    assert outcome(Phase.SEQ_READ, 10, 0, elapsed=0.0).mb_s == 0.0


def test_every_figure_keeps_its_passes_for_a_verdict_failed_ones_left_out() -> None:
    def outcome(mb: int, cpu: float | None, p99: float, error: str | None = None) -> PhaseOutcome:
        return PhaseOutcome(
            Phase.SEQ_READ, 1, 1.0, read_bytes=mb * 10**6, lat_p99_us=p99, cpu_busy_pct=cpu,
            error=error,
        )  # fmt: skip

    outcomes = [outcome(100, 10.0, 50.0), outcome(300, None, 70.0), outcome(200, 20.0, 60.0)]
    result = summarize(Phase.SEQ_READ, [*outcomes, outcome(999, 99.0, 1.0, "cancelled")])
    assert result.mb_s is not None and result.mb_s.values == (100.0, 300.0, 200.0)
    assert result.passes["cpu_pct"] == (10.0, 20.0)  # the repetition without a CPU figure: none
    assert result.passes["lat_p99_us"] == (50.0, 70.0, 60.0)
    assert result.passes["kb_s_per_cpu_pct"] == (10_000.0, 10_000.0)  # MB/s x 1000 / CPU %
    assert "lat_p50_us" not in result.passes
    by_metric = {v.metric: v for v in result.values()}
    assert by_metric["cpu"].passes == (10.0, 20.0) and by_metric["cpu"].value == 15.0
    assert by_metric["latency_p99"].passes == (50.0, 70.0, 60.0)
    assert by_metric["throughput"].passes == (100.0, 300.0, 200.0)


def test_efficiency_is_each_passs_own_and_single_figures_say_their_passes() -> None:
    """Each repetition's KB/s per CPU %, then their median: the ratio of the median MB/s to the
    median CPU would pair one pass's throughput with another's CPU (200 MB/s with 20 %)."""
    figures = [(100, 30.0, 50.0), (200, 10.0, 70.0), (300, 20.0, 60.0)]
    outcomes = [
        PhaseOutcome(
            Phase.SEQ_READ, 1, 1.0, read_bytes=mb * 10**6, lat_p99_us=p99, cpu_busy_pct=cpu
        )
        for mb, cpu, p99 in figures
    ]
    result = summarize(Phase.SEQ_READ, outcomes)
    assert result.passes["kb_s_per_cpu_pct"] == pytest.approx((3_333.3, 20_000.0, 15_000.0), 1e-4)
    assert result.kb_s_per_cpu_pct == 15_000.0  # not 200 x 1000 / 20 = 10,000
    by_metric = {v.metric: v for v in result.values()}
    for metric, low, high in (("cpu", 10.0, 30.0), ("latency_p99", 50.0, 70.0)):
        assert (by_metric[metric].min_value, by_metric[metric].max_value) == (low, high)
        assert by_metric[metric].repetitions == 3
    assert by_metric["efficiency"].repetitions == 3

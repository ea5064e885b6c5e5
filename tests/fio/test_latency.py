"""The one latency of fio figures: completion latency per job, several jobs merged by their
I/O counts (never averaged), the direction with more I/Os for a phase; group runs' terse
results follow the same rule as the helper's engine."""

from __future__ import annotations

import pytest

from stripewise.fio import latency
from stripewise.fio.client import section_outcomes
from stripewise.fio.client_output import JobFigures
from stripewise.fio.jobs import Section
from stripewise.fio.latency import JobLatency, p50_p99_us, percentile_us, terse_points
from stripewise.model.bench import BenchSpec, Phase

FAST = JobLatency(100, ((10.0, 50.0), (20.0, 99.0), (30.0, 100.0)))
SLOW = JobLatency(300, ((100.0, 50.0), (200.0, 99.0), (300.0, 100.0)))


def test_one_job_gives_its_own_points() -> None:
    assert p50_p99_us([FAST]) == (10.0, 20.0)


def test_jobs_merge_by_io_count_never_averaged() -> None:
    """Three quarters of the I/Os are the slow job's: half of all I/Os took 100 us or less
    (the mean of the two medians, 55 us, is no figure any I/O count supports)."""
    assert p50_p99_us([FAST, SLOW]) == (100.0, 200.0)
    # weighted the other way: 150 of 400 I/Os are known to be 10 us or less, 297 to be 20 us
    # or less, so the median is 20 us: the listed latency at or above the true one (never below)
    assert percentile_us([JobLatency(300, FAST.points), JobLatency(100, SLOW.points)], 50) == 20


def test_the_merged_figure_lies_between_the_jobs_own() -> None:
    for pct in (50.0, 99.0):
        merged = percentile_us([FAST, SLOW], pct)
        own = [percentile_us([job], pct) for job in (FAST, SLOW)]
        assert merged is not None and min(filter(None, own)) <= merged <= max(filter(None, own))


def test_jobs_that_timed_nothing_count_for_nothing() -> None:
    assert p50_p99_us([]) == (None, None)
    assert p50_p99_us([JobLatency(0, FAST.points), FAST]) == (10.0, 20.0)


def test_completion_latency_is_read_from_fio_3_and_fio_2_json() -> None:
    fio3 = {"clat_ns": {"N": 4, "percentile": {"50.000000": 2000, "99.000000": 9000}}}
    fio2 = {"total_ios": 4, "clat": {"percentile": {"50.000000": 2, "99.000000": 9}}}
    total_only = {"lat_ns": {"N": 4, "percentile": {"50.000000": 7000}}, "clat_ns": {"N": 0}}
    for stats in (fio3, fio2):
        found = latency.from_json(stats)
        assert found is not None and p50_p99_us([found]) == (2.0, 9.0)
    assert latency.from_json(total_only) is None  # total latency is never taken for it


def test_terse_cells() -> None:
    cells = ["1.000000%=3", "50.000000%=12", "99.000000%=40", "0%=0", "garbage"]
    assert terse_points(cells) == ((0.0, 0.0), (3.0, 1.0), (12.0, 50.0), (40.0, 99.0))
    with pytest.raises(ValueError):
        terse_points(["50.000000%=abc"])


def test_a_phase_reports_the_direction_with_more_ios() -> None:
    assert latency.dominant(7, 3) == "read"
    assert latency.dominant(3, 7) == "write"
    assert latency.dominant(5, 5) == "read"


def _job(read_bytes: int, write_bytes: int, read_us: float, write_us: float) -> JobFigures:
    return JobFigures(
        section="mixed.r1", error=0, read_bytes=read_bytes, write_bytes=write_bytes,
        read_runtime_ms=1000, write_runtime_ms=1000, read_bw_kib_s=0, write_bw_kib_s=0,
        read_clat=((read_us, 50.0), (2 * read_us, 99.0)),
        write_clat=((write_us, 50.0), (2 * write_us, 99.0)),
        cpu_pct=None,
    )  # fmt: skip


def test_a_group_hosts_streams_merge_as_the_engines_do() -> None:
    """A host's two streams of a mixed phase: reads did more I/Os, so the figure is the reads'
    completion latency, the streams merged by I/O count: of 800 reads, 350 are known to be
    10 us or less and 693 20 us or less (median 20 us), 792 180 us or less (p99). Not the
    slowest stream's (90 / 180 us), nor the slower direction's (the writes')."""
    spec = BenchSpec("/srv", 2**30, streams=2, engine="fio")
    block = spec.random_block_bytes
    jobs = [_job(700 * block, 300 * block, 10.0, 500.0), _job(100 * block, 50 * block, 90.0, 900.0)]
    (outcome,) = section_outcomes(spec, [Section(Phase.MIXED, 1)], jobs)
    assert (outcome.read_ops, outcome.write_ops) == (800, 350)
    assert (outcome.lat_p50_us, outcome.lat_p99_us) == (20.0, 180.0)

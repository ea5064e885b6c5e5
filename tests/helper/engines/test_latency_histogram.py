"""The latency histogram against exact sorted figures: every I/O counted, within 1/128."""

from __future__ import annotations

import bisect
import itertools
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from stripewise.fio.client_latency import percentiles
from stripewise.helper.engines.latency_histogram import BUCKETS, LatencyHistogram, bucket_of
from stripewise.model.latency import GRID_BUCKETS, fio_rank, grid_edge_us, lower_bound


def exact_percentile_us(values: list[int], share: float) -> float:
    """fio's figure over the exact values: the first whose count reaches share x n."""
    ordered = sorted(values)
    return ordered[fio_rank(share, len(ordered)) - 1] / 1000.0


@pytest.mark.parametrize(
    ("count", "share", "rank"),
    [(4, 0.5, 2), (3, 0.5, 2), (100, 0.99, 99), (1000, 0.999, 1000), (10, 0.99, 10),
     (1, 0.5, 1), (5, 0.0, 1), (7, 1.0, 7), (200, 0.99, 198), (2000, 0.999, 1999)],
)  # fmt: skip
def test_the_rank_is_fios(count: int, share: float, rank: int) -> None:
    """stat.c's calc_clat_percentiles: the first I/O at which the count reaches the double of
    the percent / 100 x n (99.9's double is a little over 99.9: the 1,000th of 1,000); the
    interval figures (the helper's, the group runs') and fio's own phase figures agree."""
    assert fio_rank(share, count) == rank
    values = [1_000_000 * (k + 1) for k in range(count)]  # 1 ms apart: a bucket each
    histogram = LatencyHistogram()
    histogram.values.extend(values)
    assert histogram.percentile_us(share) == pytest.approx(values[rank - 1] / 1000, rel=1 / 128)
    grid = np.zeros(GRID_BUCKETS, dtype=np.int64)
    edges = [grid_edge_us(index) for index in range(GRID_BUCKETS + 1)]
    np.add.at(grid, [bisect.bisect_right(edges, v / 1000) - 1 for v in values], 1)
    (figures,) = percentiles(grid)
    assert figures is not None
    wanted = {"p50": 0.5, "p99": 0.99, "p999": 0.999}
    for key, got in zip(wanted, (figures.p50, figures.p99, figures.p999), strict=True):
        at = values[fio_rank(wanted[key], count) - 1] / 1000
        assert got == pytest.approx(at, rel=0.2), key  # a grid bucket's middle: 4 a doubling


def test_every_value_falls_in_the_bucket_whose_range_holds_it() -> None:
    values = [0, 1, 63, 64, 65, 127, 128, 129, 255, 256, 1000, 4095, 4096, 10**6, 10**9, 2**40]
    values += np.random.default_rng(3).integers(0, 2**45, size=2000).tolist()
    buckets = bucket_of(np.asarray(values, dtype=np.int64)).tolist()
    for value, bucket in zip(values, buckets, strict=True):
        assert 0 <= bucket < BUCKETS
        assert lower_bound(bucket) <= value < lower_bound(bucket + 1), value


def test_buckets_tile_the_range_without_gaps() -> None:
    bounds = [lower_bound(bucket) for bucket in range(BUCKETS)]
    assert bounds[:65] == list(range(65))
    assert all(low < high for low, high in itertools.pairwise(bounds))
    widths = [(high - low) / low for low, high in itertools.pairwise(bounds[64:])]
    assert max(widths) <= 1 / 64  # so a bucket's middle is within 1/128 of anything in it


@pytest.mark.parametrize("share", [0.0, 0.5, 0.9, 0.99, 0.999, 1.0])
def test_percentiles_are_within_1_in_128_of_the_exact_figure(share: float) -> None:
    rng = np.random.default_rng(11)
    values = (rng.lognormal(mean=9.5, sigma=1.2, size=50_000)).astype(np.int64).tolist()
    histogram = LatencyHistogram()
    for start in range(0, len(values), 7000):  # folded in pieces, as workers do
        histogram.values.extend(values[start : start + 7000])
        histogram.fold()
    exact = exact_percentile_us(values, share)
    found = histogram.percentile_us(share)
    assert found is not None and abs(found - exact) <= exact / 128 + 0.001


def test_merged_histograms_count_every_io_of_every_worker() -> None:
    first, second, merged = LatencyHistogram(), LatencyHistogram(), LatencyHistogram()
    first.values.extend([1000] * 99)
    second.values.extend([1_000_000])
    for worker in (first, second):
        merged.merge(worker)
    assert merged.total == 100
    assert merged.percentile_us(0.5) == pytest.approx(1.0, rel=1 / 128)
    assert merged.percentile_us(1.0) == pytest.approx(1000.0, rel=1 / 128)


def test_no_io_has_no_percentile() -> None:
    assert LatencyHistogram().percentile_us(0.5) is None


def test_the_group_runs_long_double_ranks_are_the_exact_ones() -> None:
    """fio.client_latency ranks whole rows at once in long double, as fio does; model's
    fio_rank in exact fractions: the same for every count."""
    counts = np.arange(1, 5001)
    for share in (0.5, 0.99, 0.999):
        percent = np.longdouble(round(share * 100, 6))
        fast = np.maximum(1, np.ceil(percent / np.longdouble(100) * counts)).astype(int)
        assert fast.tolist() == [fio_rank(share, int(n)) for n in counts], share


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")
def test_fios_own_percentiles_read_from_its_bins_with_fio_rank(tmp_path: Path) -> None:
    """A real fio run's json+ histogram: each percentile fio prints is the bin fio_rank finds."""
    done = subprocess.run(
        ["fio", "--name=t", "--ioengine=null", "--rw=read", "--bs=4k", "--size=4000k",
         "--number_ios=1000", "--percentile_list=50:99:99.9", "--output-format=json+",
         f"--directory={tmp_path}"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    clat = json.loads(done.stdout)["jobs"][0]["read"]["clat_ns"]
    bins = sorted((int(value), count) for value, count in clat["bins"].items())
    total = sum(count for _value, count in bins)
    for key, printed in clat["percentile"].items():
        rank, seen = fio_rank(float(key) / 100, total), 0
        found = next(value for value, count in bins if (seen := seen + count) >= rank)
        assert found == printed, key

"""The latency histogram against exact sorted figures: every I/O counted, within 1/128."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from stripewise.helper.engines.latency_histogram import BUCKETS, LatencyHistogram, bucket_of
from stripewise.model.latency import lower_bound


def exact_percentile_us(values: list[int], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] / 1000.0


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

"""Issue 33, point 1: a sample's interval latency kept in the history as series, read back
equal; a sample stored before (no such series) reads back as none."""

from __future__ import annotations

import numpy as np

from stripewise.helper.engines.latency_histogram import (
    BUCKETS,
    LatencyHistogram,
    bucket_of,
    wire_buckets,
)
from stripewise.model.bench import Phase
from stripewise.model.latency import (
    GRID_BUCKETS,
    WIRE_MERGE,
    IntervalLatency,
    LatencyBuckets,
    grid_edge_us,
    grid_index,
    latency_series,
    stored_latency,
)
from stripewise.protocol.events import Sample


def test_the_grid_covers_the_engine_histogram() -> None:
    assert GRID_BUCKETS * WIRE_MERGE == BUCKETS
    edges = [grid_edge_us(index) for index in range(GRID_BUCKETS + 1)]
    assert edges == sorted(set(edges))
    assert all(grid_index(edge) == index for index, edge in enumerate(edges[:-1]))
    assert grid_index(edges[3] + 0.001) is None


def test_an_interval_reads_back_from_its_series() -> None:
    histogram = LatencyHistogram()
    histogram.values.extend([90_000] * 50 + [120_000] * 40 + [5_000_000] * 3)
    histogram.fold()
    edges, counts = wire_buckets(histogram.counts)
    assert sum(counts) == 93 and 0 in counts  # zeros between the used buckets stay
    buckets = LatencyBuckets(edges, counts)
    latency = IntervalLatency(95.5, 4999.5, 5000.5)
    sample = Sample(
        "r", Phase.SEQ_READ, 1, 0.5, 1.0, 0.0, 2.0, 0.0, None, None,
        latency_us=latency, histogram=buckets,
    )  # fmt: skip
    series = sample.series()
    assert series["latency_us.p99"] == 4999.5
    assert stored_latency(series) == (latency, buckets)
    edge = edges[int(np.flatnonzero(np.asarray(counts))[0])]
    assert edge <= 90.0 < edges[1]
    assert int(bucket_of(np.asarray([90_000]))[0]) // WIRE_MERGE == grid_index(edges[0])


def test_a_sample_stored_before_has_no_latency() -> None:
    assert stored_latency({"engine_read_mb_s": 1.0}) == (None, None)
    assert latency_series(None, None) == {}
    off_grid = LatencyBuckets((1.5, 2.5), (4,))
    assert latency_series(IntervalLatency(2.0, 2.0, 2.0), off_grid) == {
        "latency_us.p50": 2.0,
        "latency_us.p99": 2.0,
        "latency_us.p999": 2.0,
    }

"""fio's json+ latency bins (cumulative, each keyed by its bucket's middle in ns) as the
built-in engine's fine buckets: the same log-linear scheme, so each lands in its own."""

from __future__ import annotations

from stripewise.fio.report import clat_bins
from stripewise.helper.engines.latency_histogram import counts_of, percentile_of
from stripewise.model.latency import lower_bound


def test_jobs_and_directions_add_up_on_the_engines_buckets() -> None:
    job = {
        "read": {"total_ios": 5, "clat_ns": {"bins": {"2064": 3, "1015808": 2}}},
        "write": {"total_ios": 1, "clat_ns": {"bins": {"2064": 1}}},
    }
    other = {"read": {"total_ios": 2, "clat_ns": {"bins": {"2096": 2}}}}
    bins = clat_bins({"jobs": [job, other]})
    assert bins == {2064: 4, 1015808: 2, 2096: 2}
    counts = counts_of(bins)
    assert counts.sum() == 8
    for value, count in bins.items():
        [bucket] = [b for b in range(len(counts)) if lower_bound(b) <= value < lower_bound(b + 1)]
        assert counts[bucket] >= count
    assert percentile_of(counts, 0.99) is not None and percentile_of(counts, 0.99) > 1000


def test_plain_json_has_no_bins() -> None:
    assert clat_bins({"jobs": [{"read": {"total_ios": 1, "clat_ns": {"mean": 5.0}}}]}) is None

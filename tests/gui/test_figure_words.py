"""Every figure is named in words wherever a table names it: the comparison's results
(`latency_max (µs)` stood beside "Completion latency p99 (µs)") and the History page's
other figures, in µs as everywhere else."""

from __future__ import annotations

from stripewise.gui.compare_cells import figure_name
from stripewise.model.metric_words import metric_words


def test_the_comparison_names_every_stored_figure_in_words() -> None:
    assert figure_name("latency_max", "us") == "Latency max (µs)"
    assert figure_name("latency_p99", "us") == "Completion latency p99 (µs)"
    assert figure_name("seq_create_per_s", "/s") == "Sequential file creates (/s)"
    assert figure_name("read_iops", "IOPS") == "Read IOPS"


def test_every_stored_metric_has_words() -> None:
    said = {
        "latency_max": "Latency max",
        "read_latency_p99": "Read completion latency p99",
        "write_iops": "Write IOPS",
        "seq_create_per_s": "Sequential file creates",
        "random_delete_per_s_cpu_pct": "CPU of random file deletes",
        "seq_stat_latency_us": "Sequential file stats: latency max",
        "parent_kBps": "Throughput the parent saw",
    }
    assert {metric: metric_words(metric) for metric in said} == said
    assert metric_words("some_new_metric") == "Some new metric"

"""Every figure is named in words wherever a table names it: the comparison's results
(`latency_max (µs)` stood beside "Completion latency p99 (µs)") and the History page's
other figures, in µs as everywhere else."""

from __future__ import annotations

from stripewise.gui.compare_cells import figure_name
from stripewise.model.metric_words import metric_words, named


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


def test_every_figure_an_import_files_has_words_and_its_unit() -> None:
    """iozone -t's times read "Cpu time s", their unit dropped as if the name's last letter
    said it. Every figure of every recorded file now has words of its own, and its unit."""
    from tests.importers.fixtures import FIXTURES, imported

    unnamed = set()
    for path in sorted(FIXTURES.iterdir()):
        try:
            runs = imported(path.name)
        except Exception:  # a damaged file kept to be refused: tested elsewhere
            continue
        for result in (r for run in runs for r in run.results):
            if named(result.metric) is None:
                unnamed.add(result.metric)
            shown = figure_name(result.metric, result.unit)
            unit = "µs" if result.unit == "us" else result.unit
            assert not unit or shown == unit or shown.endswith((f"({unit})", f" {unit}")), shown
    assert not unnamed, sorted(unnamed)

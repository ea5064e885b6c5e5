"""Figures by their words: a stored metric (`latency_max`, `read_iops`, bonnie++'s
`seq_stat_per_s`, iozone's `parent_kBps`) as a reader names it ("Latency max", "Read IOPS",
"Sequential file stats"), for every table, note and card that names a figure.

One mapping for the comparison's results, the History page's other figures and what an
import says its tool could not time. A metric not known here is still said in words.
"""

from __future__ import annotations

import re

_NAMES = {
    "throughput": "Throughput",
    "iops": "IOPS",
    "cpu": "CPU",
    "process_cpu": "CPU of the tool's process",
    "latency_p50": "Completion latency p50",
    "latency_p99": "Completion latency p99",
    # bonnie++'s: the slowest single operation of a test, not a percentile
    "latency_max": "Latency max",
    "efficiency": "Efficiency",
    "process_efficiency": "Efficiency per process CPU",
    "round_throughput": "Throughput per round",
    "round_iops": "IOPS per round",
    "round_excursion": "Excursion of the window",
    "round_slope": "Slope of the window",
    "round_steady": "Steady",
    # iozone -t's throughput report
    "parent_kBps": "Throughput the parent saw",
    "parent_ops_per_s": "Operations the parent saw",
    "min_per_process_kBps": "Slowest process's throughput",
    "max_per_process_kBps": "Fastest process's throughput",
    "avg_per_process_kBps": "Mean throughput per process",
    "min_per_process_ops_per_s": "Slowest process's operations",
    "max_per_process_ops_per_s": "Fastest process's operations",
    "avg_per_process_ops_per_s": "Mean operations per process",
    "min_xfer_kB": "Least data one process moved",
    "min_xfer_ops": "Fewest operations one process did",
    # fio's own "All clients" total beside the clients' sum (fio/import_clients.py)
    "fio_throughput": "Throughput by fio's own total",
    "fio_iops": "IOPS by fio's own total",
    "wall_time_s": "Wall time",
    "cpu_time_s": "CPU time",
    "cpu_utilization_pct": "CPU utilisation",
}
# bonnie++'s tests, as its importer names their figures (importers/bonnie_fields.py)
_BONNIE_TESTS = {
    "seq_write_char": "Per-character writes",
    "seq_write_block": "Block writes",
    "rewrite": "Rewrites",
    "seq_read_char": "Per-character reads",
    "seq_read_block": "Block reads",
    "random_seeks": "Random seeks",
    "seq_create": "Sequential file creates",
    "seq_stat": "Sequential file stats",
    "seq_delete": "Sequential file deletes",
    "random_create": "Random file creates",
    "random_stat": "Random file stats",
    "random_delete": "Random file deletes",
}
_BONNIE_FIGURE = re.compile(
    rf"(?P<test>{'|'.join(_BONNIE_TESTS)})_(?P<kind>kBps|per_s|per_s_cpu_pct|kBps_cpu_pct|latency_us)"
)
_DIRECTIONS = {"read_": "Read", "write_": "Write", "trim_": "Trim"}  # fio's jobs of both


def metric_words(metric: str) -> str:
    """What a reader calls a stored figure: `latency_max` -> "Latency max",
    `write_latency_p99` -> "Write completion latency p99"; one not known here in the words
    of its name."""
    return named(metric) or metric.replace("_", " ").capitalize()


def named(metric: str) -> str | None:
    """The words of a figure known here; None for one that is not."""
    if metric in _NAMES:
        return _NAMES[metric]
    for prefix, direction in _DIRECTIONS.items():
        inner = metric.removeprefix(prefix)
        if inner != metric and inner in _NAMES:
            return f"{direction} {lowered(_NAMES[inner])}"
    bonnie = _BONNIE_FIGURE.fullmatch(metric)
    if bonnie is not None:
        test = _BONNIE_TESTS[bonnie["test"]]
        if bonnie["kind"].endswith("cpu_pct"):
            return f"CPU of {lowered(test)}"
        if bonnie["kind"] == "latency_us":
            return f"{test}: latency max"
        return test
    return None


def lowered(words: str) -> str:
    """The first letter lowered unless the first word is an abbreviation (IOPS, CPU)."""
    first = words.split(" ", 1)[0]
    return words if first.isupper() else words[:1].lower() + words[1:]

"""Loading a comparison: the runs, and from their samples the throughput over time (shown,
never judged: samples within a pass are no repetitions). Shared by the CLI, the GUI and the
bench."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from stripewise.history.latency_rows import with_latency
from stripewise.history.store import HistoryStore
from stripewise.model.compare import MAX_RUNS, Comparison, Series, compare_runs, engine_series


def load_compared(
    store: HistoryStore, run_ids: Sequence[int], baseline_id: int | None
) -> Comparison:
    """The runs and their verdicts: results only, no samples (nothing judged needs them).
    A group run brings its host runs right after it (its total beside each host's figures)
    when they fit in one comparison (MAX_RUNS); else its total alone."""
    return compare_runs(store.get_runs(compared_ids(store, run_ids)), baseline_id)


def compared_ids(store: HistoryStore, run_ids: Sequence[int]) -> list[int]:
    """`run_ids` with group runs' host runs added, if the whole fits in MAX_RUNS."""
    from stripewise.history.group_runs import with_host_runs

    expanded = with_host_runs(store, run_ids)
    return expanded if len(expanded) <= MAX_RUNS else list(run_ids)


def load_comparison(
    store: HistoryStore, run_ids: Sequence[int], baseline_id: int | None
) -> tuple[Comparison, dict[int, Series]]:
    """The comparison with every run's throughput over time, for what draws it, and each
    run's interval latencies where it logged them (its p99 over time)."""
    series = {
        run_id: engine_series(store.engine_samples(run_id))
        for run_id in compared_ids(store, run_ids)
    }
    compared = load_compared(store, run_ids, baseline_id)
    runs = tuple(with_latency(store, run) for run in compared.runs)
    return replace(compared, runs=runs), series


def comparison_text(comparison: Comparison, series: dict[int, Series], fmt: str) -> str:
    """csv, json or html (the report with its charts)."""
    from stripewise.history import export, report_html

    if fmt == "csv":
        return export.export_comparison_csv(comparison)
    if fmt == "json":
        return export.export_comparison_json(comparison)
    return report_html.report_html(comparison, series)


def run_text(store: HistoryStore, run_id: int, fmt: str) -> str:
    """One run: results as csv, everything with samples as json, or the html report."""
    from stripewise.history import export, report_html

    detail = store.get_run(run_id)
    children = [store.get_run(child) for child, _host in store.host_runs(run_id)]
    if fmt == "csv":  # the total's rows, then each host's, under one header row
        texts = [export.export_run_csv(run) for run in (detail, *children)]
        return texts[0] + "".join(text.split("\n", 1)[1] for text in texts[1:])
    if fmt == "html" and len(compared_ids(store, [run_id])) >= 2:  # total beside each host
        return comparison_text(*load_comparison(store, [run_id], None), fmt)
    samples = store.samples(run_id)
    if fmt == "html":
        return report_html.run_report_html(detail, samples)
    if children:
        return export.export_group_json(
            detail, samples, [(child, store.samples(child.summary.id)) for child in children]
        )
    return export.export_run_json(detail, samples)


def export_text(
    store: HistoryStore, run_ids: Sequence[int], fmt: str, baseline_id: int | None = None
) -> str:
    """A run, or a comparison when several are given (or a baseline is named)."""
    if len(run_ids) == 1 and baseline_id is None:
        return run_text(store, run_ids[0], fmt)
    if fmt != "html":  # only the report draws the samples
        return comparison_text(load_compared(store, run_ids, baseline_id), {}, fmt)
    comparison, series = load_comparison(store, run_ids, baseline_id)
    return comparison_text(comparison, series, fmt)

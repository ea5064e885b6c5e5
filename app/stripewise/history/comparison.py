"""Loading a comparison: the runs, and from their samples the spreads that stand in for
missing repetitions and the throughput over time. Shared by the CLI, the GUI and the bench."""

from __future__ import annotations

from collections.abc import Sequence

from stripewise.history.store import HistoryStore
from stripewise.model.compare import Comparison, Series, compare_runs, engine_digest


def load_comparison(
    store: HistoryStore, run_ids: Sequence[int], baseline_id: int | None
) -> tuple[Comparison, dict[int, Series]]:
    runs = store.get_runs(run_ids)
    digests = {run_id: engine_digest(store.engine_samples(run_id)) for run_id in run_ids}
    spreads = {run_id: digest.spreads for run_id, digest in digests.items()}
    series = {run_id: digest.series for run_id, digest in digests.items()}
    return compare_runs(runs, baseline_id, spreads), series

"""A stored run's interval latencies, read from its samples when the run is opened, for its
heat maps in the History detail and comparisons (issue 33). Only a run whose spec logged
them is read: one on this machine's helper (built-in engine or fio) at 2 Hz or less, or with
`latency_log`; a run stored before them reads back with none."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from stripewise.model.latency import stored_intervals
from stripewise.model.run_detail import RunDetail

if TYPE_CHECKING:
    from stripewise.history.store import HistoryStore


def with_latency(store: HistoryStore, detail: RunDetail) -> RunDetail:
    """`detail` with `latency` from its samples, where its spec says it logged them."""
    spec = detail.spec
    if spec is None or spec.engine not in ("builtin", "fio") or not spec.logs_latency:
        return detail
    if not detail.sample_count:
        return detail
    rows = store.samples(detail.summary.id)
    found = stored_intervals(
        ((row.phase, row.repetition, row.t_s, row.data) for row in rows), detail.host_label
    )
    return replace(detail, latency=found) if found else detail

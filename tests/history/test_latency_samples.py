"""Issue 33, point 1: interval latencies stored beside the samples, in the same blocks, read
back equal; a run stored before them reads back with none."""

from __future__ import annotations

from bench.latency import run_samples
from tests.history.conftest import RunMaker

from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.latency import stored_latency
from stripewise.protocol.events import Sample


def test_interval_latencies_come_back_from_the_history(
    store: HistoryStore, make_run: RunMaker
) -> None:
    sent = [s for s in run_samples(with_latency=True, count=40) if isinstance(s, Sample)]
    run_id = make_run(status=None)
    for seq, sample in enumerate(sent):
        store.add_samples(run_id, [SampleRow.of(seq, sample)])
    read = store.samples(run_id)
    assert [stored_latency(row.data) for row in read] == [(s.latency_us, s.histogram) for s in sent]
    assert all(s.histogram is not None and s.histogram.total > 1000 for s in sent)


def test_a_run_stored_before_has_no_latency(store: HistoryStore, make_run: RunMaker) -> None:
    run_id = make_run(samples=5)
    assert [stored_latency(row.data) for row in store.samples(run_id)] == [(None, None)] * 5

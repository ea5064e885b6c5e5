"""Issue 33, point 3: latency over time compared across runs, aligned on phase time: the
comparison loads each run's interval latencies (where it logged them), the HTML report draws
their p99 per phase, and the comparison window's Over time draws it under the throughput."""

from __future__ import annotations

from datetime import UTC, datetime

import pyqtgraph as pg
from bench.latency import run_samples

from stripewise.history.comparison import load_comparison
from stripewise.history.report_html import report_html
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.bench import BenchSpec, Phase
from stripewise.model.latency import p99_over_time
from stripewise.model.run import ResultValue, RunStatus
from stripewise.protocol.events import Sample


def _run(store: HistoryStore, host_id: int, name: str, rate_hz: float, seed: int) -> int:
    spec = BenchSpec("/srv", 2**30, phases=(Phase.SEQ_WRITE,), sample_rate_hz=rate_hz)
    run_id = store.create_run(
        host_id, name=name, target="/srv", engine="builtin", engine_version="1", spec=spec,
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip
    samples = [s for s in run_samples(True, count=30, seed=seed) if isinstance(s, Sample)]
    offset = 100.0 * seed  # each run starts its phase at another time of its own clock
    store.add_samples(
        run_id,
        [
            SampleRow.of(seq, Sample(**{**vars(s), "t_s": s.t_s + offset}))
            for seq, s in enumerate(samples)
        ],
    )
    store.add_results(
        run_id, [ResultValue("seq_write", "throughput", "MB/s", 300.0, None, None, 1)]
    )
    store.finish_run(run_id, RunStatus.COMPLETE)
    return run_id


def test_runs_latency_is_compared_on_phase_time(
    store: HistoryStore,
    host_id: int,
    qtbot,  # type: ignore[no-untyped-def]
) -> None:
    first = _run(store, host_id, "first", 2.0, 1)
    second = _run(store, host_id, "second", 2.0, 2)
    unlogged = _run(store, host_id, "at 10 Hz", 10.0, 3)  # logged none by its spec
    comparison, series = load_comparison(store, [first, second, unlogged], None)
    lines = [p99_over_time(run.latency) for run in comparison.runs]
    assert lines[2] == {}
    for found in lines[:2]:
        xs, ys = found["seq_write"]
        assert xs[0] == 0.0 and xs[-1] == 14.5 and len(ys) == 30  # aligned on phase time
    assert lines[0]["seq_write"][1] != lines[1]["seq_write"][1]
    html = report_html(comparison, series)
    assert "seq_write: p99 latency per interval" in html
    assert html.count("interval p99 (µs)") == 1

    from stripewise.gui.compare_plots import draw_latency

    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    assert draw_latency(plot, comparison, "seq_write", lambda i: f"run {i}")
    drawn = [item for item in plot.getPlotItem().listDataItems()]
    assert len(drawn) == 2
    assert not draw_latency(plot, comparison, "seq_read", lambda i: f"run {i}")

"""Issue 33, point 2: the latency heat map per phase, with its p50/p99/p99.9 lines and stalls
marked, live under the Benchmark page's plots. Fed with a real run's events (the built-in
engine on a loop device through the CLI) and with recorded intervals holding known stalls."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from bench.latency import run_samples
from PySide6.QtCore import QPoint

from stripewise.gui.bench_plots import LivePlots
from stripewise.gui.latency_map import LatencyAxis, LatencyMap, PhaseMap, latency_text
from stripewise.helper.engines.latency_histogram import (
    LatencyHistogram,
    percentile_of,
    wire_buckets,
)
from stripewise.model.latency import IntervalLatency, LatencyBuckets
from stripewise.protocol.events import Sample, event_from_json
from tests.fixtures.loops import MiB, loop_device, needs_loop


@pytest.fixture
def heat_map(qtbot) -> LatencyMap:  # type: ignore[no-untyped-def]
    widget = LatencyMap()
    qtbot.addWidget(widget)
    widget.resize(800, 400)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def recorded(count: int, host: str | None = None) -> list[Sample]:
    """Intervals around 200 us, with a slow tail every 97th (bench/latency.py's run)."""
    samples = [s for s in run_samples(True, count=count) if isinstance(s, Sample)]
    return [Sample(**{**vars(s), "host": host}) for s in samples] if host else samples


def test_stalls_are_marked_at_their_time_with_their_p99(heat_map: LatencyMap) -> None:
    samples = recorded(400)
    for sample in samples:
        heat_map.add_sample(sample)
    heat_map.refresh()
    phase = heat_map.shown()
    assert phase is not None and len(phase.times) == 400
    stalled = [s for s in samples if s.latency_us and s.latency_us.p99 > 2000]
    assert [s.t_s for s in stalled] == [stall.t_s for stall in phase.stalls]
    marks_x, marks_y = heat_map.stall_marks.getOriginalDataset()
    assert list(marks_y) == [s.latency_us.p99 for s in stalled if s.latency_us]
    middles = phase.centres()
    assert all(
        abs(x - middles[samples.index(s)]) < 1e-9 for x, s in zip(marks_x, stalled, strict=True)
    )
    words = ", ".join(f"{s.t_s:.1f} s (p99 {s.latency_us.p99 / 1000:,.1f} ms)" for s in stalled)
    assert heat_map.stall_label.text() == f"Stalls: {words}."
    x, y = heat_map.lines["p99"].getOriginalDataset()
    assert len(x) == 400 and list(y) == [s.latency_us.p99 for s in samples if s.latency_us]
    image = heat_map.image.image
    assert image is not None  # a column per interval's 0.5 s (the first ends at 0: merged)
    assert heat_map.image.width() == 399 and phase.image()[1].width() == pytest.approx(199.5)
    assert image.max() == 255 or image.max() > 200  # the fullest bucket of some interval


def test_a_gap_in_the_intervals_stays_an_empty_stretch_of_time(heat_map: LatencyMap) -> None:
    """Columns are placed by time: intervals after a gap are drawn at their time, under their
    percentile lines, not slid left into the gap."""
    samples = [s for s in recorded(400) if not 50 < s.t_s <= 100]  # 50 s without intervals
    for sample in samples:
        heat_map.add_sample(sample)
    heat_map.refresh()
    phase = heat_map.shown()
    assert phase is not None
    shares, rect = phase.image()
    width = rect.width() / len(shares)
    assert width == pytest.approx(0.5)
    ends = rect.left() + width * (np.arange(len(shares)) + 1)
    in_gap = (ends > 50.25) & (ends <= 100)
    assert in_gap.sum() == 100 and not shares[in_gap].any()
    for sample in samples[1:]:  # each interval's own column holds its histogram
        column = round((sample.t_s - rect.left()) / width) - 1
        assert shares[column].any(), sample.t_s
    after = next(i for i, t in enumerate(phase.times) if t > 100)  # 100.5: the gap's first
    assert phase.centres()[after] == pytest.approx(100.25)  # over its column, not in the gap


def interval_of(latency_ns: float, t_s: float) -> Sample:
    """A sample as the helper's sampler sends it (`Sampler._with_latency`): its interval's I/Os
    counted in the engine's histogram, sent as `wire_buckets`, percentiles read from it; every
    I/O here near `latency_ns`, so each interval fills a bucket of its own."""
    counted = LatencyHistogram()
    counted.values.extend([int(latency_ns)] * 900 + [int(latency_ns * 1.05)] * 100)
    counted.fold()
    p50, p99, p999 = (percentile_of(counted.counts, s) for s in (0.5, 0.99, 0.999))
    assert p50 is not None and p99 is not None and p999 is not None
    sample = recorded(1)[0]
    return Sample(
        **{
            **vars(sample),
            "t_s": t_s,
            "latency_us": IntervalLatency(round(p50, 3), round(p99, 3), round(p999, 3)),
            "histogram": LatencyBuckets(*wire_buckets(counted.counts)),
        }
    )


@pytest.mark.parametrize(
    "ends",
    [
        # `bench --rate 2 --phases seq_write,random_write`: random write's intervals, the last
        # the phase's short closing one (were drawn in columns 0, 2, 2: a gap, one merged)
        [0.787, 1.287, 1.667],
        # a steady-state phase: each round's ticks of 0.5 s, then its closing interval, short
        # (0.12 s), long (a tick left to it: 0.93 s) or a sliver (0.05 s)
        [0.5, 1.0, 1.5, 1.62, 2.12, 2.62, 3.55, 4.05, 4.55, 4.6, 5.1, 5.6],
    ],
)
def test_every_interval_is_drawn_in_its_own_time_under_its_own_lines(
    heat_map: LatencyMap, ends: list[float]
) -> None:
    samples = [interval_of(50_000 * 1.6**k, t_s) for k, t_s in enumerate(ends)]
    for sample in samples:
        heat_map.add_sample(sample)
    heat_map.refresh()
    phase = heat_map.shown()
    assert phase is not None
    shares, rect = phase.image()  # type: ignore[misc]
    width = rect.width() / len(shares)
    rows = np.linspace(rect.top(), rect.bottom(), shares.shape[1] + 1)
    column_of = np.full(len(shares), -1)  # which interval each column shows
    for k, sample in enumerate(samples):
        assert sample.latency_us is not None
        level = np.log10(sample.latency_us.p50)  # the bucket all its I/Os are in
        mine = (rows[:-1] <= level + 0.05) & (rows[1:] >= level - 0.05)
        drawn = np.flatnonzero(shares[:, mine].max(axis=1))
        assert drawn.size, f"interval {k} (ending {sample.t_s} s) is not drawn"
        assert (column_of[drawn] == -1).all(), f"interval {k} shares a column"
        column_of[drawn] = k
        # its columns lie within its own time: from the one before's end to its own
        start = ends[k - 1] if k else rect.left()
        left, right = rect.left() + drawn.min() * width, rect.left() + (drawn.max() + 1) * width
        assert start - width / 2 <= left and right <= sample.t_s + width / 2 + 1e-9
    assert (column_of >= 0).all(), "a column without its interval: a gap amid the phase"
    assert (np.diff(column_of) >= 0).all()
    for key in ("p50", "p99", "p999"):  # each line point over its own interval's column
        x, _y = heat_map.lines[key].getOriginalDataset()
        columns = np.floor((np.asarray(x) - rect.left()) / width).astype(int)
        assert list(column_of[columns]) == list(range(len(samples)))


@pytest.mark.parametrize("times", [[0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 2.0], [7.0]])
def test_intervals_at_one_time_still_make_a_map(times: list[float]) -> None:
    """A single interval at the start, or several stamped with the same time: one period
    wide (0.5 s, or the spacing there is), never a division by nothing."""
    (sample,) = recorded(1)
    phase = PhaseMap()
    for t_s in times:
        assert sample.latency_us is not None
        phase.add(t_s, sample.latency_us, sample.histogram)
    shares, rect = phase.image()
    assert rect.width() > 0 and len(shares) >= 1 and shares.any()
    assert len(phase.centres()) == len(times)


def test_one_map_per_host_and_the_total_has_none(heat_map: LatencyMap) -> None:
    for host in ("alpha:8765", "beta:8765"):
        for sample in recorded(20, host):
            heat_map.add_sample(sample)
    heat_map.add_sample(Sample(**{**vars(recorded(1)[0]), "host": "total"}))
    assert heat_map.keys == [("alpha:8765", "seq_write", 1), ("beta:8765", "seq_write", 1)]
    assert heat_map.chooser.itemText(1) == "beta:8765: seq write, pass 1"
    heat_map.show_map(heat_map.keys[0])
    assert heat_map.shown() is not None


@needs_loop
def test_a_real_run_draws_a_map_per_phase_on_the_benchmark_plots(qtbot) -> None:  # type: ignore[no-untyped-def]
    with loop_device(128 * MiB) as loop:
        done = subprocess.run(
            [sys.executable, "-m", "stripewise", "bench", "--engine", "builtin", "--json",
             "--target", loop.device, "--confirm-serial", loop.image, "--size", "64M",
             "--phases", "seq_write,random_read", "--rate", "10", "--latency-log"],
            capture_output=True, text=True, timeout=300, check=True,
        )  # fmt: skip
    events = [event_from_json(json.loads(line)) for line in done.stdout.splitlines()]
    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.resize(700, 700)
    plots.show()
    assert plots.latency_map.isHidden()
    samples = [e for e in events if isinstance(e, Sample)]
    for sample in samples:
        plots.add_sample(sample)
    plots.refresh()
    assert not plots.latency_map.isHidden()
    heat_map = plots.latency_map
    assert heat_map.keys == [(None, "seq_write", 1), (None, "random_read", 1)]
    shown = heat_map.shown()  # following the run: its last phase
    measured = [s for s in samples if s.phase.value == "random_read" and s.latency_us]
    assert shown is not None and shown.times == [s.t_s for s in measured]
    _x, y = heat_map.lines["p50"].getOriginalDataset()
    assert np.allclose(y, [s.latency_us.p50 for s in measured if s.latency_us])
    plots.clear()
    assert plots.latency_map.isHidden() and heat_map.keys == []


@needs_loop
def test_the_history_detail_draws_a_saved_runs_maps(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from stripewise.gui.history_detail import RunDetailPane
    from stripewise.history.database import open_database
    from stripewise.history.latency_rows import with_latency
    from stripewise.history.store import HistoryStore

    db_url = f"sqlite:///{tmp_path / 'history.db'}"
    with loop_device(128 * MiB) as loop:
        for rate in ("2", "10"):  # at 10 Hz no latency is logged: a run as stored before
            subprocess.run(
                [sys.executable, "-m", "stripewise", "bench", "--engine", "builtin", "--save",
                 "--db", db_url, "--target", loop.device, "--confirm-serial", loop.image,
                 "--size", "64M", "--phases", "seq_write,seq_read", "--rate", rate],
                capture_output=True, text=True, timeout=300, check=True,
            )  # fmt: skip
    db = open_database(db_url)
    try:
        store = HistoryStore(db)
        logged, unlogged = sorted(run.id for run in store.list_runs())
        with_map = with_latency(store, store.get_run(logged))
        without = with_latency(store, store.get_run(unlogged))
    finally:
        db.close()
    assert {(i.phase, i.repetition) for i in with_map.latency} == {
        ("seq_write", 1),
        ("seq_read", 1),
    }
    assert without.latency == ()
    pane = RunDetailPane()
    qtbot.addWidget(pane)
    pane.resize(900, 800)
    pane.show()
    pane.show_detail(with_map)
    assert not pane.latency_map.isHidden()
    # in the height the History page gives it, the map beside the figures, every row shown
    pane.resize(1090, pane.wanted_height())
    qtbot.waitUntil(lambda: pane.results.viewport().height() > 0)
    results, chart = pane.results, pane.latency_map
    assert results.mapTo(pane, results.rect().topRight()).x() < chart.mapTo(pane, QPoint(0, 0)).x()
    assert results.verticalScrollBar().maximum() == 0, "the results table scrolls"
    assert results.horizontalScrollBar().maximum() == 0, "its columns are cut"
    assert pane.latency_map.keys == [(None, "seq_write", 1), (None, "seq_read", 1)]
    shown = pane.latency_map.shown()
    assert shown is not None and shown.times == [
        i.t_s for i in with_map.latency if i.phase == "seq_write"
    ]
    pane.show_detail(without)
    assert pane.latency_map.isHidden() and pane.latency_map.keys == []


def test_a_short_phase_reads_in_seconds_from_zero_and_latency_with_units(
    heat_map: LatencyMap,
) -> None:
    """A 70 ms phase, one interval: its map starts at the run's start, not half a second
    before it, in seconds (no "x0.001"); latency labels carry their unit, a few named."""
    sample = recorded(1)[0]
    heat_map.add_sample(Sample(**{**vars(sample), "t_s": 0.07}))
    heat_map.refresh()
    _shares, rect = heat_map.shown().image()  # type: ignore[union-attr]
    assert (rect.left(), rect.right()) == pytest.approx((0.0, 0.07))
    assert heat_map.plot.getPlotItem().getAxis("bottom").autoSIPrefix is False
    assert [latency_text(us) for us in (0.5, 500, 2000, 1.5e6)] == [
        "0.5 µs",
        "500 µs",
        "2 ms",
        "1.5 s",
    ]
    axis = LatencyAxis("left")
    axis.setLogMode(True)
    for low_us, high_us, named in (
        (300, 6000, ["500 µs", "1 ms", "2 ms", "5 ms"]),  # under two decades: 1, 2, 5
        (10, 100_000, ["100 µs", "1 ms", "10 ms"]),  # decades alone
    ):
        low, high = np.log10(low_us), np.log10(high_us)
        axis.setRange(low, high)
        values = [v for _spacing, level in axis.tickValues(low, high, 150) for v in level]
        shown = [text for text in axis.tickStrings(values, 1, 1) if text]
        assert set(named) <= set(shown) and not any("·" in text for text in shown), shown
        assert len(set(shown)) <= len(named) + 2, shown  # never every tick of the range


def test_the_lines_and_the_colour_scale_are_named_under_the_map(heat_map: LatencyMap) -> None:
    """p50 white, p99 amber, p99.9 red and the colours' share of I/Os, said in a legend under
    the plot (over it, it would hide data), each swatch on the map's black in either theme."""
    for sample in recorded(20):
        heat_map.add_sample(sample)
    heat_map.refresh()
    legend = heat_map.legend
    assert legend.isVisible()
    plot_bottom = heat_map.plot.mapTo(heat_map, heat_map.plot.rect().bottomLeft()).y()
    assert legend.mapTo(heat_map, legend.rect().topLeft()).y() > plot_bottom
    text = legend.text()
    for key, name in (("p50", "p50"), ("p99", "p99"), ("p999", "p99.9")):
        colour = heat_map.lines[key].opts["pen"].color().name()
        assert re.search(rf"color:{colour}\">[^<]*</span> {re.escape(name)}\b", text), name
    assert "share of the interval's I/Os" in text
    table = heat_map.image.lut
    for index, share in ((1, "0.01"), (255, "100")):  # the faintest and the fullest shade
        colour = "#{:02x}{:02x}{:02x}".format(*table[index][:3])
        assert re.search(rf"color:{colour}\">[^<]*</span> {share}&nbsp;%", text), share
    assert text.count("background-color:#000000") == 3 + 5
    heat_map.expect("Latency comes at each phase's end.")
    assert not legend.isVisible()

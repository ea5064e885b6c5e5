"""Latency over time (issue 33): what a 2-hour run at 2 Hz with interval histograms costs in
the history, and how long its heat map takes to draw.

Storage: 14,400 samples, as the built-in engine sends them (engine rates, CPU, two disks, and
each interval's `latency_us` and `histogram` from a few thousand I/Os drawn around 200 us with
a slow tail), stored through `HistoryStore.add_samples` one sample a batch (the recorder's live
writes at 2 Hz) and `finish_run`; the SQLite file with its log, over the samples. The same run
without latency is measured too, the figure before.

The heat map: one phase lasting the whole 2 hours (14,400 intervals) drawn offscreen, from
handing it to the map to its pixels (`LatencyMap.show_map` and a grab of the plot).
Run by `python -m bench --only latency`.
"""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, datetime

import numpy as np

RATE_HZ = 2
SAMPLES = 2 * 3600 * RATE_HZ
PHASES = ("seq_write", "seq_read", "random_read", "random_write")


def run_samples(
    with_latency: bool, count: int = SAMPLES, seed: int = 33, phases: tuple[str, ...] = PHASES
) -> list[object]:
    """The run's first `count` samples as the helper emits them (`Sample` events), its time
    shared by `phases` in turn."""
    from stripewise.helper.engines.latency_histogram import (
        LatencyHistogram,
        percentile_of,
        wire_buckets,
    )
    from stripewise.model.bench import Phase
    from stripewise.model.latency import IntervalLatency, LatencyBuckets
    from stripewise.protocol.events import DiskRates, Sample

    random = np.random.default_rng(seed)
    samples: list[object] = []
    for i in range(count):
        phase = Phase(phases[i * len(phases) // SAMPLES])
        rate = round(300.0 * (1 + 0.1 * np.sin(i / 7)), 3)
        latency = histogram = None
        if with_latency:
            count = int(random.integers(1500, 2500))
            values = random.lognormal(np.log(200_000), 0.3, count)
            if i % 97 == 0:  # now and then a stall's tail
                values[:20] = random.lognormal(np.log(20_000_000), 0.5, 20)
            counted = LatencyHistogram()
            counted.values.extend(values.astype(np.int64).tolist())
            counted.fold()
            p50, p99, p999 = (percentile_of(counted.counts, s) for s in (0.5, 0.99, 0.999))
            assert p50 is not None and p99 is not None and p999 is not None
            latency = IntervalLatency(round(p50, 3), round(p99, 3), round(p999, 3))
            histogram = LatencyBuckets(*wire_buckets(counted.counts))
        disks = {
            name: DiskRates(round(rate / 2, 3), 0.0, round(rate * 2, 1), 0.0, 97.5)
            for name in ("sdb", "sdc")
        }
        cpu = {"user": 3.1, "system": 12.4, "iowait": 40.2, "idle": 44.3, "steal": 0.0}
        samples.append(
            Sample(
                "r",
                phase,
                1,
                round(i / RATE_HZ, 3),
                rate,
                0.0,
                round(rate * 4, 1),
                0.0,
                round(i / SAMPLES, 4),
                10.0,
                disks,
                cpu,
                0.5,
                latency_us=latency,
                histogram=histogram,
            )
        )
    return samples


def bytes_per_sample(with_latency: bool) -> float:
    """The history's bytes per sample for the 2-hour run stored as the recorder stores it."""
    from stripewise.history.database import open_database
    from stripewise.history.store import HistoryStore, SampleRow
    from stripewise.model.run import RunStatus
    from stripewise.protocol.events import Sample
    from stripewise.system.hostinfo import HostInfo

    samples = run_samples(with_latency)
    with tempfile.TemporaryDirectory(prefix="stripewise-bench-latency-") as scratch:
        path = os.path.join(scratch, "history.db")
        db = open_database(f"sqlite:///{path}")
        try:
            store = HistoryStore(db)
            host = store.ensure_host(HostInfo("h", "f" * 32, "6.18.0", "Xeon", 16, 2**36))
            run_id = store.create_run(
                host,
                name="2 hours at 2 Hz",
                target="/srv",
                engine="builtin",
                engine_version="1",
                options={"size": 2**34, "phases": list(PHASES)},
                started_at=datetime(2026, 1, 1, tzinfo=UTC),
            )
            for seq, sample in enumerate(samples):
                assert isinstance(sample, Sample)
                store.add_samples(run_id, [SampleRow.of(seq, sample)])
            store.finish_run(run_id, RunStatus.COMPLETE, datetime(2026, 1, 1, 2, tzinfo=UTC))
        finally:
            db.close()
        size = sum(
            os.path.getsize(os.path.join(scratch, name))
            for name in os.listdir(scratch)
            if name.startswith("history.db")
        )
        empty = _empty_size(scratch)
    return (size - empty) / SAMPLES


def _empty_size(scratch: str) -> int:
    """An empty history's file: what every database has before any run."""
    from stripewise.history.database import open_database

    path = os.path.join(scratch, "empty.db")
    open_database(f"sqlite:///{path}").close()
    return sum(
        os.path.getsize(os.path.join(scratch, name))
        for name in os.listdir(scratch)
        if name.startswith("empty.db")
    )


def map_draw_ms(runs: int) -> list[float]:
    """Drawing the heat map of a 2-hour phase at 2 Hz, offscreen at 1280 x 600, each try."""
    import time

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from stripewise.gui.latency_map import LatencyMap
    from stripewise.protocol.events import Sample

    app = QApplication.instance() or QApplication([])
    view = LatencyMap()
    view.resize(1280, 600)
    view.show()
    for sample in run_samples(True, phases=("seq_write",)):
        assert isinstance(sample, Sample)
        view.add_sample(sample)
    [key] = view.keys
    drawn = []
    for _ in range(runs + 1):  # the first warms pyqtgraph's caches and is dropped
        started = time.perf_counter()
        view.show_map(key)
        view.plot.grab()
        app.processEvents()
        drawn.append((time.perf_counter() - started) * 1000)
    view.close()
    return drawn[1:]


def latency_figures(runs: int) -> list[tuple[str, list[float], float | None, str]]:
    """(name, samples, target, unit) of each figure `python -m bench` prints; a size is
    measured once (it does not vary from one try to the next)."""
    return [
        ("latency: heat map of a 2 h phase at 2 Hz drawn", map_draw_ms(runs), 50, "ms"),
        ("latency: history bytes/sample, 2 h at 2 Hz", [bytes_per_sample(True)], 300, "B"),
        ("  the same run without latency", [bytes_per_sample(False)], None, "B"),
    ]

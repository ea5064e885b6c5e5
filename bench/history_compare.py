"""History at scale: 1,000 runs of 3,600 samples each (an hour at 1 Hz, or six minutes at 10 Hz).

Samples carry what the helper records (engine and kernel rates, CPU, two disks); contexts what
`bench_context` records, so listing lines and context diffs are computed from realistic data.
Every run is stored through `HistoryStore.add_samples` and `finish_run`, as the recorder stores
it (packed blocks, merged when the run finishes); every tenth run arrives in live batches of
`LIVE_BATCH` samples with the small blocks merged as they pile up, the others in one batch (all
of them live would take ~8 minutes to seed). Prints JSON: the GUI list opening, a 4-run
comparison loading, and the database's bytes per sample: the whole file, with its write-ahead
log and free pages, divided by the samples stored. Run by `python -m bench --only compare`.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

PHASES = ("seq_write", "rewrite", "seq_read", "random_read", "random_write", "mixed")
RUNS = 1000
SAMPLES = 3600
LIVE_BATCH = 10  # one second at 10 Hz: the recorder writes at least once a second
LIVE_EVERY = 10  # every tenth run is written in live batches


def _context(number: int) -> dict[str, object]:
    read_ahead = (128, 1024, 4096, 8192)[number % 4]
    return {
        "kernel": "6.18.0",
        "ram_bytes": 64 * 2**30,
        "filesystem": "xfs",
        "mount_options": "rw,noatime",
        "disks": [
            {
                "name": name,
                "model": "ST4000NM0035",
                "controller": f"0000:0{n + 1}:00.0",
                "tuning": {"read_ahead_kb": read_ahead, "scheduler": "mq-deadline"},
            }
            for n, name in enumerate(("sdb", "sdc", "sdd", "sde"))
        ],
        "array": {
            "device": "md0",
            "level": "raid5",
            "chunk_kib": (64, 128, 256, 512)[number % 4],
            "members": ["sdb", "sdc", "sdd", "sde"],
        },
        "dirty": {"dirty_ratio_pct": 20, "dirty_background_ratio_pct": 10},
        "engine": "builtin",
        "engine_version": "1",
    }


def _sample(i: int, number: int) -> dict[str, float]:
    wave = 1 + 0.1 * math.sin(i / 7 + number)
    writing = PHASES[i * len(PHASES) // SAMPLES] in ("seq_write", "rewrite", "random_write")
    rate = round(300.0 * wave, 3)
    return {
        "engine_read_mb_s": 0.0 if writing else rate,
        "engine_write_mb_s": rate if writing else 0.0,
        "engine_read_iops": 0.0 if writing else round(rate * 4, 1),
        "engine_write_iops": round(rate * 4, 1) if writing else 0.0,
        "cpu.user": 3.1,
        "cpu.system": 12.4,
        "cpu.iowait": 40.2,
        "cpu.idle": 44.3,
        "cpu.steal": 0.0,
        "disks.sdb.read_mb_s": rate / 4,
        "disks.sdb.write_mb_s": 0.0,
        "disks.sdb.busy_pct": 97.5,
        "disks.sdc.read_mb_s": rate / 4,
        "disks.sdc.write_mb_s": 0.0,
        "disks.sdc.busy_pct": 96.1,
    }


def seed(url: str) -> None:
    from stripewise.history.database import open_database
    from stripewise.history.store import HistoryStore, SampleRow
    from stripewise.model.run import ResultValue, RunStatus
    from stripewise.model.run_context import RunContext
    from stripewise.system.hostinfo import HostInfo

    db = open_database(url)
    try:
        store = HistoryStore(db)
        host = store.ensure_host(HostInfo("thumper", "f" * 32, "6.18.0", "Xeon", 16, 64 * 2**30))
        start = datetime(2026, 1, 1, tzinfo=UTC)
        for number in range(RUNS):
            run_id = store.create_run(
                host,
                name=f"run {number}",
                target="/srv/raid",
                engine="builtin",
                engine_version="1",
                options={"size": 2**34, "phases": list(PHASES), "block_size": 2**20},
                context=RunContext.from_json(_context(number)),
                started_at=start + timedelta(hours=number),
            )
            rows = [
                SampleRow(i, i / 10, PHASES[i * len(PHASES) // SAMPLES], 0, _sample(i, number))
                for i in range(SAMPLES)
            ]
            batch = LIVE_BATCH if number % LIVE_EVERY == 0 else SAMPLES
            for first in range(0, SAMPLES, batch):
                store.add_samples(run_id, rows[first : first + batch])
            store.add_results(
                run_id,
                [
                    ResultValue(phase, metric, unit, 300.0 + number % 40, None, None, 1)
                    for phase in PHASES
                    for metric, unit in (("throughput", "MB/s"), ("iops", "IOPS"), ("cpu", "%"))
                ],
            )
            store.finish_run(run_id, RunStatus.COMPLETE, start + timedelta(hours=number, minutes=6))
        store.list_runs()  # each run's listing line is made once, as the first listing does
    finally:
        db.close()


def _median_ms(work: object, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        work()  # type: ignore[operator]
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def measure(url: str, runs: int) -> dict[str, object]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QApplication

    from stripewise.gui.compare_view import CompareWindow
    from stripewise.gui.history_page import HistoryPage
    from stripewise.history.comparison import load_comparison
    from stripewise.history.store import HistoryStore
    from stripewise.services.history import HistoryService

    app = QApplication.instance() or QApplication(sys.argv[:1])
    history = HistoryService.open(url)
    page = HistoryPage(history)
    page.resize(1000, 700)
    page.show()

    def wait_for(signal: Any) -> None:
        """Block in an event loop, as the GUI waits: a busy processEvents() loop would hold
        the interpreter lock against the worker thread doing the reading."""
        loop = QEventLoop()
        signal.connect(loop.quit)
        loop.exec()
        signal.disconnect(loop.quit)

    listing = opening_ms(history, page, runs)
    ids = [10, 20, 30, 40]
    store = HistoryStore(history.database)
    loading = _median_ms(lambda: load_comparison(store, ids, None), runs)

    def open_window() -> float:
        """Milliseconds from creating the window to its first paint with the comparison;
        closing it afterwards is not counted."""
        started = time.perf_counter()
        window = CompareWindow(history, ids)
        window.show()
        if window.comparison is None:
            wait_for(window.loaded)
        window.repaint()
        elapsed = (time.perf_counter() - started) * 1000
        window.close()
        app.processEvents()
        return elapsed

    open_window()  # warm: pyqtgraph's first import
    window_ms = [open_window() for _ in range(runs)]
    stored = sum(store.get_run(run.id).sample_count for run in store.list_runs())
    history.close()
    size = _file_bytes(url)
    return {
        "list_ms": listing,
        "compare_load_ms": loading,
        "compare_window_ms": window_ms,
        "bytes_per_sample": size / stored,
        "db_bytes": size,
        "samples": stored,
    }


def _file_bytes(url: str) -> int:
    """The database file and its write-ahead log, if one is left (free pages included)."""
    path = Path(url.removeprefix("sqlite:///"))
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def list_opens(url: str, runs: int) -> list[float]:
    """The History list opening alone, on a history built fast (bench.history_big)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from stripewise.gui.history_page import HistoryPage
    from stripewise.services.history import HistoryService

    _app = QApplication.instance() or QApplication(sys.argv[:1])
    history = HistoryService.open(url)
    page = HistoryPage(history)
    page.resize(1000, 700)
    page.show()
    found = opening_ms(history, page, runs)
    history.close()
    return found


def opening_ms(history: Any, page: Any, runs: int) -> list[float]:
    """From asking for the list to the page's table filled (runsLoaded, connected after the
    page's), blocking in an event loop as the GUI waits. A long history's count, read after
    its newest page is shown (runsCounted), is waited for untimed: else it would run into the
    next round's time."""
    from PySide6.QtCore import QEventLoop

    counted = getattr(history, "runsCounted", None)  # a version that shows before counting

    def wait(signal: Any, ask: Any = None) -> None:
        loop = QEventLoop()
        signal.connect(loop.quit)
        if ask is not None:
            ask()
        loop.exec()
        signal.disconnect(loop.quit)

    samples = []
    for _ in range(runs + 1):  # the first round warms
        arrived: list[int] = []
        if counted is not None:
            counted.connect(arrived.append)
        started = time.perf_counter()
        wait(history.runsLoaded, history.load_runs)
        samples.append((time.perf_counter() - started) * 1000)
        assert page.model.rowCount() > 0  # the newest page, or every run before paging
        if counted is not None:
            if history.run_count != page.model.rowCount() and not arrived:
                wait(counted)
            counted.disconnect(arrived.append)
        page.model.set_runs([])  # the next round fills it again
    return samples[1:]


if __name__ == "__main__":
    if sys.argv[1] == "--list-only":  # URL RUNS REPEATS
        print(json.dumps({"list_ms": list_opens(sys.argv[2], int(sys.argv[3]))}))
        sys.exit(0)
    database, repetitions = sys.argv[1], int(sys.argv[2])
    if not Path(database.removeprefix("sqlite:///")).exists():
        started = time.monotonic()
        seed(database)
        print(f"seeded in {time.monotonic() - started:.0f} s", file=sys.stderr)
    result = measure(database, repetitions)
    print(json.dumps(result | {"median_list_ms": statistics.median(result["list_ms"])}))  # type: ignore[arg-type]

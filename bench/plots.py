"""The Benchmark view's live plots: how long one refresh takes with a 2-hour run on screen,
and with a 2-minute one (the same, when drawing costs what the pixels need, not the samples).

`python -m bench --only plots` runs `plot_refresh()` in-process on an offscreen QApplication:
the wall time of each refresh and repaint, and the GUI thread's CPU time in it (on a shared
machine the wall time waits for a CPU too; the CPU time does not).
"""

from __future__ import annotations

import json
import os
import time

import numpy as np

from stripewise.protocol.events import Sample

# (phase, label, engine MB/s, read share, block size in bytes) of a bonnie-like run
_PHASES = (
    ("seq_write", "Sequential Output, Block", 820.0, 0.0, 2**20),
    ("rewrite", "Sequential Output, Rewrite", 410.0, 0.5, 2**20),
    ("seq_read", "Sequential Input, Block", 960.0, 1.0, 2**20),
    ("random_read", "Random Seeks (reads)", 3.2, 1.0, 4096),
    ("random_write", "Random writes", 2.1, 0.0, 4096),
    ("mixed", "Mixed 70/30 read/write", 5.5, 0.7, 4096),
)
DISKS = ("sda", "sdb")


def synthetic_run(
    samples: int, phases: int = 6, rate_hz: float = 10.0, seed: int = 1
) -> list[tuple[str, float, list[Sample]]]:
    """A run of `samples` helper samples over `phases` phases: (label, start t_s, samples) each.

    Engine rates are noisy around a per-phase level; the disks see the same traffic split over
    two members plus writeback bursts, so the dashed disk lines differ from the engine's."""
    rng = np.random.default_rng(seed)
    per_phase = np.array_split(np.arange(samples), phases)
    run: list[tuple[str, float, list[Sample]]] = []
    for index, numbers in enumerate(per_phase):
        name, label, level, read_share, block = _PHASES[index % len(_PHASES)]
        start = float(numbers[0]) / rate_hz if len(numbers) else 0.0
        rows = [_sample(name, n / rate_hz, level, read_share, block, rng) for n in numbers]
        run.append((f"{label} #{index // len(_PHASES) + 1}", start, rows))
    return run


def _sample(
    phase: str,
    t_s: float,
    level: float,
    read_share: float,
    block: int,
    rng: np.random.Generator,
) -> Sample:
    """One sample as the client core delivers it: the wire's object, parsed."""
    rate = max(0.0, level * (1.0 + 0.08 * rng.standard_normal()))
    read, write = rate * read_share, rate * (1.0 - read_share)
    burst = 1.0 + (0.6 if rng.random() < 0.05 else 0.0) * (write > 0)
    disks = {
        disk: {
            "read_mb_s": round(read / len(DISKS) * (1 + 0.05 * rng.standard_normal()), 3),
            "write_mb_s": round(write * burst / len(DISKS) * (1 + 0.1 * rng.standard_normal()), 3),
            "read_iops": round(read * 1e6 / block / len(DISKS), 1),
            "write_iops": round(write * 1e6 / block / len(DISKS), 1),
            "busy_pct": round(min(100.0, 80 + 20 * rng.random()), 1),
        }
        for disk in DISKS
    }
    user = 2.0 + rng.random() * 2.0
    system = 8.0 + rng.random() * 6.0
    iowait = 30.0 + rng.random() * 25.0
    # through JSON, as the wire carries it: numpy's numbers are no JSON types
    return Sample.from_json(
        json.loads(
            json.dumps(
                {
                    "event": "sample",
                    "run": "bench",
                    "phase": phase,
                    "repetition": 0,
                    "t_s": round(t_s, 3),
                    "engine_read_mb_s": round(read, 3),
                    "engine_write_mb_s": round(write, 3),
                    "engine_read_iops": round(read * 1e6 / block, 1),
                    "engine_write_iops": round(write * 1e6 / block, 1),
                    "disks": disks,
                    "cpu": {
                        "user": round(user, 2),
                        "system": round(system, 2),
                        "iowait": round(iowait, 2),
                        "idle": round(100.0 - user - system - iowait, 2),
                    },
                    "progress": None,
                    "eta_s": None,
                }
            )
        )
    )


def plot_refresh_ms(samples: int = 72_000, rounds: int = 20) -> list[float]:
    """Milliseconds of refresh() plus the repaint it causes, after 10 new samples each round,
    with `samples` samples per series already on screen (1024x700)."""
    return plot_refresh(samples, rounds)["wall_ms"]


def plot_refresh(samples: int = 72_000, rounds: int = 20) -> dict[str, list[float]]:
    """As `plot_refresh_ms`: each round's wall time ("wall_ms") and the GUI thread's CPU time
    ("cpu_ms")."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from stripewise.gui.bench_plots import LivePlots

    app = QApplication.instance() or QApplication([])
    plots = LivePlots()
    run = synthetic_run(samples + 10 * rounds)  # the extra samples land in the last phase
    flat = [sample for _label, _start, rows in run for sample in rows]
    plots.resize(1024, 700)
    plots.show()
    fed = 0
    for label, start, rows in run:  # as the page does: a phase starts, its samples follow
        if fed < samples:
            plots.begin_phase(label, start)
            plots.add_samples(rows[: samples - fed])
            fed += min(len(rows), samples - fed)
    plots.refresh()
    app.processEvents()
    timings: dict[str, list[float]] = {"wall_ms": [], "cpu_ms": []}
    for _ in range(rounds):
        plots.add_samples(flat[fed : fed + 10])
        fed += 10
        started, cpu = time.perf_counter(), time.thread_time()
        plots.refresh()
        app.processEvents()  # the repaint is part of the cost
        timings["wall_ms"].append((time.perf_counter() - started) * 1000)
        timings["cpu_ms"].append((time.thread_time() - cpu) * 1000)
    plots.close()
    plots.deleteLater()
    app.processEvents()
    return timings


if __name__ == "__main__":
    values = plot_refresh_ms()
    print(f"median {sorted(values)[len(values) // 2]:.2f} ms, max {max(values):.2f} ms")

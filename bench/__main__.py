"""Performance harness: `python -m bench` prints a table of figures (medians), never pass/fail.

Figures:
  startup   process start -> first frame of the main window, real X11 window under Xvfb, and
            of a minimal PySide6 window (the floor) in the same run; then the real window on
            to everything it loads at start (pages, history listed, inventory drawn): when, and
            the GUI thread's longest stall from its first frame until then
  history   `stripewise history list` on a database of 1,000 runs: the store query in-process
            and the whole command as a user runs it; `--limit 50` at 1,000 and 100,000 runs
  hardware  inventory of the 48-disk Sun X4500 umockdev testbed plus drawing its map, and the
            same for ten of them as one host (480 disks)
  health    what disk health adds to opening that map: 48 real smartctl outputs parsed, judged
            and badged on its cards (the GUI thread), and the helper's 48 children, 8 at a
            time, each a stand-in printing a recorded output (a disk's own latency not counted)
  planner   recomputing every figure and spread score of a 48-disk plan after a drop
  bays      the Hardware page's bay view: the X4500's 48 bays with their disks placed and
            drawn, and 480 disks in 10 such chassis (offscreen)
  imports   `stripewise import` of bonnie++ CSVs of 1,000, 5,000, 20,000 and 100,000 runs and of
            60 MiB: parsing alone and the whole import (time, CPU and peak memory of its process
            and its parsing process added up), and how each grows from 5,000 to 20,000 runs (4
            when linear); takes a while
  engines   built-in engine against fio on one RAM-backed loop device (1 MiB sequential at
            QD1 and QD8, 4 KiB random reads at QD1 and QD32, idle CPUs held polling; QD1 again
            without the hold), each engine's bytes against the kernel's counters, and the
            sampler's cost
  plots     the Benchmark view's live plots: one refresh and repaint with a 2-hour run at 10 Hz
            and with a 2-minute one, and the GUI thread's CPU time in each
  experiment-chart  the Experiment page's chart: one pass drawn (and repainted) with 50 points
            of 9 passes on screen, a line and a 10 x 5 grid's heat maps
  experiment-overhead  `stripewise experiment run` of a read-ahead sweep on a RAM-backed loop
            device: its wall time over the sum of its runs' own times (root, losetup)
  scaling   `stripewise bench scaling` of four RAM-backed loop devices: its passes' windows
            added up against the test's own time, and the command's wall time (root, losetup)
  gui       how long the GUI thread is blocked while a real benchmark streams at 10 Hz (Xvfb)
  group-gui the same while a group run streams from 8 fio servers on loopback at 2 Hz each
  group-drive  driving that group run: the driver's CPU (fio's apart) and its total against
            the sum of its hosts' results
  history-pg  `stripewise history list` of 10,000 runs on a throw-away PostgreSQL server: the
            store query in-process and the whole command; `--limit 50` at 1,000 and 100,000 runs
  compare   1,000 runs of 3,600 samples: the History list opening (and at 100,000 runs), a
            4-run comparison loading and its window filled (offscreen), and the database's
            bytes per sample
  udev-dump `udevadm info --export-db` dumps of 1 to 64 MiB, text and --json: reading, parsing
            and building the map, peak memory, and how each grows from 16 to 64 MiB
  remote    `stripewise --remote` from its start to the first frame a VNC client (vncdotool,
            logged in with the printed password) sees with the window on it
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.fixtures import seed_history, start_xvfb


@dataclass(frozen=True)
class Figure:
    name: str
    samples_ms: list[float]  # in `unit`; milliseconds unless said otherwise
    target_ms: float | None = None
    unit: str = "ms"
    higher_is_better: bool = False
    band: tuple[float, float] | None = None  # every sample must lie in it, not only the median

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples_ms)

    def row(self) -> str:
        low, high = min(self.samples_ms), max(self.samples_ms)
        digits = 3 if self.unit in ("ratio", "% core") else 1
        verdict, target = "", ""
        if self.target_ms is not None:
            sign = ">=" if self.higher_is_better else "<"
            target = f"{sign} {self.target_ms:,g} {self.unit}"
            met = (
                self.median_ms >= self.target_ms
                if self.higher_is_better
                else self.median_ms < self.target_ms
            )
            verdict = "met" if met else "MISSED"
        if self.band is not None:
            target = f"{self.band[0]:g} - {self.band[1]:g}"
            inside = all(self.band[0] <= sample <= self.band[1] for sample in self.samples_ms)
            verdict = "met" if inside else "MISSED"
        return (
            f"{self.name:<50} {self.median_ms:>9.{digits}f} {low:>9.{digits}f} "
            f"{high:>9.{digits}f} {len(self.samples_ms):>4}  {self.unit:<6} {target:<14} "
            f"{verdict}"
        )


def _stripewise() -> list[str]:
    script = Path(sys.executable).parent / "stripewise"
    return [str(script)] if script.exists() else [sys.executable, "-m", "stripewise"]


def measure_startup(runs: int, db_url: str) -> list[Figure]:
    """The window's first frame against the toolkit's floor, in turns on one Xvfb
    (bench/startup.py); their ratio is the issue's target (<= 2)."""
    from bench.startup import startup_samples

    display = start_xvfb()
    try:
        command = [*_stripewise(), "--db", db_url, "--bench-startup"]
        window, floor, loading = startup_samples(runs, command, display.name, db_url)
    finally:
        display.stop()
    return [
        Figure("start to first window frame (Xvfb)", window, 1500),
        Figure("  minimal PySide6 window, same run (floor)", floor),
        Figure(
            "  first window frame / floor",
            [mine / least for mine, least in zip(window, floor, strict=True)],
            2,
            unit="ratio",
        ),
        Figure("start to all loaded: pages, history, inventory", _of(loading, "loaded_ms")),
        Figure("  GUI longest stall, first frame to loaded", _of(loading, "max_ms"), 100),
        Figure("  its GUI thread CPU, longest between two ticks", _of(loading, "max_cpu_ms")),
    ]


def _of(samples: list[dict[str, float]], key: str) -> list[float]:
    return [sample[key] for sample in samples]


def _time_ms(work: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def measure_history(runs: int, db_url: str) -> list[Figure]:
    from bench.history_big import listing_figures
    from stripewise.history.database import open_database
    from stripewise.history.store import HistoryStore

    db = open_database(db_url)
    try:
        store = HistoryStore(db)
        store.list_runs()  # warm
        in_process = _time_ms(store.list_runs, runs * 4)
    finally:
        db.close()

    def command(*extra: str) -> Callable[[], object]:
        argv = [*_stripewise(), "--db", db_url, "history", "list", *extra]
        return lambda: subprocess.run(argv, capture_output=True, check=True, timeout=60)

    command()()  # warm
    return [
        Figure("history list, 1,000 runs: store query", in_process, 100),
        Figure("history list, 1,000 runs: whole command", _time_ms(command(), runs), 100),
        Figure("history list --json, 1,000 runs: whole cmd", _time_ms(command("--json"), runs)),
        Figure(
            "python -c pass (interpreter floor)",
            _time_ms(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), runs),
        ),
        *(Figure(*row) for row in listing_figures(str(Path(db_url[10:]).parent), runs)),
    ]


def measure_imports(scratch: str) -> list[Figure]:
    """One process per file and stage (bench/imports.py); single measurements, the largest
    taking many minutes."""
    from bench.imports import measure

    return [Figure(name, [value], unit=unit) for name, value, unit in measure(scratch)]


def measure_hardware_map(runs: int) -> list[Figure]:
    """The X4500 testbed and ten of them (480 disks) through the real libudev (umockdev), each
    read and drawn `runs` times (bench/hardware_map.py)."""
    from bench.hardware_map import measure

    return [Figure(name, samples, target) for name, samples, target in measure(runs)]


def measure_engines(runs: int) -> list[Figure]:
    from bench.engines import CASES, builtin_vs_fio, sampler_cost

    figures = []
    measured = builtin_vs_fio(max(7, 2 * runs))  # this VM varies by ±20 % run to run
    # sequential: 0.9; without the PM QoS hold the figure shows this machine's idle states
    targets = {"random 4K QD1": 0.8, "random 4K QD32": 0.6, "random 4K QD1, no PM QoS": None}
    for case in CASES:
        unit = "IOPS" if case.label.startswith("random") else "MB/s"
        for phase in case.phases:
            key = f"{case.label} {phase}"
            if f"{key} ratio" not in measured:
                continue
            target = targets.get(case.label, 0.9)
            name = f"builtin/fio {phase}, {case.label}"
            figures.append(Figure(name, measured[f"{key} ratio"], target, "ratio", True))
            figures.append(Figure(f"fio {key}", measured[f"{key} fio"], unit=unit))
            figures.append(Figure(f"builtin {key}", measured[f"{key} builtin"], unit=unit))
        for engine in ("builtin", "fio"):
            counted = measured.get(f"{case.label} {engine} kernel/engine")
            if counted:  # direct I/O: the kernel's bytes and the engine's must agree
                name = f"kernel/{engine} bytes, {case.label}"
                figures.append(Figure(name, counted, unit="ratio", band=(0.95, 1.05)))
    cost = [sampler_cost(10.0, 3.0) for _ in range(3)]
    figures.append(Figure("helper sampling at 10 Hz", cost, 2.0, "% core"))
    return figures


def measure_gui_lag(runs: int) -> list[Figure]:
    """Per run (about 15 s of a real benchmark each): the longest and the 99th-percentile lag."""
    from bench.gui_lag import measure

    return _gui_lag(measure, runs, "GUI lag during a 10 Hz run")


def measure_group_gui_lag(runs: int) -> list[Figure]:
    """Per run (about 20 s: 8 hosts, two rate-limited null-engine phases)."""
    from bench.group_gui import measure

    return _gui_lag(measure, runs, "GUI lag, 8-host group run")


def _gui_lag(measure: Callable[[str], dict[str, Any]], runs: int, label: str) -> list[Figure]:
    """`runs` measurements on one Xvfb display: the longest lag (target 33 ms: two frames at
    60 Hz) and the p99."""
    display = start_xvfb()
    try:
        figures = [measure(display.name) for _ in range(runs)]
    finally:
        display.stop()
    return [
        Figure(f"{label}: longest", [float(f["max_ms"]) for f in figures], 33),
        Figure(f"{label}: p99", [float(f["p99_ms"]) for f in figures]),
        # what a tick waited on a quiet machine, about: the lag also counts waiting for a CPU
        Figure("  longest GUI-thread CPU between ticks", [float(f["max_cpu_ms"]) for f in figures]),
    ]


def measure_group_drive(runs: int) -> list[Figure]:
    """Per run (about 10 s: 8 hosts, two rate-limited null-engine phases)."""
    from bench.group_drive import measure

    figures = [measure() for _ in range(runs)]
    return [
        Figure("group run, 8 hosts at 2 Hz: driver CPU", [f.driver_core_pct for f in figures],
               10, unit="% core"),
        Figure("group run, 8 hosts: fio clients' CPU", [f.clients_core_pct for f in figures],
               unit="% core"),
        Figure("group run total vs sum of hosts", [f.total_error_pct for f in figures], 0.1,
               unit="%"),
        Figure("group run total vs fio's own job bw", [f.vs_fio_pct for f in figures], 0.1,
               unit="%"),
    ]  # fmt: skip


def measure_compare(runs: int, scratch: str) -> list[Figure]:
    """In a process of its own (offscreen Qt); seeding the 3.6 million samples takes ~1.5 min."""
    import json

    url = f"sqlite:///{scratch}/runs-1000x3600.db"
    done = subprocess.run(
        [sys.executable, "-m", "bench.history_compare", url, str(runs)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=True,
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    from bench.history_big import sqlite_history

    big = sqlite_history(100_000, scratch)  # built fast, no samples: the list reads none
    done = subprocess.run(
        [sys.executable, "-m", "bench.history_compare", "--list-only", big, str(runs)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=True,
        env=os.environ | {"QT_QPA_PLATFORM": "offscreen"},
    )
    opens = json.loads(done.stdout.strip().splitlines()[-1])["list_ms"]
    return [
        Figure("History list opens, 1,000 runs (offscreen)", result["list_ms"], 200),
        Figure("History list opens, 100,000 runs (offscreen)", opens, 200),
        Figure("comparison of 4 runs x 3,600 samples: load", result["compare_load_ms"], 300),
        Figure("comparison window of 4 runs: open to filled", result["compare_window_ms"], 300),
        Figure("database bytes per sample", [result["bytes_per_sample"]], unit="bytes"),
    ]


def measure_history_pg(runs: int) -> list[Figure]:
    """In a process of its own, with a throw-away PostgreSQL server (bench/history_pg.py)."""
    import json

    done = subprocess.run(
        [sys.executable, "-m", "bench.history_pg", str(runs)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=True,
    )
    if not done.stdout.strip():  # no PostgreSQL server here: said on stderr
        print(done.stderr.strip(), file=sys.stderr)
        return []
    result = json.loads(done.stdout.strip().splitlines()[-1])
    paged = [result[f"limit50_{runs}"] for runs in (1_000, 100_000)]
    return [
        Figure("  store query, 10,000 runs on PostgreSQL", result["store_ms"], 300),
        Figure("History list, 10,000 runs on PostgreSQL", result["command_ms"], 300),
        Figure("history list --limit 50, 1,000 runs on PostgreSQL", paged[0]["command_ms"], 300),
        Figure("history list --limit 50, 100,000 runs on PostgreSQL", paged[1]["command_ms"], 300),
        Figure("  its first 50, 1,000 runs on PostgreSQL", paged[0]["store_ms"], 100),
        Figure("  its first 50, 100,000 runs on PostgreSQL", paged[1]["store_ms"], 100),
    ]


def measure_udev_dump(runs: int, scratch: str) -> list[Figure]:
    """One process per dump (its peak memory is its own); a linear reader takes 4x as long on
    4x the dump, a quadratic one 16x: the 16 -> 64 MiB ratios (of CPU time, which a loaded
    machine does not stretch) must stay under 6: 4 to 5 from a linear reader here (the garbage
    collector passes over a heap 4 times as big, missing the caches more), 16 from a square."""
    from bench.udev_dump import DISKS, measure

    figures: list[Figure] = []
    for form in ("text", "json"):
        results = measure(form, scratch, max(1, runs // 3))
        for disks, result in results.items():
            label = f"udev {form} dump, {result['mib']:.0f} MiB ({disks:,} disks)"
            figures.append(Figure(f"{label}: parse", result["parse_ms"]))
            figures.append(Figure(f"{label}: whole load", result["total_ms"]))
            figures.append(Figure(f"{label}: peak memory", [result["peak_mib"]], unit="MiB"))
        small, large = (results.get(d) for d in DISKS[-2:])
        if small and large:
            for key, what in (("parse_cpu_ms", "parse"), ("total_cpu_ms", "whole load")):
                ratio = min(large[key]) / min(small[key])
                name = f"udev {form} dump, {what}: CPU time 64 / 16 MiB"
                figures.append(Figure(name, [ratio], unit="ratio", band=(0, 6)))
            ratio = large["peak_mib"] / small["peak_mib"]
            name = f"udev {form} dump: peak memory 64 / 16 MiB"
            figures.append(Figure(name, [ratio], unit="ratio", band=(0, 6)))
    return figures


def measure_experiment_overhead(runs: int) -> list[Figure]:
    """The orchestration's share of an experiment: wall time over the sum of its runs' own
    times, minus one (target < 5 %)."""
    if os.geteuid() != 0 or shutil.which("losetup") is None:
        print("not root or no losetup: skipping the experiment overhead", file=sys.stderr)
        return []
    from bench.experiment_overhead import measure

    measured = measure(runs)
    overhead = [100.0 * (wall / ran - 1.0) for wall, ran in measured]
    return [
        Figure("experiment: wall time over its runs' time", overhead, 5, unit="%"),
        Figure("  its runs' time (9 or more passes)", [ran for _w, ran in measured], unit="s"),
        Figure("  its wall time", [wall for wall, _r in measured], unit="s"),
    ]


def measure_scaling_overhead(runs: int) -> list[Figure]:
    """The scaling test's phases (its passes' windows) against its time (target > 95 %)."""
    if os.geteuid() != 0 or shutil.which("losetup") is None:
        print("not root or no losetup: skipping the scaling test's overhead", file=sys.stderr)
        return []
    from bench.scaling import measure

    measured = measure(runs)
    return [
        Figure(
            "scaling test: its passes over its time",
            [100.0 * phases / test for phases, test, _wall in measured],
            95,
            unit="%",
            higher_is_better=True,
        ),
        Figure("  its 18 passes' windows added up (RAM)", [p for p, _t, _w in measured], unit="s"),
        Figure("  the command's wall time", [wall for _p, _t, wall in measured], unit="s"),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--runs", type=int, default=7, help="repetitions per figure (default 7)")
    parser.add_argument(
        "--only",
        choices=(
            "startup",
            "history",
            "hardware",
            "health",
            "planner",
            "bays",
            "imports",
            "engines",
            "plots",
            "experiment-chart",
            "experiment-overhead",
            "scaling",
            "gui",
            "group-gui",
            "group-drive",
            "compare",
            "history-pg",
            "udev-dump",
            "remote",
            "latency",
        ),
        default=None,
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="stripewise-bench-") as scratch:
        empty_db = f"sqlite:///{scratch}/empty.db"
        big_db = f"sqlite:///{scratch}/runs-1000.db"
        figures: list[Figure] = []
        if args.only in (None, "startup"):
            if shutil.which("Xvfb") is None:
                print("Xvfb is not installed: skipping the start-up figure", file=sys.stderr)
            else:
                figures.extend(measure_startup(args.runs, empty_db))
        if args.only in (None, "history"):
            seed_history(big_db, runs=1000)
            figures.extend(measure_history(args.runs, big_db))
        if args.only in (None, "hardware"):
            if shutil.which("umockdev-run") is None:
                print("umockdev is not installed: skipping the hardware map", file=sys.stderr)
            else:
                figures.extend(measure_hardware_map(args.runs))
        if args.only in (None, "health"):
            from bench.health import measure as health_ms

            found = health_ms(args.runs)
            name = "disk health, 48 disks: parsed and badged (GUI thread)"
            figures.append(Figure(name, found["gui_ms"], 1000))
            name = "  the helper's smartctl children, 8 at a time"
            figures.append(Figure(name, found["helper_ms"], 1000))
        if args.only in (None, "planner"):
            from bench.planner_recompute import measure

            figures.append(Figure("planner, 48 disks: recompute after a drop", measure(), 16))
        if args.only in (None, "bays"):
            from bench.bays import measure as bays_ms

            drawn = bays_ms(args.runs)
            figures.append(
                Figure("bays: a 48-bay chassis with its disks drawn", drawn["one_ms"], 50)
            )
            figures.append(Figure("bays: 480 disks on 10 chassis drawn", drawn["ten_ms"], 300))
        if args.only in (None, "imports"):
            figures.extend(measure_imports(scratch))
        if args.only in (None, "engines"):
            figures.extend(measure_engines(args.runs))
        if args.only in (None, "plots"):
            from bench.plots import plot_refresh

            for samples, name in ((72_000, ""), (1_200, " (2 minutes)")):
                found = plot_refresh(samples)
                name = f"plot refresh, {samples:,} samples per series{name}"
                figures.append(Figure(name, found["wall_ms"], 10))
                figures.append(Figure("  its GUI thread's CPU time", found["cpu_ms"]))
        if args.only in (None, "experiment-chart"):
            from bench.experiment_chart import redraw_ms

            name = "experiment chart redraw, 50 points of 9 passes"
            figures.append(Figure(name, redraw_ms(), 16))
            figures.append(
                Figure("  the same, heat maps of a 10 x 5 grid", redraw_ms(grid=True), 16)
            )
        if args.only in (None, "experiment-overhead"):
            figures.extend(measure_experiment_overhead(max(3, args.runs // 2)))
        if args.only in (None, "scaling"):
            figures.extend(measure_scaling_overhead(max(3, args.runs // 2)))
        if args.only in (None, "gui"):
            if shutil.which("Xvfb") is None:
                print("Xvfb is not installed: skipping the GUI lag figure", file=sys.stderr)
            else:
                figures.extend(measure_gui_lag(max(3, args.runs // 2)))
        if args.only in (None, "group-gui"):
            if shutil.which("Xvfb") is None or shutil.which("fio") is None:
                print("Xvfb or fio is not installed: skipping the group GUI lag", file=sys.stderr)
            else:
                figures.extend(measure_group_gui_lag(max(3, args.runs // 2)))
        if args.only in (None, "group-drive"):
            if shutil.which("fio") is None:
                print("fio is not installed: skipping the group run's driver", file=sys.stderr)
            else:
                figures.extend(measure_group_drive(max(3, args.runs // 2)))
        if args.only in (None, "compare"):
            figures.extend(measure_compare(args.runs, scratch))
        if args.only in (None, "history-pg"):
            figures.extend(measure_history_pg(args.runs))
        if args.only in (None, "udev-dump"):
            figures.extend(measure_udev_dump(args.runs, scratch))
        if args.only in (None, "remote"):
            from bench.remote_session import remote_figures

            figures += [Figure(*row, unit="s") for row in remote_figures(args.runs)]
        if args.only in (None, "latency"):
            from bench.latency import latency_figures

            figures += [Figure(*row) for row in latency_figures(args.runs)]
    print(
        f"Stripewise bench on {platform.node()}: {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, kernel {platform.release()}"
    )
    print(f"{'figure':<50} {'median':>9} {'min':>9} {'max':>9} {'n':>4}  unit   target")
    for figure in figures:
        print(figure.row())
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The inventory read through the real libudev in a umockdev testbed, and the hardware map drawn.

Two testbeds, side by side: the Sun X4500 (48 disks) and ten of them as one host (480 disks,
`tests.fixtures.machines.x4500_row`). `measure(runs)` runs, for each, this module inside the
testbed (`python -m bench.hardware_map N`: split into small files, on tmpfs, with the
machine's /proc files, as the tests' `run_in_testbed` loads it) and returns its figures. Inside,
each run reads the inventory (`read_live`) and draws the map as the Hardware page holds it: in
a scroll area 1400 x 900, its first frame painted (`grab`); one JSON object of samples in ms
is printed, wall time and the process's CPU time (all its threads: the figure a loaded machine
does not inflate much). The map builds a controller's cards when they come into view, so the
first frame builds those on screen; the rest is paid as the map scrolls: each run then pages
down the whole map, each page painted, and its longest page is a figure of its own.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtWidgets import QApplication, QScrollArea

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

CHASSIS = (1, 10)  # the X4500 alone, and ten of them


def measure(runs: int) -> list[tuple[str, list[float], float | None]]:
    """(figure name, samples in ms, target) for each testbed: inventory + draw, and apart."""
    from tests.fixtures.machines import sun_x4500, x4500_row
    from tests.fixtures.umock import run_in_testbed

    found = []
    for chassis in CHASSIS:
        done = run_in_testbed(
            sun_x4500() if chassis == 1 else x4500_row(chassis),
            [sys.executable, "-m", "bench.hardware_map", str(runs)],
            env={"QT_QPA_PLATFORM": "offscreen"},
            timeout=900,
        )
        if done.returncode != 0:
            raise RuntimeError(f"bench.hardware_map in the testbed failed:\n{done.stderr}")
        found.append(json.loads(done.stdout.strip().splitlines()[-1]))
    figures: list[tuple[str, list[float], float | None]] = []
    for what, key, target in (
        ("inventory + draw", "total_ms", 300.0),
        ("inventory only", "inventory_ms", None),
        ("draw only", "draw_ms", None),
        ("inventory + draw, CPU", "total_cpu_ms", None),  # what a busy machine cannot inflate
        ("inventory only, CPU", "inventory_cpu_ms", None),
        ("draw only, CPU", "draw_cpu_ms", None),
        ("longest page down to its end", "page_ms", None),  # the cards built as they scroll
    ):
        for result in found:
            figures.append((f"hardware map, {result['disks']} disks: {what}", result[key], target))
    return figures


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    from PySide6.QtWidgets import QApplication, QScrollArea

    from stripewise.gui.hardware_map import HardwareMap
    from stripewise.inventory import read_live

    app = QApplication(sys.argv[:1])
    read_live()  # warm: imports, first libudev context
    inventory_ms, draw_ms, total_ms, disks = [], [], [], 0
    inventory_cpu_ms, draw_cpu_ms, total_cpu_ms, page_ms = [], [], [], []
    for _ in range(runs + 1):
        started, started_cpu = time.perf_counter(), time.process_time()
        inventory = read_live()
        read, read_cpu = time.perf_counter(), time.process_time()
        view = HardwareMap()
        scroll = QScrollArea()  # as the Hardware page holds the map
        scroll.setWidgetResizable(True)
        scroll.setWidget(view)
        scroll.resize(1400, 900)
        view.set_inventory(inventory)
        scroll.show()
        app.processEvents()
        scroll.grab()  # the first frame, every tile in view painted for real
        done, done_cpu = time.perf_counter(), time.process_time()
        page_ms.append(_longest_page(app, scroll))
        scroll.close()
        scroll.deleteLater()
        app.processEvents()
        inventory_ms.append((read - started) * 1000)
        draw_ms.append((done - read) * 1000)
        total_ms.append((done - started) * 1000)
        inventory_cpu_ms.append((read_cpu - started_cpu) * 1000)
        draw_cpu_ms.append((done_cpu - read_cpu) * 1000)
        total_cpu_ms.append((done_cpu - started_cpu) * 1000)
        disks = len(inventory.disks)
    print(
        json.dumps(
            {
                "inventory_ms": inventory_ms[1:],
                "draw_ms": draw_ms[1:],
                "total_ms": total_ms[1:],
                "inventory_cpu_ms": inventory_cpu_ms[1:],
                "draw_cpu_ms": draw_cpu_ms[1:],
                "total_cpu_ms": total_cpu_ms[1:],
                "page_ms": page_ms[1:],
                "disks": disks,
            }
        )
    )
    return 0


def _longest_page(app: QApplication, scroll: QScrollArea) -> float:
    """Pages down to the map's end, each page painted: the longest page in ms."""
    bar, longest = scroll.verticalScrollBar(), 0.0
    for value in range(bar.pageStep(), bar.maximum() + bar.pageStep(), bar.pageStep()):
        started = time.perf_counter()
        bar.setValue(value)
        app.processEvents()
        scroll.viewport().grab()
        longest = max(longest, (time.perf_counter() - started) * 1000)
    return longest


if __name__ == "__main__":
    sys.exit(main())

"""What the GUI lag benchmarks share: the real main window on the Benchmark page, a timer that
measures how late the GUI thread serves it, and running one measurement in a child process.

A 10 ms QTimer's tick that arrives 60 ms late means the event loop was blocked for about 50 ms.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

TICK_MS = 10


def benchmark_window(scratch: str) -> tuple[Any, Any, Any]:
    """(QApplication, MainWindow, HistoryService): the real window on the Benchmark page, with a
    history and settings of its own in `scratch`, loading started."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from stripewise.gui.main_window import MainWindow, WindowServices
    from stripewise.services.hardware import HardwareService
    from stripewise.services.helper_client import HelperClient
    from stripewise.services.history import HistoryService
    from stripewise.services.system_info import SystemInfoService

    app = QApplication([])
    history = HistoryService.open(f"sqlite:///{scratch}/history.db")
    settings = QSettings(f"{scratch}/settings.ini", QSettings.Format.IniFormat)
    services = WindowServices(
        history, SystemInfoService(), hardware=HardwareService(history), helper=HelperClient()
    )
    window = MainWindow(settings, initial_view="benchmark", services=services)
    window.resize(1024, 740)
    window.show()
    window.start_loading()
    return app, window, history


class LagMeter:
    """Counts how late each tick of a TICK_MS timer fires while `running` is set, and the GUI
    thread's CPU time between ticks: on a shared machine a tick is late also while the thread
    waits for a CPU, and its CPU time is about what a quiet machine's tick would wait."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.running = False
        self.lags: list[float] = []
        self.cpu_ms: list[float] = []
        self._last = 0.0
        self._last_cpu = 0.0
        self._timer = QTimer()
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._timer.start()

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        if self.running and self._last:
            self.lags.append(max(0.0, (now - self._last) * 1000 - TICK_MS))
            self.cpu_ms.append((cpu - self._last_cpu) * 1000)
        self._last, self._last_cpu = now, cpu

    def figures(self) -> dict[str, float | int]:
        ordered = sorted(self.lags)
        return {
            "max_ms": ordered[-1] if ordered else 0.0,
            "p99_ms": ordered[int(0.99 * (len(ordered) - 1))] if ordered else 0.0,
            "ticks": len(ordered),
            "max_cpu_ms": max(self.cpu_ms, default=0.0),
        }


def measure_in_child(module: str, display: str, what: str) -> dict[str, Any]:
    """`python -m module SCRATCH` on `display` in a scratch directory; the JSON it prints last."""
    prefix = f"stripewise-{module.rsplit('.', 1)[-1]}-"
    with tempfile.TemporaryDirectory(prefix=prefix, dir="/var/tmp") as scratch:
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
        done = subprocess.run(
            [sys.executable, "-m", module, scratch],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{what} run failed: {done.stderr.strip()[-500:]}")
        figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        if not figures.get("samples", 1):  # a run that never streamed measured no lag
            raise RuntimeError(f"{what} run streamed no samples: {done.stderr.strip()[-500:]}")
        return figures

"""How long the GUI thread is blocked while a benchmark streams at 10 Hz.

The real main window runs a real benchmark through the real helper (built-in engine, a scratch
directory on disk, three phases) while a 10 ms QTimer measures how late each of its ticks fires:
a tick that arrives 60 ms late means the event loop was blocked for about 50 ms. Run as a child
process (`python -m bench.gui_lag DISPLAY`), which prints the lags as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

TICK_MS = 10


def measure_in_process(scratch: str) -> dict[str, float | int]:
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from stripewise.gui.main_window import MainWindow
    from stripewise.services.hardware import HardwareService
    from stripewise.services.helper_client import HelperClient
    from stripewise.services.history import HistoryService
    from stripewise.services.system_info import SystemInfoService

    app = QApplication([])
    history = HistoryService.open(f"sqlite:///{scratch}/history.db")
    settings = QSettings(f"{scratch}/settings.ini", QSettings.Format.IniFormat)
    window = MainWindow(
        history,
        SystemInfoService(),
        settings,
        initial_view="benchmark",
        hardware=HardwareService(history),
        helper=HelperClient(),
    )
    window.resize(1024, 740)
    window.show()
    page = window.page_widgets["benchmark"]
    target = os.path.join(scratch, "target")
    os.mkdir(target)
    lags: list[float] = []
    samples = [0]
    last = [0.0]
    running = [False]

    def tick() -> None:
        now = time.perf_counter()
        if running[0] and last[0]:
            lags.append(max(0.0, (now - last[0]) * 1000 - TICK_MS))
        last[0] = now

    def start() -> None:
        form = page.form  # type: ignore[attr-defined]
        form.add_directory(target)
        form.engine.setCurrentIndex(form.engine.findData("builtin"))
        for phase, box in form.phase_boxes.items():
            box.setChecked(phase.value in ("seq_write", "seq_read", "random_read"))
        form.size.setText("1G")
        form.repetitions.setValue(2)
        form.runtime_cap.setValue(4)
        form.rate.setValue(10)
        running[0] = True
        page.start()  # type: ignore[attr-defined]

    def done(*_args: object) -> None:
        running[0] = False
        QTimer.singleShot(200, app.quit)

    page.session.sampleArrived.connect(lambda _s: samples.__setitem__(0, samples[0] + 1))  # type: ignore[attr-defined]
    page.session.saved.connect(done)  # type: ignore[attr-defined]
    timer = QTimer()
    timer.setInterval(TICK_MS)
    timer.timeout.connect(tick)
    timer.start()
    window.start_loading()
    QTimer.singleShot(2000, start)
    QTimer.singleShot(180_000, app.quit)
    app.exec()
    window.close()
    history.close()
    ordered = sorted(lags)
    return {
        "max_ms": ordered[-1] if ordered else 0.0,
        "p99_ms": ordered[int(0.99 * (len(ordered) - 1))] if ordered else 0.0,
        "ticks": len(lags),
        "samples": samples[0],
    }


def measure(display: str) -> dict[str, float | int]:
    """One run in a child process on `display`; its lag figures."""
    with tempfile.TemporaryDirectory(prefix="stripewise-lag-", dir="/var/tmp") as scratch:
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
        done = subprocess.run(
            [sys.executable, "-m", "bench.gui_lag", scratch],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"GUI lag run failed: {done.stderr.strip()[-500:]}")
        figures: dict[str, float | int] = json.loads(done.stdout.strip().splitlines()[-1])
        return figures


if __name__ == "__main__":
    print(json.dumps(measure_in_process(sys.argv[1])))

"""Start-up against the toolkit's floor, both from process start to the first frame under Xvfb.

The floor is the least a PySide6 program can do: a QMainWindow holding one label, shown, and its
first expose event answered (`python -m bench.startup floor`). Stripewise's figure is its real
window (`stripewise --bench-startup`), timed the same way in the same run, so the ratio between
the two holds on a loaded machine better than either figure alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

FIRST_FRAME_LINE = "first-frame "


def _first_frame_ms(argv: list[str], env: dict[str, str]) -> float:
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=True)
    line = next(x for x in done.stdout.splitlines() if x.startswith(FIRST_FRAME_LINE))
    return (float(line.split()[1]) - started) * 1000


def startup_samples(runs: int, window: list[str], display: str) -> tuple[list[float], list[float]]:
    """(the `window` command's, the floor's) milliseconds, `runs` of each, taken in turns so
    that a machine's load weighs on both alike; the first of each warms the page cache and is
    dropped."""
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env |= {"DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    floor = [sys.executable, "-m", "bench.startup", "floor"]
    window_ms, floor_ms = [], []
    for _ in range(runs + 1):
        window_ms.append(_first_frame_ms(window, env))
        floor_ms.append(_first_frame_ms(floor, env))
    return window_ms[1:], floor_ms[1:]


def minimal_window() -> int:
    """The floor: a QMainWindow with one label; prints the CLOCK_MONOTONIC time of its first
    expose (as `stripewise --bench-startup` does) and quits."""
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

    app = QApplication(sys.argv[:1])
    window = QMainWindow()
    window.setCentralWidget(QLabel("Stripewise"))

    class FirstExpose(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Expose and watched is window.windowHandle():
                app.removeEventFilter(self)
                QTimer.singleShot(0, report)
            return False

    def report() -> None:
        print(f"{FIRST_FRAME_LINE}{time.monotonic():.6f}", flush=True)
        app.quit()

    watcher = FirstExpose()
    app.installEventFilter(watcher)
    window.show()
    return app.exec()


if __name__ == "__main__":
    if sys.argv[1:] != ["floor"]:
        sys.exit("usage: python -m bench.startup floor")
    sys.exit(minimal_window())

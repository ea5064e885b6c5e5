"""Start-up against the toolkit's floor, both from process start to the first frame under Xvfb.

The floor is the least a PySide6 program can do: a QMainWindow holding one label, shown, and its
first expose event answered (`python -m bench.startup floor`). Stripewise's figure is its real
window (`stripewise --bench-startup`), timed the same way in the same run, so the ratio between
the two holds on a loaded machine better than either figure alone.

After the first frame, the real window goes on loading (`python -m bench.startup loaded DB`):
the history opened and listed, every page made before it is shown, fio's version and the
inventory drawn. A lag meter (bench/gui_window.py) measures how long the GUI thread stalls from
the first frame until all of that is done, and when it is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

FIRST_FRAME_LINE = "first-frame "
LOADED_TIMEOUT_S = 60


def _first_frame_ms(argv: list[str], env: dict[str, str]) -> float:
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=True)
    line = next(x for x in done.stdout.splitlines() if x.startswith(FIRST_FRAME_LINE))
    return (float(line.split()[1]) - started) * 1000


def _loading_figures(db_url: str, env: dict[str, str]) -> dict[str, float]:
    """One `loaded` child: its figures, its times taken from this process's clock before it."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="stripewise-startup-") as config:
        done = subprocess.run(
            [sys.executable, "-m", "bench.startup", "loaded", db_url],
            capture_output=True,
            text=True,
            env=env | {"XDG_CONFIG_HOME": config},  # its remembered state never the user's
            timeout=LOADED_TIMEOUT_S + 30,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"start-up loading run failed: {done.stderr.strip()[-500:]}")
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    for moment in ("first_frame", "loaded"):
        figures[f"{moment}_ms"] = (figures.pop(moment) - started) * 1000
    return figures


def startup_samples(
    runs: int, window: list[str], display: str, db_url: str
) -> tuple[list[float], list[float], list[dict[str, float]]]:
    """(the `window` command's, the floor's) milliseconds, and the loading's figures of the
    real window on `db_url`: `runs` of each, taken in turns so that a machine's load weighs on
    all alike; the first of each warms the page cache and is dropped."""
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env |= {"DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    floor = [sys.executable, "-m", "bench.startup", "floor"]
    window_ms, floor_ms, loading = [], [], []
    for _ in range(runs + 1):
        window_ms.append(_first_frame_ms(window, env))
        floor_ms.append(_first_frame_ms(floor, env))
        loading.append(_loading_figures(db_url, env))
    return window_ms[1:], floor_ms[1:], loading[1:]


def window_loading(db_url: str) -> dict[str, Any]:
    """The real program's window on `db_url` (gui/app.py's start, this machine's inventory)
    from its first frame until everything it loads at start is there: the lag meter's figures
    over that time and the CLOCK_MONOTONIC times of the first frame and of the end."""
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    from bench.gui_window import LagMeter
    from stripewise.cli.main import build_parser
    from stripewise.gui.app import create_application, run_gui
    from stripewise.gui.main_window import PLAIN_VIEWS, MainWindow

    app = create_application()
    meter = LagMeter()
    moments: dict[str, float] = {}
    windows: list[MainWindow] = []

    def everything_loaded() -> bool:
        window = windows[0]
        return window.is_loaded and set(PLAIN_VIEWS) <= window.built

    def watch() -> None:  # on each of the meter's ticks: one tick's lateness at most
        if windows and "loaded" not in moments and everything_loaded():
            moments["loaded"] = time.monotonic()
            meter.running = False
            windows[0].close()

    class FirstExpose(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Expose and not windows:
                window = next((w for w in app.topLevelWidgets() if isinstance(w, MainWindow)), None)
                if window is not None and watched is window.windowHandle():
                    app.removeEventFilter(self)
                    windows.append(window)
                    QTimer.singleShot(0, first_frame)
            return False

    def first_frame() -> None:  # answered from the event loop, as the product's own start
        moments["first_frame"] = time.monotonic()
        meter.running = True

    watcher = FirstExpose()
    app.installEventFilter(watcher)
    ticks = QTimer()
    ticks.timeout.connect(watch)
    ticks.start(5)
    QTimer.singleShot(LOADED_TIMEOUT_S * 1000, QApplication.closeAllWindows)
    run_gui(build_parser([]).parse_args(["--db", db_url]))
    if "loaded" not in moments:
        raise SystemExit(f"the window did not finish loading within {LOADED_TIMEOUT_S} s")
    return {**meter.figures(), **moments}


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
    if sys.argv[1:2] == ["loaded"] and len(sys.argv) == 3:
        print(json.dumps(window_loading(sys.argv[2])))
    elif sys.argv[1:] == ["floor"]:
        sys.exit(minimal_window())
    else:
        sys.exit("usage: python -m bench.startup floor | loaded DB_URL")

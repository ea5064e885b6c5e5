"""How long the GUI thread is blocked while a benchmark streams at 10 Hz.

The real main window runs a real benchmark through the real helper (built-in engine, a scratch
directory on disk, three phases) while a 10 ms QTimer measures how late each of its ticks fires:
a tick that arrives 60 ms late means the event loop was blocked for about 50 ms. Run as a child
process (`python -m bench.gui_lag DISPLAY`), which prints the lags as JSON.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from bench.gui_window import LagMeter, benchmark_window, measure_in_child


def measure_in_process(scratch: str) -> dict[str, float | int]:
    from PySide6.QtCore import QTimer

    app, window, history = benchmark_window(scratch)
    page: Any = window.page_widgets["benchmark"]
    target = os.path.join(scratch, "target")
    os.mkdir(target)
    meter, samples = LagMeter(), [0]

    def start() -> None:
        form = page.form
        form.add_directory(target)
        form.engine.setCurrentIndex(form.engine.findData("builtin"))
        for phase, box in form.phase_boxes.items():
            box.setChecked(phase.value in ("seq_write", "seq_read", "random_read"))
        form.file_size.setText("1G")
        form.repetitions.setValue(2)
        form.runtime_cap.setValue(4)
        form.rate.setValue(10)
        meter.running = True
        page.start()

    def done(*_args: object) -> None:
        meter.running = False
        QTimer.singleShot(200, app.quit)

    page.session.sampleArrived.connect(lambda _s: samples.__setitem__(0, samples[0] + 1))
    page.session.saved.connect(done)
    QTimer.singleShot(2000, start)
    QTimer.singleShot(180_000, app.quit)
    app.exec()
    window.close()
    history.close()
    return {**meter.figures(), "samples": samples[0]}


def measure(display: str) -> dict[str, float | int]:
    """One run in a child process on `display`; its lag figures."""
    return measure_in_child("bench.gui_lag", display, "GUI lag")


if __name__ == "__main__":
    print(json.dumps(measure_in_process(sys.argv[1])))

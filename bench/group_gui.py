"""How long the GUI thread is blocked while a group run streams from 8 hosts at 2 Hz each.

Eight real `fio --server` processes on loopback ports (fio's `null` engine, rate-limited so
each phase lasts a few seconds), the real main window, the group run started from the
Benchmark page as an admin would; a 10 ms QTimer measures how late each of its ticks fires
(bench.gui_window). Run as a child process (`python -m bench.group_gui SCRATCH`) on an
X display; it prints the lags as JSON.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any

from bench.gui_window import LagMeter, benchmark_window, measure_in_child
from stripewise.child_death import dies_with_parent

HOSTS = 8
JOB = {"ioengine": "null", "rate": "24m"}  # 192 MiB per phase: about 8 s each


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_servers(count: int) -> list[tuple[subprocess.Popen[bytes], int]]:
    """`fio --server` on loopback only (a fio server has no authentication)."""
    servers = []
    for _ in range(count):
        port = _free_port()
        process = subprocess.Popen(
            ["fio", f"--server=ip:127.0.0.1,{port}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=dies_with_parent(signal.SIGKILL),  # a killed bench leaves no server
        )
        servers.append((process, port))
    for process, port in servers:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    stop_servers(servers)
                    raise RuntimeError(f"fio --server on port {port} did not start") from None
                time.sleep(0.05)
    return servers


def stop_servers(servers: list[tuple[subprocess.Popen[bytes], int]]) -> None:
    for process, _port in servers:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process, _port in servers:
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)


def measure_in_process(scratch: str) -> dict[str, float | int | str]:
    from PySide6.QtCore import QTimer

    from stripewise.model.bench import Phase

    servers = start_servers(HOSTS)
    app, window, history = benchmark_window(scratch)
    page: Any = window.page_widgets["benchmark"]
    meter, samples = LagMeter(), [0]
    outcome: dict[str, str] = {}

    def fill_in() -> None:  # as an admin would, some time before pressing Start
        group, form = page.group, page.form
        group.target.choose("Hosts typed in")
        group.target.typed.setText(" ".join(f"127.0.0.1:{port}" for _p, port in servers))
        group.target.path.setText(scratch)
        group.job_overrides = dict(JOB)
        for phase, box in form.phase_boxes.items():
            box.setChecked(phase in (Phase.SEQ_WRITE, Phase.SEQ_READ))
        form.file_size.setText("192M")
        form.rate.setValue(2)
        form.runtime_cap.setValue(60)

    def start() -> None:
        meter.running = True
        page.start()

    def count(events: list[object]) -> None:
        samples[0] += sum(1 for e in events if type(e).__name__ == "Sample")

    def finished(result: object) -> None:
        outcome["status"] = str(getattr(result, "status", "?"))

    def done(*_args: object) -> None:
        meter.running = False
        QTimer.singleShot(200, app.quit)

    service = window.group_bench
    service.eventsArrived.connect(count)
    service.finished.connect(finished)
    service.saved.connect(done)
    service.saveFailed.connect(lambda message: (outcome.update(saved=message), done()))
    service.crashed.connect(lambda message: (outcome.update(status=message), done()))
    service.refused.connect(lambda message: (outcome.update(status=message), done()))
    QTimer.singleShot(1500, fill_in)
    QTimer.singleShot(2500, start)
    QTimer.singleShot(180_000, app.quit)
    try:
        app.exec()
        window.close()
        history.close()
    finally:
        stop_servers(servers)
    return {
        **meter.figures(),
        "samples": samples[0],
        "status": outcome.get("status", "none"),
        "saved": outcome.get("saved", "yes"),
    }


def measure(display: str) -> dict[str, float | int | str]:
    """One run in a child process on `display`; its lag figures."""
    return measure_in_child("bench.group_gui", display, "group GUI lag")


if __name__ == "__main__":
    print(json.dumps(measure_in_process(sys.argv[1])))

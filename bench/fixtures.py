"""What the bench needs around it: a virtual X server and a history of realistic size."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path


@dataclass
class VirtualDisplay:
    name: str
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def start_xvfb() -> VirtualDisplay:
    """Xvfb on the first free display number, waited for until its socket exists."""
    for number in range(90, 200):
        if Path(f"/tmp/.X11-unix/X{number}").exists() or Path(f"/tmp/.X{number}-lock").exists():
            continue
        process = subprocess.Popen(
            ["Xvfb", f":{number}", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if Path(f"/tmp/.X11-unix/X{number}").exists():
                return VirtualDisplay(f":{number}", process)
            if process.poll() is not None:
                break
            time.sleep(0.05)
        process.kill()
    raise RuntimeError("could not start Xvfb")


def seed_history(url: str, runs: int, samples_per_run: int = 100) -> None:
    """Runs shaped like real ones: six phases of results each, samples, tags, a few hosts."""
    from stripewise.history.database import open_database
    from stripewise.history.store import HistoryStore, SampleRow
    from stripewise.model.run import ResultValue, RunStatus
    from stripewise.model.run_context import RunContext
    from stripewise.system.hostinfo import HostInfo

    db = open_database(url)
    try:
        store = HistoryStore(db)
        hosts = [
            store.ensure_host(HostInfo(f"node{n}", f"{n:032x}", "6.18.0", "Xeon", 16, 64 * 2**30))
            for n in range(4)
        ]
        start = datetime(2026, 1, 1, tzinfo=UTC)
        phases = ("seq_write", "rewrite", "seq_read", "random_read", "random_write", "mixed")
        for number in range(runs):
            run_id = store.create_run(
                hosts[number % len(hosts)],
                name=f"run {number}",
                target=f"/srv/array{number % 8}",
                engine="fio",
                engine_version="3.33",
                options={"size": 2**34, "phases": list(phases)},
                context=RunContext.from_json(
                    {"kernel": "6.18.0", "filesystem": "xfs", "chunk_kib": 512}
                ),
                started_at=start + timedelta(hours=number),
            )
            store.add_samples(
                run_id,
                [
                    SampleRow(
                        seq=i,
                        t_s=i / 2,
                        phase=phases[i * len(phases) // samples_per_run],
                        repetition=0,
                        data={"read_mb_s": 200.0, "cpu_user": 3.0},
                    )
                    for i in range(samples_per_run)
                ],
            )
            store.add_results(
                run_id,
                [
                    ResultValue(phase, "throughput", "MB/s", 200.0 + number % 50, 190.0, 210.0, 3)
                    for phase in phases
                ],
            )
            store.finish_run(run_id, RunStatus.COMPLETE, start + timedelta(hours=number, minutes=9))
    finally:
        db.close()
    os.sync()

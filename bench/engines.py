"""Built-in engine against fio on one RAM-backed loop device, and the sampler's own cost.

Both engines run as users run them: `stripewise bench --json` starts the helper process, which
runs the built-in engine in its own threads or fio as its child. Measuring the built-in engine
inside this long-lived harness instead cost it 5-10 % against fio, a scheduling artefact of
where the harness's thread and the loop device's worker land on this 2-CPU VM.

The same spec (direct I/O, one stream, QD1: seq_write and seq_read in 1 MiB blocks, then
random_read in 4 KiB blocks) runs in alternating order each round, so a noisy neighbour hurts
both; the figure is the median of the per-round ratios. Each run's samples also give the
kernel's count of bytes for the device against the engine's own (direct I/O: they must agree).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from stripewise.helper.engines.base import Progress

SIZE = 2**30  # long enough that setup costs (threads, buffers, fio start) stay below 1 %


def _attach(image: Path) -> str:
    with image.open("wb") as handle:
        handle.truncate(SIZE)
    done = subprocess.run(
        ["losetup", "-f", "--show", "--direct-io=on", str(image)],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


PHASES = ("seq_write", "seq_read", "random_read")  # 1 MiB sequential, 4 KiB random, QD1


def _run(engine: str, device: str, image: Path) -> dict[str, float]:
    """One `stripewise bench` run: per phase its MB/s (sequential) or IOPS (random), and the
    kernel's bytes for the device over the engine's bytes (`<phase> kernel/engine`)."""
    argv = [sys.executable, "-m", "stripewise", "bench", "--target", device]
    argv += ["--size", str(SIZE), "--block-size", "1M", "--direct", "--engine", engine]
    argv += ["--phases", ",".join(PHASES), "--json", "--confirm-serial", str(image)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    last = events[-1] if events else {}
    if done.returncode != 0 or last.get("event") != "run_result":
        raise RuntimeError(f"{engine} run failed ({done.returncode}): {done.stderr.strip()}")
    figures = {}
    for result in last["results"]:
        quantity = "iops" if result["phase"].startswith("random") else "mb_s"
        figures[result["phase"]] = float(result[quantity]["median"])
    for phase, ratio in _kernel_over_engine(events, Path(device).name).items():
        figures[f"{phase} kernel/engine"] = ratio
    return figures


def _kernel_over_engine(events: list[dict[str, Any]], device: str) -> dict[str, float]:
    """Per phase: the bytes the kernel counted for `device` (its rates integrated over each
    sample's interval on the sampler's clock) over the bytes the engine reported moving
    (phase_result's counts). Direct I/O: every byte the engine moves reaches the device once."""
    kernel: dict[str, float] = {}
    engine: dict[str, float] = {}
    previous = 0.0
    for event in events:
        if event.get("event") == "sample":
            span, previous = max(0.0, event["t_s"] - previous), event["t_s"]
            disk = (event.get("disks") or {}).get(device)
            if disk is not None:
                moved = (disk["read_mb_s"] + disk["write_mb_s"]) * 1e6 * span
                kernel[event["phase"]] = kernel.get(event["phase"], 0.0) + moved
        elif event.get("event") == "phase_result" and not event.get("error"):
            moved = float(event["read_bytes"] + event["write_bytes"])
            engine[event["phase"]] = engine.get(event["phase"], 0.0) + moved
    return {phase: kernel.get(phase, 0.0) / moved for phase, moved in engine.items() if moved}


def builtin_vs_fio(rounds: int) -> dict[str, list[float]]:
    """Per phase: the builtin/fio ratio of each round, each engine's figure, and each engine's
    kernel/engine byte ratio."""
    if os.geteuid() != 0 or shutil.which("fio") is None:
        return {}
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(dir="/dev/shm", prefix="stripewise-bench-") as scratch:
        image = Path(scratch) / "ram.img"
        device = _attach(image)
        try:
            for engine in ("fio", "builtin"):  # untimed: the first writes allocate tmpfs pages
                _run(engine, device, image)
            for turn in range(rounds):
                engines = ["builtin", "fio"] if turn % 2 else ["fio", "builtin"]
                speeds = {engine: _run(engine, device, image) for engine in engines}
                for phase in PHASES:
                    mine, theirs = speeds["builtin"][phase], speeds["fio"][phase]
                    figures.setdefault(f"{phase} builtin", []).append(mine)
                    figures.setdefault(f"{phase} fio", []).append(theirs)
                    figures.setdefault(f"{phase} ratio", []).append(mine / theirs)
                    for engine in engines:
                        counted = speeds[engine].get(f"{phase} kernel/engine")
                        if counted is not None:
                            figures.setdefault(f"{phase} {engine} kernel/engine", []).append(
                                counted
                            )
        finally:
            subprocess.run(["losetup", "-d", device], check=False)
    return figures


def sampler_cost(rate_hz: float = 10.0, seconds: float = 5.0) -> float:
    """Percent of one core the sampler thread uses at `rate_hz`."""
    from stripewise.helper.sampling import Sampler

    progress = Progress(1)
    sampler = Sampler(lambda: progress, ("vda",), rate_hz, lambda sample: None)
    sampler.start()
    time.sleep(seconds)
    sampler.stop()
    return sampler.own_cpu_s / seconds * 100


if __name__ == "__main__":
    for name, values in builtin_vs_fio(3).items():
        print(f"{name:<22} median {statistics.median(values):8.3f}")
    print(f"sampler at 10 Hz: {sampler_cost():.2f} % of one core")

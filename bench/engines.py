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

from stripewise.helper.engines.base import Progress

# Sizes that keep setup costs (threads, buffers, fio's start) below 1 % of a phase and give
# the sequential phases (about 6 GB/s here) several whole sampling intervals at 10 Hz.
DEVICE_BYTES = 4 * 2**30
JOBS = (  # (phases, bytes): 1 MiB sequential, then 4 KiB random (its own, smaller, job)
    (("seq_write", "seq_read"), DEVICE_BYTES),
    (("random_read",), 2**30),
)


def _attach(image: Path) -> str:
    with image.open("wb") as handle:
        handle.truncate(DEVICE_BYTES)
    done = subprocess.run(
        ["losetup", "-f", "--show", "--direct-io=on", str(image)],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


PHASES = tuple(phase for phases, _size in JOBS for phase in phases)


def _run(engine: str, device: str, image: Path) -> dict[str, float]:
    """Both jobs: per phase its MB/s (sequential) or IOPS (random), and per job the kernel's
    bytes for the device over the engine's (`<first phase> kernel/engine`)."""
    figures: dict[str, float] = {}
    for phases, size in JOBS:
        figures |= _run_job(engine, device, image, phases, size)
    return figures


def _run_job(
    engine: str, device: str, image: Path, phases: tuple[str, ...], size: int
) -> dict[str, float]:
    """One `stripewise bench` run, direct I/O at QD1 as users run it."""
    argv = [sys.executable, "-m", "stripewise", "bench", "--target", device]
    argv += ["--size", str(size), "--block-size", "1M", "--direct", "--engine", engine]
    argv += ["--phases", ",".join(phases), "--json", "--confirm-serial", str(image)]
    counted = _device_bytes(device)
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    counted = _device_bytes(device) - counted
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    last = events[-1] if events else {}
    if done.returncode != 0 or last.get("event") != "run_result":
        raise RuntimeError(f"{engine} run failed ({done.returncode}): {done.stderr.strip()}")
    figures = {}
    for result in last["results"]:
        quantity = "iops" if result["phase"].startswith("random") else "mb_s"
        figures[result["phase"]] = float(result[quantity]["median"])
    # the kernel's count against the engine's for the whole job: direct I/O on a device
    # nothing else uses, so every byte the engine says it moved reaches the device once
    moved = sum(e["read_bytes"] + e["write_bytes"] for e in events if e["event"] == "phase_result")
    if moved:
        figures[f"{phases[0]} kernel/engine"] = counted / moved
    return figures


def _device_bytes(device: str) -> int:
    """Bytes the kernel has counted for `device` (read plus written), from /sys/block/*/stat:
    its sectors are 512 bytes whatever the device's own sector size."""
    fields = Path(f"/sys/block/{Path(device).name}/stat").read_text().split()
    return (int(fields[2]) + int(fields[6])) * 512


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

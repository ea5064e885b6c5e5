"""Built-in engine against fio on one RAM-backed loop device, and the sampler's own cost.

Both engines run as users run them: `stripewise bench --json` starts the helper process, which
runs the built-in engine in its own threads or fio as its child. Measuring the built-in engine
inside this long-lived harness instead cost it 5-10 % against fio, a scheduling artefact of
where the harness's thread and the loop device's worker land on this 2-CPU VM. The built-in
engine keeps each stream's thread on a CPU of its own (`cpu_placement`); fio runs unplaced, as
users run it. Latency is timed from submission in both (fio's `lat`, not `clat`).

Four cases, all direct I/O on one stream: 1 MiB sequential (seq_write then seq_read) at QD1
and QD8, 4 KiB random_read at QD1 and QD32. Each round runs every case with both engines,
in alternating order, so a noisy neighbour hurts both; a figure is the median of the per-round
ratios. Each run also gives the kernel's count of bytes for the device against the engine's
own (direct I/O: they must agree).

Both engines' runs hold idle CPUs polling (`--cpu-latency-us 0`), so the ratios compare the
engines, not the wake-up of a halted CPU: on a VM whose host lets no guest poll, that wake-up
costs 23 us against a 9 us read, and which engine pays it more often depends on where the
scheduler happens to wake each thread. A fifth case runs QD1 without the hold to show it.
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
from dataclasses import dataclass
from pathlib import Path

from stripewise.helper.engines.base import Progress

# Sizes that keep setup costs (threads, buffers, fio's start) below 1 % of a phase and give
# the sequential phases (about 6 GB/s here) several whole sampling intervals at 10 Hz.
DEVICE_BYTES = 4 * 2**30


@dataclass(frozen=True)
class Case:
    label: str  # "seq 1M QD8"
    phases: tuple[str, ...]
    size: int
    depth: int
    cpu_latency_us: int | None = 0  # None: the system's idle states


CASES = (
    Case("seq 1M QD1", ("seq_write", "seq_read"), DEVICE_BYTES, 1),
    Case("seq 1M QD8", ("seq_write", "seq_read"), DEVICE_BYTES, 8),
    Case("random 4K QD1", ("random_read",), 2**30, 1),
    Case("random 4K QD32", ("random_read",), 2**30, 32),
    Case("random 4K QD1, no PM QoS", ("random_read",), 2**30, 1, None),
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


def _run(engine: str, device: str, image: Path, case: Case) -> dict[str, float]:
    """One `stripewise bench` run, direct I/O as users run it: per phase its MB/s
    (sequential) or IOPS (random), and `kernel/engine`, the kernel's bytes for the device
    over the engine's."""
    argv = [sys.executable, "-m", "stripewise", "bench", "--target", device]
    argv += ["--size", str(case.size), "--block-size", "1M", "--direct", "--engine", engine]
    argv += ["--queue-depth", str(case.depth), "--phases", ",".join(case.phases)]
    if case.cpu_latency_us is not None:
        argv += ["--cpu-latency-us", str(case.cpu_latency_us)]
    argv += ["--json", "--confirm-serial", str(image)]
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
    # direct I/O on a device nothing else uses: every byte the engine says it moved reaches
    # the device once
    moved = sum(e["read_bytes"] + e["write_bytes"] for e in events if e["event"] == "phase_result")
    if moved:
        figures["kernel/engine"] = counted / moved
    return figures


def _device_bytes(device: str) -> int:
    """Bytes the kernel has counted for `device` (read plus written), from /sys/block/*/stat:
    its sectors are 512 bytes whatever the device's own sector size."""
    fields = Path(f"/sys/block/{Path(device).name}/stat").read_text().split()
    return (int(fields[2]) + int(fields[6])) * 512


def builtin_vs_fio(rounds: int) -> dict[str, list[float]]:
    """Keyed "<case> <phase> ratio|builtin|fio" (each round's figure) and
    "<case> <engine> kernel/engine"."""
    if os.geteuid() != 0 or shutil.which("fio") is None:
        return {}
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(dir="/dev/shm", prefix="stripewise-bench-") as scratch:
        image = Path(scratch) / "ram.img"
        device = _attach(image)
        try:
            for engine in ("fio", "builtin"):  # untimed: the first writes allocate tmpfs pages
                _run(engine, device, image, CASES[0])
            for turn in range(rounds):
                engines = ["builtin", "fio"] if turn % 2 else ["fio", "builtin"]
                for case in CASES:
                    speeds = {engine: _run(engine, device, image, case) for engine in engines}
                    _add_round(figures, case, speeds)
        finally:
            subprocess.run(["losetup", "-d", device], check=False)
    return figures


def _add_round(
    figures: dict[str, list[float]], case: Case, speeds: dict[str, dict[str, float]]
) -> None:
    for phase in case.phases:
        mine, theirs = speeds["builtin"][phase], speeds["fio"][phase]
        figures.setdefault(f"{case.label} {phase} builtin", []).append(mine)
        figures.setdefault(f"{case.label} {phase} fio", []).append(theirs)
        figures.setdefault(f"{case.label} {phase} ratio", []).append(mine / theirs)
    for engine, figure in speeds.items():
        if "kernel/engine" in figure:
            key = f"{case.label} {engine} kernel/engine"
            figures.setdefault(key, []).append(figure["kernel/engine"])


def sampler_cost(rate_hz: float = 10.0, seconds: float = 5.0) -> float:
    """Percent of one core the sampler thread uses at `rate_hz`."""
    from stripewise.helper.sampling import SampledPhase, Sampler
    from stripewise.model.bench import Phase

    progress = Progress(1)
    sampled = SampledPhase("bench", Phase.SEQ_WRITE, 1)
    sampler = Sampler(("vda",), rate_hz, lambda sample: None)
    sampler.start(lambda: progress, sampled)
    time.sleep(seconds)
    sampler.close()
    return sampler.own_cpu_s / seconds * 100


if __name__ == "__main__":
    for name, values in builtin_vs_fio(3).items():
        print(f"{name:<40} median {statistics.median(values):10.3f}")
    print(f"sampler at 10 Hz: {sampler_cost():.2f} % of one core")

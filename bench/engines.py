"""Built-in engine against fio on one RAM-backed loop device, and the sampler's own cost.

Both engines run as users run them: `stripewise bench --json` starts the helper process, which
runs the built-in engine in its own threads or fio as its child. Measuring the built-in engine
inside this long-lived harness instead cost it 5-10 % against fio, a scheduling artefact of
where the harness's thread and the loop device's worker land on this 2-CPU VM.

The same spec (direct I/O, 1 MiB blocks, one stream, seq_write then seq_read) runs in
alternating order each round, so a noisy neighbour hurts both; the figure is the median of the
per-round ratios.
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


def _run_mb_s(engine: str, device: str, image: Path) -> dict[str, float]:
    """phase -> MB/s of one `stripewise bench` run; the loop's backing file is its 'serial'."""
    argv = [sys.executable, "-m", "stripewise", "bench", "--target", device]
    argv += ["--size", str(SIZE), "--block-size", "1M", "--direct", "--engine", engine]
    argv += ["--phases", "seq_write,seq_read", "--json", "--confirm-serial", str(image)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    last = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else {}
    if done.returncode != 0 or last.get("event") != "run_result":
        raise RuntimeError(f"{engine} run failed ({done.returncode}): {done.stderr.strip()}")
    return {result["phase"]: float(result["mb_s"]["median"]) for result in last["results"]}


def builtin_vs_fio(rounds: int) -> dict[str, list[float]]:
    """Per phase: the builtin/fio ratio of each round, plus each engine's MB/s."""
    if os.geteuid() != 0 or shutil.which("fio") is None:
        return {}
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(dir="/dev/shm", prefix="stripewise-bench-") as scratch:
        image = Path(scratch) / "ram.img"
        device = _attach(image)
        try:
            for engine in ("fio", "builtin"):  # untimed: the first writes allocate tmpfs pages
                _run_mb_s(engine, device, image)
            for turn in range(rounds):
                engines = ["builtin", "fio"] if turn % 2 else ["fio", "builtin"]
                speeds = {engine: _run_mb_s(engine, device, image) for engine in engines}
                for phase in ("seq_write", "seq_read"):
                    mine, theirs = speeds["builtin"][phase], speeds["fio"][phase]
                    figures.setdefault(f"{phase} builtin", []).append(mine)
                    figures.setdefault(f"{phase} fio", []).append(theirs)
                    figures.setdefault(f"{phase} ratio", []).append(mine / theirs)
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
    for name, values in builtin_vs_fio(5).items():
        print(f"{name:<22} median {statistics.median(values):8.3f}")
    print(f"sampler at 10 Hz: {sampler_cost():.2f} % of one core")

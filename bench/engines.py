"""Built-in engine against fio on one RAM-backed loop device, and the sampler's own cost.

Both engines run the same spec (direct I/O, 1 MiB blocks, one stream) in alternating rounds,
so a noisy neighbour hurts both; the figure is the median of the per-round ratios.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from stripewise.helper.engines.base import Progress
from stripewise.model.bench import BenchSpec, Phase

SIZE = 512 * 2**20


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


def _phase_mb_s(engine: object, device: str, phase: Phase) -> float:
    spec = BenchSpec(
        target=device,
        size_bytes=SIZE,
        block_bytes=2**20,
        direct=True,
        phases=(phase,),
        engine=getattr(engine, "name", "builtin"),
    )
    engine.prepare(spec, device)  # type: ignore[attr-defined]
    outcome = engine.run_phase(
        spec,
        phase,
        1,
        device,
        Progress(SIZE),  # type: ignore[attr-defined]
        threading.Event(),
    )
    engine.cleanup()  # type: ignore[attr-defined]
    if outcome.error:
        raise RuntimeError(outcome.error)
    return float(outcome.mb_s)


def builtin_vs_fio(rounds: int) -> dict[str, list[float]]:
    """Per phase: the builtin/fio ratio of each round, plus each engine's MB/s."""
    from stripewise.helper.engines.builtin import BuiltinEngine
    from stripewise.helper.engines.fio import FioEngine

    if os.geteuid() != 0 or shutil.which("fio") is None:
        return {}
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(dir="/dev/shm", prefix="stripewise-bench-") as scratch:
        device = _attach(Path(scratch) / "ram.img")
        try:
            for turn in range(rounds):
                for phase in (Phase.SEQ_WRITE, Phase.SEQ_READ):
                    engines = [BuiltinEngine(), FioEngine(ioengine="libaio")]
                    if turn % 2:
                        engines.reverse()
                    speeds = {e.name: _phase_mb_s(e, device, phase) for e in engines}
                    figures.setdefault(f"{phase.value} builtin", []).append(speeds["builtin"])
                    figures.setdefault(f"{phase.value} fio", []).append(speeds["fio"])
                    figures.setdefault(f"{phase.value} ratio", []).append(
                        speeds["builtin"] / speeds["fio"]
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
    for name, values in builtin_vs_fio(5).items():
        print(f"{name:<22} median {statistics.median(values):8.3f}")
    print(f"sampler at 10 Hz: {sampler_cost():.2f} % of one core")

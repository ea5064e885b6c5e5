"""What an experiment costs beyond its benchmarks: `stripewise experiment run` as an admin runs
it, its wall time against the sum of its runs' own times.

A sweep of read_ahead_kb over three values on a RAM-backed loop device (one journaled apply,
read-back and revert through the helper around every run, as every tunable sweep does), buffered
sequential reads of 4 KiB of a 512 MiB file: each run lasts 2 to 3 s here, the short end of an
experiment's passes (a field note's bonnie++ pass takes minutes), so the orchestration (Python's
start, the helper's, every apply, read-back and revert, the plan, the output: about 0.5 s once
and 15 ms a visit on this machine) is measured against runs it will rarely find shorter. The
runs' times are the engine's own (`run_elapsed_s` of each `point_result`: the run's file laid
out, read and removed); the wall time is the whole command's, from exec to exit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack

IMAGE_BYTES = 640 * 2**20


def _run(argv: list[str], **kwargs: object) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kwargs).stdout  # type: ignore[call-overload, no-any-return]


def measure(runs: int) -> list[tuple[float, float]]:
    """(wall s, sum of the runs' s) of each experiment."""
    results = []
    with ExitStack() as undo, tempfile.NamedTemporaryFile(dir="/dev/shm") as image:
        image.truncate(IMAGE_BYTES)
        device = _run(["losetup", "-f", "--show", image.name]).strip()
        undo.callback(subprocess.run, ["losetup", "-d", device], check=False)
        _run(["mkfs.ext4", "-q", device])
        mountpoint = tempfile.mkdtemp(prefix="stripewise-bench-exp-")
        undo.callback(os.rmdir, mountpoint)
        _run(["mount", device, mountpoint])
        undo.callback(subprocess.run, ["umount", mountpoint], check=False)
        for seed in range(runs):
            began = time.monotonic()
            argv = [
                sys.executable, "-m", "stripewise", "experiment", "run",
                "--target", mountpoint, "--vary", "read_ahead_kb=128,512,2048",
                "--size", "512M", "--block-size", "4k", "--buffered",
                "--phases", "seq_read", "--engine", "builtin", "--max-passes", "3",
                "--half-width", "50", "--seed", str(seed), "--json",
            ]  # fmt: skip
            out = _run(argv)
            wall = time.monotonic() - began
            events = [json.loads(line) for line in out.splitlines()]
            ran = sum(e["run_elapsed_s"] for e in events if e["event"] == "point_result")
            results.append((wall, ran))
    return results

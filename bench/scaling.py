"""What the scaling test costs beyond its reading: `stripewise bench scaling` as an admin runs
it, on four RAM-backed loop devices (sparse 1 GiB images in /dev/shm, attached with direct I/O),
1 GiB read from each per pass, three passes of each of its six steps.

The phases are the passes' windows (`scaling_end`'s `measured_s`: from the moment every disk's
thread is let go to the first disk's last read); the test's time is the helper's run from its
start to its end (`elapsed_s`): between them lie starting and joining the threads, the sampler's
start and closing sample of every pass, the events. RAM reads a pass in about 0.15 s, far
shorter than any disk would (a 1 GiB pass of a 250 MB/s disk takes 4 s), so the share measured
here is the least the test will ever have. The command's own wall time (Python's start, the
inventory, the helper's start and hello) is given beside it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack

DISKS = 4
IMAGE_BYTES = 2**30


def _run(argv: list[str]) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def measure(runs: int) -> list[tuple[float, float, float]]:
    """(phases s, the test's s, the command's wall s) of each run."""
    results = []
    with ExitStack() as undo:
        names = []
        for _ in range(DISKS):
            image = undo.enter_context(tempfile.NamedTemporaryFile(dir="/dev/shm"))
            image.truncate(IMAGE_BYTES)
            device = _run(["losetup", "-f", "--show", "--direct-io=on", image.name]).strip()
            undo.callback(subprocess.run, ["losetup", "-d", device], check=False)
            names.append(device.removeprefix("/dev/"))
        for _ in range(runs):
            began = time.monotonic()
            out = _run([sys.executable, "-m", "stripewise", "bench", "scaling", "--disks",
                        ",".join(names), "--size", "1G", "--repeat", "3", "--json"])  # fmt: skip
            wall = time.monotonic() - began
            end = next(
                event
                for event in map(json.loads, out.splitlines())
                if event["event"] == "scaling_end"
            )
            assert end["status"] == "complete", end
            results.append((end["measured_s"], end["elapsed_s"], wall))
    return results

"""Issue 33, point 2: a stall made for real is found at the right time. A loop device over a
file a FUSE server paces (tests/fixtures/throttled_fuse.py); mid-phase the server is stopped
with SIGSTOP for a second, so the one read in flight waits that long. The run's phase_result
lists the stall at the sample whose interval that read completed in, within one interval."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time

import psutil
import pytest

from tests.fixtures.throttled_fuse import needs_fuse, throttled_disks

DEVICE_BYTES = 96 * 2**20
RATE_HZ = 10
PERIOD_S = 1 / RATE_HZ
FROZEN_S = 1.0


def fuse_server() -> psutil.Process:
    [server] = [
        child
        for child in psutil.Process().children(recursive=True)
        if "tests.fixtures.throttled_fuse" in " ".join(child.cmdline())
    ]
    return server


@needs_fuse
@pytest.mark.parametrize(
    "engine",
    [
        "builtin",
        pytest.param("fio", marks=pytest.mark.skipif(not shutil.which("fio"), reason="fio")),
    ],
)
def test_a_frozen_backing_store_is_a_stall_at_its_time(engine: str) -> None:
    with throttled_disks(1, DEVICE_BYTES, total_mb_s=24, disk_mb_s=24, slow={}) as disks:
        device = f"/dev/{disks.names[0]}"
        server = fuse_server()
        bench = subprocess.Popen(
            [sys.executable, "-m", "stripewise", "bench", "--engine", engine, "--json",
             "--target", device, "--confirm-serial", disks.files[0], "--size", "96M",
             "--phases", "seq_read", "--block-size", "64K", "--rate", str(RATE_HZ),
             "--latency-log"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        events, frozen_at = [], None
        try:
            assert bench.stdout is not None
            for line in bench.stdout:
                event = json.loads(line)
                events.append(event)
                if event["event"] == "sample" and frozen_at is None and event["t_s"] > 1.5:
                    server.send_signal(signal.SIGSTOP)
                    frozen_at = event["t_s"]
                    time.sleep(FROZEN_S)
                    server.send_signal(signal.SIGCONT)
        finally:
            server.send_signal(signal.SIGCONT)
            bench.wait(timeout=120)
    assert bench.returncode == 0, bench.stderr.read() if bench.stderr else ""
    assert frozen_at is not None
    [result] = [e for e in events if e["event"] == "phase_result"]
    samples = [e for e in events if e["event"] == "sample" and "latency_us" in e]
    assert samples[-1]["t_s"] > frozen_at + FROZEN_S + 1.0, "the phase ended too soon"
    thawed = frozen_at + FROZEN_S  # when the read held in flight completed
    # the freeze's stall; on a busy 2-CPU machine a real hiccup of some 40 ms can be one too
    frozen = [s for s in result["stalls"] if s["p99_us"] > 0.8 * FROZEN_S * 1e6]
    assert len(frozen) == 1, (result["stalls"], [s["latency_us"]["p99"] for s in samples])
    assert frozen_at < frozen[0]["t_s"] <= thawed + 2 * PERIOD_S + 0.05, (frozen, frozen_at)
    assert abs(frozen[0]["t_s"] - thawed) <= PERIOD_S + 0.05
    assert all(s["p99_us"] < 0.2 * FROZEN_S * 1e6 for s in result["stalls"] if s not in frozen)
    # and the stall is the sample's own p99
    by_time = {s["t_s"]: s["latency_us"]["p99"] for s in samples}
    assert all(by_time[s["t_s"]] == s["p99_us"] for s in result["stalls"])

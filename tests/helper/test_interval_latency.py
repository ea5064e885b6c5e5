"""Issue 33, point 1: every sample of a built-in run carries the completion latency of the
I/Os that ended in its interval. Real runs through the CLI and the helper on a loop device:
the intervals' histograms add up to the phase's I/O count, and their percentiles agree with
the phase's own within one bucket."""

from __future__ import annotations

import bisect
import json
import shutil
import subprocess
import sys
from typing import Any

import pytest

from tests.fixtures.histograms import bucket_at_rank
from tests.fixtures.loops import MiB, loop_device, needs_loop

BLOCK = 64 * 1024
RANDOM_BLOCK = 4096  # the random phases' block


def bench_json(
    device: str, image: str, *args: str, engine: str = "builtin"
) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "stripewise", "bench", "--engine", engine, "--json",
         "--target", device, "--confirm-serial", image, *args],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def percentile_bucket(counts: list[int], share: float) -> int:
    """The index of the bucket holding the I/O at `share`, ranked as the engine ranks."""
    return bucket_at_rank(counts, round(share * (sum(counts) - 1)))


def summed(samples: list[dict[str, Any]]) -> tuple[list[float], list[int]]:
    """The samples' histograms added up on the union of their edges (all are one grid)."""
    edges = sorted({edge for s in samples for edge in s["histogram"]["edges_us"]})
    counts = [0] * (len(edges) - 1)
    for sample in samples:
        own = sample["histogram"]
        for low, count in zip(own["edges_us"], own["counts"], strict=False):
            counts[edges.index(low)] += count
    return edges, counts


@needs_loop
@pytest.mark.parametrize(
    "engine",
    [
        "builtin",
        pytest.param("fio", marks=pytest.mark.skipif(not shutil.which("fio"), reason="fio")),
    ],
)
def test_interval_histograms_add_up_to_the_phase(engine: str) -> None:
    with loop_device(256 * MiB) as loop:
        events = bench_json(
            loop.device, loop.image, "--size", "128M", "--block-size", "64K",
            "--phases", "seq_write,random_read", "--rate", "10", "--latency-log",
            engine=engine,
        )  # fmt: skip
    results = {e["phase"]: e for e in events if e["event"] == "phase_result"}
    for phase, block in (("seq_write", BLOCK), ("random_read", RANDOM_BLOCK)):
        result = results[phase]
        samples = [e for e in events if e["event"] == "sample" and e["phase"] == phase]
        measured = [s for s in samples if "histogram" in s]
        assert measured, phase
        for sample in measured:
            latency, histogram = sample["latency_us"], sample["histogram"]
            assert latency["p50"] <= latency["p99"] <= latency["p999"]
            assert len(histogram["edges_us"]) == len(histogram["counts"]) + 1
            assert histogram["edges_us"] == sorted(histogram["edges_us"])
            assert histogram["edges_us"][0] <= latency["p50"] <= histogram["edges_us"][-1]
        ops = (result["read_bytes"] + result["write_bytes"]) // block
        edges, counts = summed(measured)
        assert sum(counts) == ops, phase
        for share, key in ((0.5, "lat_p50_us"), (0.99, "lat_p99_us")):
            found = percentile_bucket(counts, share)
            phase_bucket = bisect.bisect_right(edges, result[key]) - 1
            assert abs(found - phase_bucket) <= 1, (phase, key, edges[found], result[key])
        assert result["stalls"] == [] or all("t_s" in s and "p99_us" in s for s in result["stalls"])


@needs_loop
def test_latency_is_logged_by_default_at_2_hz_or_less_only() -> None:
    with loop_device(64 * MiB) as loop:
        fast = bench_json(loop.device, loop.image, "--size", "16M", "--phases", "seq_read",
                          "--rate", "10")  # fmt: skip
        slow = bench_json(loop.device, loop.image, "--size", "16M", "--phases", "seq_read",
                          "--rate", "2")  # fmt: skip
        off = bench_json(loop.device, loop.image, "--size", "16M", "--phases", "seq_read",
                         "--rate", "2", "--no-latency-log")  # fmt: skip
    for events, logged in ((fast, False), (slow, True), (off, False)):
        samples = [e for e in events if e["event"] == "sample"]
        assert samples and all(("latency_us" in s) is logged for s in samples), logged
        assert all(("histogram" in s) is logged for s in samples)
        [result] = [e for e in events if e["event"] == "phase_result"]
        assert ("stalls" in result) is logged

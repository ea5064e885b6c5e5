"""Live rates that add up: when the sampler takes a rate, and real runs of both engines whose
samples, weighted by their `span_s`, average to the phase's result.

The rules run on a fake clock (`FakeClock` from test_sampling: time moves only when the
sampler waits); the agreement with the results runs real benchmarks through the real helper,
on a RAM-backed loop device and on a file in a directory, sized from a measured first run so
that the phases last 2 s or more."""

from __future__ import annotations

import itertools
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stripewise.helper.engines.base import Counters, Progress
from stripewise.helper.sampling import Sampler
from tests.fixtures.helper_process import Helper
from tests.fixtures.loops import MiB, loop_device, needs_loop
from tests.helper.test_sampling import SAMPLED, FakeClock, sent_to

PERIOD = 0.1


class LateClock(FakeClock):
    """A FakeClock whose waits that end at the given times return `by` seconds late (a
    sampler thread the scheduler ran late)."""

    def __init__(self, until: float, late: dict[float, float], events: Any = ()) -> None:
        super().__init__(until, events)
        self.late = late

    def wait(self, stop: threading.Event, timeout: float) -> bool:
        target = min(self.now + timeout, self.until)
        extra = next((by for when, by in self.late.items() if abs(target - when) < 1e-9), 0.0)
        return super().wait(stop, timeout + extra)


def run(progress: Progress, clock: FakeClock, rate_hz: float = 1 / PERIOD) -> list[Any]:
    samples: list[dict[str, Any]] = []
    sampler = Sampler((), rate_hz, sent_to(samples), clock=clock, wait=clock.wait)
    sampler.start(lambda: progress, SAMPLED)
    sampler.close()
    assert sampler.error is None
    return samples


def weighted_mean(samples: list[dict[str, Any]], key: Callable[[dict[str, Any]], float]) -> float:
    total = sum(s["span_s"] for s in samples)
    return sum(key(s) * s["span_s"] for s in samples) / total


# --- the rules, on a fake clock ---------------------------------------------------------------


def fio_like(progress: Progress, start: float, mb_s: float, until: float) -> list[Any]:
    """fio's reports as they arrive: a first one before any I/O (0 bytes, a runtime of no
    use), then every 0.1 s of its runtime, each 3 ms after its moment; its start-up lasts
    `start` seconds (no I/O, as a real fio's quarter second)."""

    def report(bytes_: int, runtime_s: float) -> Callable[[], None]:
        return lambda: progress.set_totals(Counters(write_bytes=bytes_, write_ops=1), runtime_s)

    events = [(start - 0.05, report(0, 0.101))]
    step = 1
    while start + step * 0.1 < until:
        runtime = step * 0.1
        events.append((start + runtime + 0.003, report(round(mb_s * 1e6 * runtime), runtime)))
        step += 1
    return events


def test_a_stepped_engine_is_read_on_its_own_clock_from_its_first_report() -> None:
    progress = Progress(4 * 10**9)
    progress.update_period_s = PERIOD
    clock = FakeClock(2.0, fio_like(progress, 0.26, 400.0, 1.99))
    samples = run(progress, clock)
    first = samples[0]
    assert first["t_s"] > 0.36  # nothing until a report with bytes in it came in
    assert first["engine_write_mb_s"] == pytest.approx(400.0)  # not 400 x 0.1 / 0.36
    assert first["progress"] > 0 and first["eta_s"] is not None  # from the first report on
    for sample in samples:
        assert sample["engine_write_mb_s"] == pytest.approx(400.0)
    for sample in samples[:-1]:
        assert sample["span_s"] == pytest.approx(0.1, abs=0.002)
    assert samples[-1]["span_s"] == 0  # its last report was sampled already: nothing to add
    assert sum(s["span_s"] for s in samples) == pytest.approx(1.7, abs=0.002)  # fio's runtime


def test_totals_that_arrived_before_the_first_tick_are_not_divided_by_a_microsecond() -> None:
    """The bug: a phase shorter than a period whose totals came before the sampler's first
    tick got 268 MB over 1e-6 s, 2.7e8 MB/s."""
    progress = Progress(268435456)
    progress.update_period_s = 1.0

    def done() -> None:
        progress.set_totals(Counters(read_bytes=268435456, read_ops=256), 0.16)

    samples = run(progress, FakeClock(0.45, [(0.43, done)]), rate_hz=1.0)
    [closing] = samples
    assert closing["engine_read_mb_s"] == pytest.approx(268435456 / 0.16 / 1e6, rel=1e-3)
    assert closing["span_s"] == pytest.approx(0.16)
    assert closing["progress"] == 1.0 and closing["eta_s"] == 0.0


def test_no_rate_over_less_than_a_period_after_a_late_tick() -> None:
    """The tick at 0.3 s runs 40 ms late: the one at 0.4 s would span 60 ms and waits for
    0.5 s. A steady 100 MB/s reads as 100 MB/s throughout."""
    progress = Progress(10**12)
    feed = [((n - 0.5) / 1000, lambda: progress.add(write_bytes=10**5)) for n in range(1, 1000)]
    samples = run(progress, LateClock(1.0, {0.3: 0.04}, feed))
    times = [s["t_s"] for s in samples]
    assert 0.34 in times and 0.4 not in times and 0.5 in times
    for sample in samples[:-1]:
        assert sample["span_s"] >= round(0.9 * PERIOD, 3)  # as sent: ms
        assert sample["engine_write_mb_s"] == pytest.approx(100.0, rel=0.06)


def test_an_end_that_could_not_be_foreseen_closes_on_its_own_sliver() -> None:
    """A phase that ends 10 ms after a tick, its plan no guide (it moves less than planned):
    its closing sample stands for exactly those 10 ms and the one 1 MB block in them, so the
    samples add up to the phase's 36 MB, to the byte rounding of 1 kB/s."""
    progress = Progress(10**12)
    blocks = [(0.02 * n + 0.001, lambda: progress.add(read_bytes=10**6)) for n in range(50)]
    samples = run(progress, FakeClock(0.71, blocks))
    closing = samples[-1]
    assert closing["t_s"] == pytest.approx(0.71) and closing["span_s"] == pytest.approx(0.01)
    assert closing["engine_read_mb_s"] == pytest.approx(100.0)
    added = sum(s["engine_read_mb_s"] * s["span_s"] for s in samples)
    assert added == pytest.approx(36.0, abs=0.005)  # MB: 36 blocks by 0.71 s


def test_a_tick_just_before_the_foreseen_end_is_left_to_the_closing_sample() -> None:
    """The same blocks, 36 of them planned: at the tick at 0.7 s, 1 MB is left at 50 MB/s,
    20 ms of work. That tick waits; the closing sample at 0.71 s takes its 110 ms (6 blocks),
    so no rate stands on a sliver, and the samples still add up to the 36 MB."""
    progress = Progress(36 * 10**6)
    blocks = [(0.02 * n + 0.001, lambda: progress.add(read_bytes=10**6)) for n in range(36)]
    samples = run(progress, FakeClock(0.71, blocks))
    closing = samples[-1]
    assert 0.7 not in [s["t_s"] for s in samples]
    assert closing["t_s"] == pytest.approx(0.71) and closing["span_s"] == pytest.approx(0.11)
    assert closing["engine_read_mb_s"] == pytest.approx(6 / 0.11, rel=1e-3)
    added = sum(s["engine_read_mb_s"] * s["span_s"] for s in samples)
    assert added == pytest.approx(36.0, abs=0.005)


def test_a_short_first_report_when_overdue_is_its_rate_not_a_stall() -> None:
    """At 2 Hz, fio's first report with bytes in it comes 0.98 s into the phase with 0.3 s of
    its runtime: less than 0.9 of a period, yet the sampler is overdue (1 s without a sample).
    That sample is the report's 400 MB/s over its 0.3 s, not 0 MB/s over no time while
    120 MB moved; the samples still add up to the bytes moved."""
    progress = Progress(10**12)
    progress.update_period_s = 0.5

    def report(runtime_s: float) -> Callable[[], None]:
        moved = round(400e6 * runtime_s)
        return lambda: progress.set_totals(Counters(read_bytes=moved, read_ops=1), runtime_s)

    events = [(0.85, lambda: progress.set_totals(Counters(), 0.101)), (0.98, report(0.3))]
    events += [(0.98 + 0.5 * n, report(0.3 + 0.5 * n)) for n in range(1, 4)]
    samples = run(progress, FakeClock(2.6, events), rate_hz=2.0)
    first = samples[0]
    assert first["t_s"] == pytest.approx(1.0)
    assert first["engine_read_mb_s"] == pytest.approx(400.0) and first["span_s"] == 0.3
    assert all(s["engine_read_mb_s"] == pytest.approx(400.0) for s in samples if s["span_s"])
    added = sum(s["engine_read_mb_s"] * s["span_s"] for s in samples)
    assert added == pytest.approx(400.0 * 1.8)  # MB: the last report's runtime, 1.8 s


def test_an_engine_whose_reports_stop_says_zero_for_no_time() -> None:
    progress = Progress(10**12)
    progress.update_period_s = PERIOD
    clock = FakeClock(3.0, fio_like(progress, 0.2, 300.0, 1.0))  # reports end at ~1 s
    samples = run(progress, clock)
    stalled = [s for s in samples if s["t_s"] > 2.05 and s is not samples[-1]]
    assert stalled and all(s["engine_write_mb_s"] == 0 and s["span_s"] == 0 for s in stalled)
    ticks = samples[:-1]  # the closing sample may come at any time
    assert all(s["t_s"] - p["t_s"] >= 0.9 * PERIOD for p, s in itertools.pairwise(ticks))
    moving = [s for s in samples if s["span_s"]]
    assert weighted_mean(moving, lambda s: s["engine_write_mb_s"]) == pytest.approx(300.0)


# --- real runs ---------------------------------------------------------------------------------

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
ENGINES = ["builtin", pytest.param("fio", marks=needs_fio)]


def bench(args: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A run through the real helper: its bench.start reply and its events."""
    helper = Helper()
    try:
        started = helper.ask("bench.start", {"sample_rate_hz": 1 / PERIOD, **args})
        assert started["ok"], started
        result = helper.until_result(timeout=300)
        assert result["status"] == "complete", helper.events
    finally:
        helper.close()
    return started["result"], helper.events


def sized(args: dict[str, Any], phases: list[str], seconds: float, most: int) -> int:
    """Bytes for each of `phases` to take about `seconds`, from a measured 128 MiB run (at
    most `most`, in whole MiB)."""
    _started, events = bench({**args, "size": 128 * MiB, "phases": phases})
    fastest = max(e["mb_s"] for e in events if e["event"] == "phase_result")
    return min(most, max(128 * MiB, int(fastest * 1e6 * seconds) // MiB * MiB))


def check_phases(events: list[dict[str, Any]], disks: set[str], cap_s: float) -> int:
    """Every phase's samples against its result; how many phases lasted 1 s or more."""
    long_phases = 0
    for index, event in enumerate(events):
        if event["event"] != "phase_result":
            continue
        phase, repetition = event["phase"], event["repetition"]
        samples = [
            e
            for e in events[:index]
            if e["event"] == "sample" and (e["phase"], e["repetition"]) == (phase, repetition)
        ]
        closing = samples[-1]  # the closing sample: only warnings come between it and the result
        assert all(e["event"] == "warning" for e in events[events.index(closing) + 1 : index])

        def engine(sample: dict[str, Any], phase: str = phase) -> float:
            write = sample["engine_write_mb_s"]
            return write if phase == "rewrite" else sample["engine_read_mb_s"] + write

        assert engine(closing) > 0, (phase, closing)
        for sample in samples:
            assert engine(sample) < 10 * event["mb_s"] + 1000, sample  # never 268435456
            if sample is not closing and sample["span_s"]:
                assert sample["span_s"] >= round(0.9 * PERIOD, 3), sample  # as sent: ms
            assert set(sample["disks"]) <= disks
        progress = [s["progress"] for s in samples]
        assert progress == sorted(progress)
        if event["elapsed_s"] < cap_s - 0.1:  # ran to its end, not to the cap
            assert progress[-1] == pytest.approx(1.0, abs=0.01)
        assert samples[0]["progress"] > 0 and samples[0]["eta_s"] is not None
        if event["elapsed_s"] >= 1.0:  # ten samples or more: their weighted mean is the rate
            long_phases += 1
            mean = weighted_mean(samples, engine)
            assert mean == pytest.approx(event["mb_s"], rel=0.05), (phase, mean, event)
    return long_phases


@needs_loop
@pytest.mark.parametrize(
    ("engine", "depth"),
    [("builtin", 1), ("builtin", 32), pytest.param("fio", 1, marks=needs_fio)],
)
def test_samples_add_up_to_the_results_on_a_ram_loop_device(engine: str, depth: int) -> None:
    phases = ["seq_write", "random_read"]
    with loop_device(4096 * MiB) as loop:
        args = {"target": loop.device, "engine": engine, "confirm_serial": loop.image}
        args |= {"queue_depth": depth}
        args |= {"overwrite": True, "runtime_cap_s": 4}  # random reads of it take longer
        size = sized(args, phases, 2.5, 4096 * MiB)
        started, events = bench({**args, "size": size, "phases": phases})
    assert started["disks"] == [loop.name]
    results = [
        (e["phase"], e["elapsed_s"], e["mb_s"]) for e in events if e["event"] == "phase_result"
    ]
    assert check_phases(events, {loop.name}, 4) == 2, (size, results)
    samples = [e for e in events if e["event"] == "sample"]
    assert all(s["disks"][loop.name]["role"] == "target" for s in samples if s["disks"])


@pytest.mark.parametrize("engine", ENGINES)
def test_samples_add_up_to_the_results_on_a_file_in_a_directory(
    engine: str, tmp_path: Path
) -> None:
    phases = ["seq_write", "rewrite", "seq_read"]
    free = shutil.disk_usage(tmp_path).free
    args = {"target": str(tmp_path), "engine": engine, "runtime_cap_s": 30}
    size = sized(args, phases, 2.5, min(8192 * MiB, free // 4))
    started, events = bench({**args, "size": size, "phases": phases})
    assert check_phases(events, set(started["disks"]), 30) >= 1
    assert list(tmp_path.iterdir()) == []

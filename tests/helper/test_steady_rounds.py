"""Steady state through the real helper, on a RAM-backed loop device the kernel's block
throttle (cgroup v1 blkio) paces: its rate is the throttle's, not what the CPUs shared with
other work allow, so it is steady from the start; raised between rounds, it ramps and never
settles within 5 rounds."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from stripewise.model.steady_state import MAX_EXCURSION_PCT, MAX_SLOPE_PCT, WINDOW
from tests.fixtures.helper_process import Helper
from tests.fixtures.loops import Loop, MiB, loop_device, needs_loop

BLKIO = "/sys/fs/cgroup/blkio"
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
needs_blkio = pytest.mark.skipif(
    not os.path.exists(f"{BLKIO}/blkio.throttle.write_bps_device"),
    reason="needs the cgroup v1 blkio throttle",
)


@contextlib.contextmanager
def throttled(helper: Helper, loop: Loop) -> Iterator[Callable[[float], None]]:
    """The helper (and the fio it starts) in a blkio group of its own; the setter paces its
    writes to the loop device at that many MB/s."""
    group = f"{BLKIO}/stripewise-steady-{secrets.token_hex(4)}"
    os.mkdir(group)
    rdev = os.stat(loop.device).st_rdev

    def pace(mb_s: float) -> None:
        with open(f"{group}/blkio.throttle.write_bps_device", "w") as limit:
            limit.write(f"{os.major(rdev)}:{os.minor(rdev)} {int(mb_s * 1e6)}")

    try:
        with open(f"{group}/cgroup.procs", "w") as procs:
            procs.write(str(helper.process.pid))
        yield pace
    finally:
        helper.close()  # the helper and its fio gone, the group is empty and can go
        os.rmdir(group)


def steady_run(
    loop: Loop,
    engine: str,
    max_rounds: int,
    pace_after: Callable[[int], float],
    after_round: Callable[[int], None] = lambda _round: None,
) -> list[dict[str, Any]]:
    """A seq_write in rounds of 16 MiB, paced at pace_after(0) MB/s, then at
    pace_after(n) from the end of round n (when `after_round(n)` is also called): its
    events."""
    helper = Helper()
    with throttled(helper, loop) as pace:
        pace(pace_after(0))
        args = {"target": loop.device, "confirm_serial": loop.image, "overwrite": True}
        args |= {"engine": engine, "size": 16 * MiB, "phases": ["seq_write"]}
        args |= {"steady_state": True, "precondition": True, "max_rounds": max_rounds}
        assert helper.ask("bench.start", args)["ok"]
        while not helper.events or helper.events[-1].get("event") != "run_result":
            message = helper.read()
            if "event" in message:
                helper.events.append(message)
            if message.get("event") == "steady_round":
                pace(pace_after(message["round"]))
                after_round(message["round"])
    assert helper.events[-1]["status"] == "complete", helper.events
    return helper.events


@contextlib.contextmanager
def cpus_kept_busy() -> Iterator[Callable[[bool], None]]:
    """A switch for a busy loop on every CPU (stopped at the end, also on failure)."""
    burners: list[subprocess.Popen[bytes]] = []

    def switch(on: bool) -> None:
        if on and not burners:
            code = "import os; os.nice(-10)\nwhile True: pass"
            burners.extend(
                subprocess.Popen([sys.executable, "-c", code])
                for _cpu in range(os.cpu_count() or 1)
            )
        elif not on:
            for burner in burners:
                burner.kill()
                burner.wait()
            burners.clear()

    try:
        yield switch
    finally:
        switch(False)


def busy_pct(sample: dict[str, Any]) -> float:
    cpu = sample["cpu"]
    return 100.0 - cpu["idle"] - cpu.get("iowait", 0.0) - cpu.get("steal", 0.0)


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]


@needs_loop
@needs_blkio
@pytest.mark.parametrize("engine", ["builtin", pytest.param("fio", marks=needs_fio)])
def test_a_paced_ram_loop_device_is_steady_from_the_start(engine: str) -> None:
    with loop_device(64 * MiB) as loop:
        events = steady_run(loop, engine, 25, lambda _round: 40)
    rounds = of(events, "steady_round")
    (result,) = of(events, "phase_result")
    said = [e["message"] for e in of(events, "warning") if e["code"] == "precondition"]
    # the whole device (SNIA PTS), not only the 16 MiB each round measures
    assert said[0] == "filling the device sequentially first (64 MiB)"
    assert said[1].startswith("preconditioned: 64 MiB in "), said
    progress = [s["progress"] for s in of(events, "sample") if s["progress"] is not None]
    assert progress == sorted(progress), "the phase's progress went back at a round's end"
    assert progress[-1] < 1, "planned to 25 rounds and steady sooner: never said whole"
    assert [r["round"] for r in rounds] == list(range(1, len(rounds) + 1))
    assert WINDOW <= len(rounds) < 25, rounds  # steady well before the cap
    assert [r["steady"] for r in rounds] == [False] * (len(rounds) - 1) + [True]
    assert all(r["excursion_pct"] is None for r in rounds[: WINDOW - 1])
    assert rounds[-1]["excursion_pct"] <= MAX_EXCURSION_PCT
    assert rounds[-1]["slope_pct"] <= MAX_SLOPE_PCT
    assert result["steady"] is True
    assert result["rounds"] == [r["figure"] for r in rounds]
    window = result["rounds"][-WINDOW:]
    assert result["window"]["mean"] == pytest.approx(sum(window) / WINDOW, abs=0.01)
    assert result["mb_s"] == pytest.approx(result["window"]["mean"], abs=0.01)
    assert result["write_bytes"] == 16 * MiB * len(rounds)  # every round moved its size
    assert "not_steady" not in result["flags"]
    (run_result,) = of(events, "run_result")
    assert run_result["results"][0]["mb_s"]["median"] == pytest.approx(result["mb_s"], abs=0.01)


@needs_loop
@needs_blkio
def test_a_rate_that_ramps_is_flagged_not_steady_at_the_cap() -> None:
    with loop_device(64 * MiB) as loop:  # 20, 30, 40, 50, 60 MB/s: a slope of 25 %/round
        events = steady_run(loop, "builtin", 5, lambda done: 20 + 10 * done)
    rounds = of(events, "steady_round")
    (result,) = of(events, "phase_result")
    assert [r["round"] for r in rounds] == [1, 2, 3, 4, 5]  # stopped at the cap
    assert result["steady"] is False and not rounds[-1]["steady"]
    figures = result["rounds"]
    assert figures == sorted(figures) and figures[-1] > 2 * figures[0], figures
    assert rounds[-1]["excursion_pct"] > MAX_EXCURSION_PCT
    assert rounds[-1]["slope_pct"] > MAX_SLOPE_PCT
    assert "not_steady" in result["flags"]
    (run_result,) = of(events, "run_result")
    assert "not_steady" in run_result["results"][0]["flags"]
    # said as a guard that trips is (protocol.md, Guards), once
    said = [e["message"] for e in of(events, "warning") if e["code"] == "not_steady"]
    assert len(said) == 1 and said[0].startswith(
        "Sequential Output, Block, pass 1: not steady in 5 rounds, excursion "
    ), said


def rounds_cpu(events: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """Each round's busy % as its samples show it, time-weighted, and its seconds. A round's
    closing sample comes after its steady_round (the next round's start closes it): the
    first sample after round N's belongs to round N."""
    rounds: list[list[dict[str, Any]]] = [[]]
    closing = False
    for event in events:
        if event["event"] == "steady_round":
            rounds.append([])
            closing = True
        elif event["event"] == "sample" and event.get("cpu") and event.get("span_s"):
            rounds[-2 if closing else -1].append(event)
            closing = False
    spans = [sum(s["span_s"] for s in samples) for samples in rounds[:-1]]
    busy = [
        sum(busy_pct(s) * s["span_s"] for s in samples) / span
        for samples, span in zip(rounds, spans, strict=False)
    ]
    return list(zip(busy, spans, strict=True))


@needs_loop
@needs_blkio
def test_a_phase_in_rounds_reports_its_windows_cpu_not_its_last_rounds() -> None:
    """Every CPU kept busy through the last round only: the phase's CPU is the window's (its
    rounds' busy time over their time, as the samples show it), as its MB/s is the window's
    mean; not the last round's, which the sampler's count, started again each round, gave."""
    with loop_device(64 * MiB) as loop, cpus_kept_busy() as keep_busy:
        events = steady_run(
            loop, "builtin", 5, lambda _round: 40, lambda done: keep_busy(done == 4)
        )
    (result,) = of(events, "phase_result")
    rounds = rounds_cpu(events)
    assert len(rounds) == len(result["rounds"]) == 5
    window = sum(busy * span for busy, span in rounds) / sum(span for _busy, span in rounds)
    last = rounds[-1][0]
    if abs(last - window) < 15:  # other work on the machine kept the first rounds busy too
        pytest.skip(f"the machine was too busy to tell rounds apart: {rounds}")
    assert abs(result["cpu_pct"] - window) < abs(result["cpu_pct"] - last), (result, rounds)
    assert result["cpu_pct"] == pytest.approx(window, abs=8), rounds

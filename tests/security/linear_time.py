"""Timing a parser on adversarial inputs of growing size: what the linear-time tests share.

A case builds its input at n and at 8n characters and runs the parser on each; the CPU time
(process time, best of a few runs, the collector off) grows 8 times when the parser is linear
and 64 times when it is quadratic. A case fails past 24: three times the linear growth leaves
room for a loaded two-core machine and for caches (an input past them costs more per
character), and a quadratic parser still fails by far. Times under a few milliseconds are
noise, so the small input's time is taken as at least FLOOR_S; each case's n is chosen so
that a quadratic parser takes far longer than that.
"""

from __future__ import annotations

import contextlib
import gc
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

GROWTH = 8
MOST_RATIO = 24.0
FLOOR_S = 0.003
_SMALL_RUNS = 3
_LARGE_RUNS = 2
_MOST_SMALL_S = 1.0  # a case is sized far below this at n: slower fails at once


@dataclass(frozen=True)
class Case:
    """`build(size)` makes an input of about `size` characters; `run` parses it."""

    name: str
    build: Callable[[int], Any]
    run: Callable[[Any], object]
    size: int


class _OverBudget(BaseException):
    """A run past its CPU budget: a BaseException, so no parser's `except` takes it."""


def _over_budget(signum: int, frame: object) -> None:
    raise _OverBudget


def cpu_seconds(run: Callable[[Any], object], data: Any, runs: int, enough: float) -> float:
    """The least CPU time of `runs` runs of `run(data)`; a run is stopped at `enough`
    seconds (a profiling timer: regex matching checks for signals too), where the answer is
    plain, so that a quadratic parser fails in seconds rather than hours."""
    best = float("inf")
    # one collection, not one a run: in a whole test session's heap a full collection costs
    # a good part of a second, which made these cases most of the suite's time
    gc.collect()
    previous = signal.signal(signal.SIGPROF, _over_budget)
    try:
        for _ in range(runs):
            gc.disable()
            began = time.process_time()
            try:
                if enough < float("inf"):
                    signal.setitimer(signal.ITIMER_PROF, enough, enough / 4)
                run(data)
                best = min(best, time.process_time() - began)
            except _OverBudget:
                return max(enough, time.process_time() - began)
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
                gc.enable()
    finally:
        signal.signal(signal.SIGPROF, previous)
    return best


def growth(case: Case) -> tuple[float, float]:
    """CPU seconds of `case` at n and at GROWTH x n."""
    small, large = case.build(case.size), case.build(GROWTH * case.size)
    small_s = cpu_seconds(case.run, small, _SMALL_RUNS, _MOST_SMALL_S)
    if small_s >= _MOST_SMALL_S:
        raise AssertionError(f"{case.name}: more than {_MOST_SMALL_S:.0f} s of CPU at n already")
    limit = MOST_RATIO * max(small_s, FLOOR_S)
    return small_s, cpu_seconds(case.run, large, _LARGE_RUNS, 4 * limit)


def assert_linear(case: Case) -> None:
    """Fail when 8 times the input takes more than MOST_RATIO times the CPU; measured twice
    before failing, so one busy moment of the machine is not a failure."""
    for attempt in range(2):
        small_s, large_s = growth(case)
        ratio = large_s / max(small_s, FLOOR_S)
        if ratio <= MOST_RATIO:
            return
        stopped = ratio >= 4 * MOST_RATIO  # the large run was stopped: plainly not linear
        if stopped or attempt:
            break
    at_least = "at least " if stopped else ""
    raise AssertionError(
        f"{case.name}: {GROWTH}x the input ({GROWTH * case.size:,} characters) took {at_least}"
        f"{ratio:.0f}x the CPU time ({small_s * 1000:.1f} ms -> {large_s * 1000:.0f} ms): "
        "not linear"
    )


def refusing(run: Callable[[Any], object], *refusals: type[Exception]) -> Callable[[Any], None]:
    """`run`, with the errors adversarial input earns (its refusal) taken as an answer."""

    def quietly(data: Any) -> None:
        with contextlib.suppress(*refusals):
            run(data)

    return quietly


def repeated(unit: str, size: int, head: str = "", tail: str = "") -> str:
    """`head`, then `unit` repeated to about `size` characters, then `tail`."""
    return head + unit * max(1, size // len(unit)) + tail

"""What every benchmark engine provides: run one phase, counting as it goes, stoppable.

The engine updates `Progress` from its worker threads; the sampler reads it at the sample
rate to turn byte counts into live MB/s (deltas of counters, never an engine's own rate).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from stripewise.helper.engines.latency_histogram import LatencyHistogram
from stripewise.model.bench import BenchSpec, Phase, PhaseOutcome

if TYPE_CHECKING:
    from stripewise.helper.target import Target


@dataclass
class Counters:
    read_bytes: int = 0
    write_bytes: int = 0
    read_ops: int = 0
    write_ops: int = 0


class Progress:
    """Cumulative counters of the running phase; thread-safe, cheap to read."""

    def __init__(self, planned_bytes: int, *, round_of: tuple[int, int] = (1, 1)) -> None:
        """`round_of`: (this round, the most rounds) of a phase run in rounds (steady state):
        the phase's progress counts every round planned, the engine's plan this one only."""
        self.planned_bytes = planned_bytes
        self.round_of = round_of
        # How often the engine updates the counters, when not continuously (fio: its status
        # interval); the sampler then takes each rate from one update to another, on the
        # engine's runtime clock, instead of reading the same totals between updates.
        self.update_period_s: float | None = None
        self._lock = threading.Lock()
        self._counters = Counters()
        self._runtime_s: float | None = None  # the engine's own clock at these totals (fio)
        self._begun: float | None = None  # time.monotonic() when the engine began (builtin)
        self._latencies: tuple[LatencyHistogram, ...] = ()  # the phase's, as the engine counts
        self._latency_totals: npt.NDArray[np.int64] | None = None  # as fio reports them

    def begin(self) -> None:
        """The engine starts moving data now: its runtime, which live rates are divided by,
        counts from here, as its result's elapsed time does (the first call counts)."""
        with self._lock:
            if self._begun is None:
                self._begun = time.monotonic()
            self._runtime_s = None  # running again after an end()

    def end(self) -> None:
        """The engine has stopped moving data: its runtime stops here (its clean-up after,
        say io_destroy's wait, is not part of what it measured)."""
        with self._lock:
            if self._begun is not None:
                self._runtime_s = time.monotonic() - self._begun

    def add(
        self, read_bytes: int = 0, write_bytes: int = 0, read_ops: int = 0, write_ops: int = 0
    ) -> None:
        with self._lock:
            self._counters.read_bytes += read_bytes
            self._counters.write_bytes += write_bytes
            self._counters.read_ops += read_ops
            self._counters.write_ops += write_ops

    def set_totals(self, counters: Counters, runtime_s: float | None = None) -> None:
        """For engines that report cumulative totals (fio's status JSON), with the seconds the
        engine had been moving data when it counted them, by its own clock (fio's job runtime):
        the sampler divides by that, not by when the totals happened to arrive."""
        with self._lock:
            self._counters = Counters(**vars(counters))
            self._runtime_s = runtime_s

    def reading(self) -> tuple[Counters, float | None]:
        """The counters and the engine's runtime at them (None: the engine keeps no clock or
        has not begun): one consistent pair."""
        with self._lock:
            runtime = self._runtime_s
            if runtime is None and self._begun is not None:
                runtime = time.monotonic() - self._begun
            return Counters(**vars(self._counters)), runtime

    def count_latencies(self, histograms: Sequence[LatencyHistogram]) -> None:
        """The histograms the engine counts this phase's I/O times in (the built-in one's
        workers'): the sampler diffs their sum at each sample for the interval's latencies."""
        with self._lock:
            self._latencies = tuple(histograms)

    def set_latency_totals(self, counts: npt.NDArray[np.int64]) -> None:
        """Every I/O time counted so far (fine buckets), from an engine that reports them in
        steps (fio's cumulative histogram, with its totals)."""
        with self._lock:
            self._latency_totals = counts

    def latency_counts(self) -> npt.NDArray[np.int64] | None:
        """Every I/O time counted so far (fine buckets); None from an engine that keeps none."""
        with self._lock:
            histograms, totals = self._latencies, self._latency_totals
        if not histograms:
            return None if totals is None else totals.copy()
        total = histograms[0].snapshot()
        for histogram in histograms[1:]:
            total += histogram.snapshot()
        return total

    def snapshot(self) -> Counters:
        with self._lock:
            return Counters(**vars(self._counters))

    @property
    def fraction(self) -> float:
        done = self.snapshot()
        moved = done.read_bytes + done.write_bytes
        return min(1.0, moved / self.planned_bytes) if self.planned_bytes else 0.0

    def phase_share(self, moved: int) -> tuple[float, int]:
        """The phase's share done with `moved` bytes of this round moved, and the bytes left
        to its plan: a phase in rounds reaches 1 at the end of its last round allowed (it may
        end sooner, steady), never at the end of each round."""
        number, most = self.round_of
        whole = self.planned_bytes * most
        done = self.planned_bytes * (number - 1) + min(moved, self.planned_bytes)
        left = max(0, whole - self.planned_bytes * (number - 1) - moved)
        return (min(1.0, done / whole) if whole else 0.0), left


class EngineError(RuntimeError):
    """A phase that could not run or broke off (disk full, device gone); message for people."""


class Engine(Protocol):
    name: str
    # how the last phase really ran, "direct" or "buffered", where the engine falls back
    # (the built-in one, when O_DIRECT is refused); "" when it runs as the spec says
    last_mode: str
    notes: list[str]  # what the engine says of how it ran (a fallback): each a run warning

    def version(self) -> str: ...

    def prepare(self, spec: BenchSpec, target: Target) -> None:
        """Check that the engine can run the spec on the held target (alignment, O_DIRECT)."""

    def run_phase(
        self,
        spec: BenchSpec,
        phase: Phase,
        repetition: int,
        target: Target,
        progress: Progress,
        cancel: threading.Event,
    ) -> PhaseOutcome:
        """Run one phase on the target's test file or device, reached only through its held
        descriptor; stop within 1 s of `cancel` being set (then return what was measured with
        error='cancelled')."""

    def layout(
        self, spec: BenchSpec, target: Target, progress: Progress, cancel: threading.Event
    ) -> None:
        """Write the test file to full size so phases that read or rewrite find real
        blocks; a no-op for devices and for a file already laid out."""

    def cleanup(self) -> None:
        """Remove anything the engine created besides the target's test file."""

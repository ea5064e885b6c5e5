"""What every benchmark engine provides: run one phase, counting as it goes, stoppable.

The engine updates `Progress` from its worker threads; the sampler reads it at the sample
rate to turn byte counts into live MB/s (deltas of counters, never an engine's own rate).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

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

    def __init__(self, planned_bytes: int) -> None:
        self.planned_bytes = planned_bytes
        # How often the engine updates the counters, when not continuously (fio: once a
        # second); the sampler then spreads each update over its interval, not one sample.
        self.update_period_s: float | None = None
        self._lock = threading.Lock()
        self._counters = Counters()

    def add(
        self, read_bytes: int = 0, write_bytes: int = 0, read_ops: int = 0, write_ops: int = 0
    ) -> None:
        with self._lock:
            self._counters.read_bytes += read_bytes
            self._counters.write_bytes += write_bytes
            self._counters.read_ops += read_ops
            self._counters.write_ops += write_ops

    def set_totals(self, counters: Counters) -> None:
        """For engines that report cumulative totals (fio's status JSON)."""
        with self._lock:
            self._counters = Counters(**vars(counters))

    def snapshot(self) -> Counters:
        with self._lock:
            return Counters(**vars(self._counters))

    @property
    def fraction(self) -> float:
        done = self.snapshot()
        moved = done.read_bytes + done.write_bytes
        return min(1.0, moved / self.planned_bytes) if self.planned_bytes else 0.0


class EngineError(RuntimeError):
    """A phase that could not run or broke off (disk full, device gone); message for people."""


class Engine(Protocol):
    name: str

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

    def cleanup(self) -> None:
        """Remove anything the engine created besides the target's test file."""

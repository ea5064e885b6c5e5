"""Benchmark runs as the rest of the program sees them: plain values, no storage details."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class RunStatus(StrEnum):
    """Life cycle of a run; `aborted` marks a run left `running` by a crash."""

    RUNNING = "running"
    COMPLETE = "complete"
    CANCELLED = "cancelled"
    FAILED = "failed"
    ABORTED = "aborted"

    @property
    def finished(self) -> bool:
        return self is not RunStatus.RUNNING


@dataclass(frozen=True)
class ResultValue:
    """One figure of one phase: the median over repetitions with its spread.

    `value` is None when the tool produced no figure (bonnie++ prints `+++++`): a missing
    figure is never stored as 0. `passes` are the repetitions a verdict is tested on; samples
    within a pass are no repetitions.
    """

    phase: str
    metric: str
    unit: str
    value: float | None
    min_value: float | None = None
    max_value: float | None = None
    repetitions: int = 1
    passes: tuple[float, ...] = ()  # each repetition's figure, in run order (when recorded)
    flags: tuple[str, ...] = ()  # guards the figure tripped (docs/history.md lists them)
    source_unit: str = ""  # an import's own unit, for display; `unit` is the stored (SI) one
    # the errors of the phase's repetitions that failed or were cancelled, in run order (the
    # same on each of its figures): why a figure is missing (model.phase_stop says it)
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Headline:
    """A run's listing line, made by `model.run_headline.headline`."""

    array: str = ""  # "md0 raid6, 512 KiB chunk, 8 members"
    tuning: str = ""  # "read_ahead 4096 KiB, mq-deadline, dirty 20/10 %"
    figures: str = ""  # "write 512 MB/s, read 640 MB/s, rand read 12,000 IOPS"

    # a line stored by an older way of making it is made again when listed (3: figures kept
    # unrounded, rounded once as shown, in MB/s or MiB/s)
    VERSION = 3

    def as_json(self) -> dict[str, str | int]:
        return {
            "v": self.VERSION,
            "array": self.array,
            "tuning": self.tuning,
            "figures": self.figures,
        }

    @classmethod
    def is_current(cls, value: Any) -> bool:
        """Stored, and made the way this version makes it."""
        return isinstance(value, Mapping) and value.get("v") == cls.VERSION

    @classmethod
    def from_json(cls, value: Any) -> Headline:
        """An empty line (to be made again) for NULL, malformed or outdated values."""
        if not cls.is_current(value):
            return cls()
        return cls(*(str(value.get(k) or "") for k in ("array", "tuning", "figures")))


@dataclass(frozen=True)
class RunSummary:
    """What a history listing shows for one run."""

    id: int
    name: str
    status: RunStatus
    host: str
    target: str
    engine: str
    engine_version: str
    started_at: datetime
    finished_at: datetime | None
    tags: tuple[str, ...] = ()
    notes: str = ""
    source: str = "measured"  # or "imported"
    baseline: bool = False  # marked as the run others are compared against
    headline: Headline = field(default_factory=Headline)
    partial: bool = False  # a group run's total that leaves out a host that did not complete

    @property
    def duration_s(self) -> float | None:
        if self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()

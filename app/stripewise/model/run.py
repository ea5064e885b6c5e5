"""Benchmark runs as the rest of the program sees them: plain values, no storage details."""

from __future__ import annotations

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
    figure is never stored as 0.
    """

    phase: str
    metric: str
    unit: str
    value: float | None
    min_value: float | None = None
    max_value: float | None = None
    repetitions: int = 1


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

    @property
    def duration_s(self) -> float | None:
        if self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()


@dataclass(frozen=True)
class RunDetail:
    """A run with everything recorded about it except its raw samples."""

    summary: RunSummary
    spec: dict[str, Any]
    context: dict[str, Any]
    results: tuple[ResultValue, ...]
    sample_count: int
    notes: str = ""
    source: str = "measured"
    extra: dict[str, Any] = field(default_factory=dict)

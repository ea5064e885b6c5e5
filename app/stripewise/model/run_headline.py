"""The one-line facts a history listing shows per run: array, tuning in force, key figures.

Computed from a run's context and results once, stored with the run, and recomputed when its
results change, so listing a thousand runs never parses a thousand contexts. Figures are in
the history's vocabulary (`model.vocabulary`): throughput is stored as MB/s, with enough
digits that `figures_in_units` can show the line in MB/s or MiB/s, rounded once, as the
results table rounds the same figure (never 565 MiB/s in the list and 564 in the table).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

from stripewise.model.run import Headline, ResultValue
from stripewise.model.run_context import QueueTuning, RunContext
from stripewise.model.units import MIB_PER_MB
from stripewise.model.vocabulary import IOPS, THROUGHPUT
from stripewise.model.wording import count_noun

# (phase, metric, label) in the order they are worth a glance; the first three found are shown
_FIGURES = (
    ("seq_write", THROUGHPUT.metric, "write"),
    ("seq_read", THROUGHPUT.metric, "read"),
    ("random_read", IOPS.metric, "rand read"),
    ("random_write", IOPS.metric, "rand write"),
    ("rewrite", THROUGHPUT.metric, "rewrite"),
    ("mixed", IOPS.metric, "mixed"),
)
_SHOWN = 3
_V = TypeVar("_V")
_RATE = re.compile(r"(\d[\d,]*(?:\.\d+)?) (MB/s|IOPS)")


def headline(context: RunContext, results: Sequence[ResultValue]) -> Headline:
    return Headline(_array(context), _tuning(context), _figures(results))


def _array(context: RunContext) -> str:
    """The md array, or without one the device under the target and its filesystem."""
    array = context.array
    if array is None:
        first = (context.disks[0].name or "") if context.disks else ""
        return ", ".join(p for p in (first, context.filesystem or "") if p)
    parts = [" ".join(str(p) for p in (array.device, array.level) if p)]
    if array.chunk_kib:
        parts.append(f"{array.chunk_kib} KiB chunk")
    if array.members:
        parts.append(count_noun(len(array.members), "member"))
    return ", ".join(p for p in parts if p)


def _same(values: list[_V]) -> _V | None:
    """The value when every disk has the same one, else None."""
    return values[0] if values and all(v == values[0] for v in values) else None


def _tuning(context: RunContext) -> str:
    """The queue tuning the filesystem reads through (the array's, else the disks'), and
    the writeback settings."""
    named: list[tuple[str | None, QueueTuning]]
    if context.array is not None and context.array.tuning is not None:
        named = [(context.array.name, context.array.tuning)]
    else:
        named = [(d.name, d.tuning or QueueTuning()) for d in context.disks or ()]
    parts = []
    if named:
        read_ahead = _same([t.read_ahead_kb for _, t in named])
        scheduler = _same([t.scheduler for _, t in named])
        if read_ahead is not None:
            parts.append(f"read_ahead {read_ahead} KiB")
        elif len(named) <= 3:  # a loop device over its backing disk, say: both matter
            each = [f"{name or '?'} {t.read_ahead_kb}" for name, t in named]
            parts.append(f"read_ahead {', '.join(each)} KiB")
        else:
            parts.append("mixed read_ahead")
        if scheduler:
            parts.append(scheduler)
    dirty = context.dirty
    if dirty is not None:
        if dirty.dirty_bytes:
            parts.append(f"dirty {dirty.dirty_bytes // 2**20} MiB")
        elif dirty.dirty_ratio_pct is not None:
            parts.append(f"dirty {dirty.dirty_ratio_pct}/{dirty.dirty_background_ratio_pct} %")
    return ", ".join(parts)


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.1f}"


def _stored_number(value: float) -> str:
    """Three decimals at most, no separators: shown rounded by `figures_in_units`."""
    return f"{round(value, 3):f}".rstrip("0").rstrip(".")


def _figures(results: Sequence[ResultValue]) -> str:
    found = {(r.phase, r.metric): r for r in results if r.value is not None}
    shown: list[str] = []
    for phase, metric, label in _FIGURES:
        result = found.get((phase, metric))
        if result is not None and result.value is not None and len(shown) < _SHOWN:
            shown.append(f"{label} {_stored_number(result.value)} {result.unit}")
    if not shown:  # phases of their own (iozone's cells, fio jobs told apart): as they come
        rates = [r for r in found.values() if r.metric == THROUGHPUT.metric]
        rates += [r for r in found.values() if r.metric == IOPS.metric]
        for result in rates[:_SHOWN]:
            assert result.value is not None
            shown.append(f"{result.phase} {_stored_number(result.value)} {result.unit}")
    return ", ".join(shown)


def figures_in_units(figures: str, *, mib: bool) -> str:
    """A stored figures line as shown: rates rounded, throughput in MiB/s (2^20 B/s) when
    `mib`, else MB/s (10^6 B/s) as stored."""

    def shown(match: re.Match[str]) -> str:
        value, unit = float(match.group(1).replace(",", "")), match.group(2)
        if mib and unit == THROUGHPUT.unit:
            value, unit = value * MIB_PER_MB, "MiB/s"
        return f"{_number(value)} {unit}"

    return _RATE.sub(shown, figures)

"""The one-line facts a history listing shows per run: array, tuning in force, key figures.

Computed from a run's context and results once, stored with the run, and recomputed when its
results change, so listing a thousand runs never parses a thousand contexts. Figures are in
the history's vocabulary (`model.vocabulary`): throughput is stored as MB/s, with enough
digits that `figures_in_units` can show the line in MB/s or MiB/s, rounded once, as the
results table rounds the same figure (never 565 MiB/s in the list and 564 in the table).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from stripewise.model.run import Headline, ResultValue
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
_RATE = re.compile(r"(\d[\d,]*(?:\.\d+)?) (MB/s|IOPS)")


def headline(context: Mapping[str, Any], results: Sequence[ResultValue]) -> Headline:
    return Headline(_array(context), _tuning(context), _figures(results))


def _array(context: Mapping[str, Any]) -> str:
    """The md array, or without one the device under the target and its filesystem."""
    array = context.get("array")
    if not isinstance(array, Mapping):
        disks = [d for d in context.get("disks") or () if isinstance(d, Mapping)]
        first = str(disks[0].get("name") or "") if disks else ""
        return ", ".join(p for p in (first, str(context.get("filesystem") or "")) if p)
    parts = [" ".join(str(p) for p in (array.get("device"), array.get("level")) if p)]
    if array.get("chunk_kib"):
        parts.append(f"{array['chunk_kib']} KiB chunk")
    members = array.get("members")
    if isinstance(members, list) and members:
        parts.append(count_noun(len(members), "member"))
    return ", ".join(p for p in parts if p)


def _same(values: list[Any]) -> Any:
    """The value when every disk has the same one, else None."""
    return values[0] if values and all(v == values[0] for v in values) else None


def _tuning(context: Mapping[str, Any]) -> str:
    disks = [d for d in context.get("disks") or () if isinstance(d, Mapping)]
    tunings = [d.get("tuning") or {} for d in disks]
    array = context.get("array")
    if isinstance(array, Mapping) and isinstance(array.get("tuning"), Mapping):
        disks, tunings = [array], [array["tuning"]]  # the filesystem reads through the array
    parts = []
    if tunings:
        read_ahead = _same([t.get("read_ahead_kb") for t in tunings])
        scheduler = _same([t.get("scheduler") for t in tunings])
        if read_ahead is not None:
            parts.append(f"read_ahead {read_ahead} KiB")
        elif len(tunings) <= 3:  # a loop device over its backing disk, say: both matter
            each = [
                f"{d.get('name') or '?'} {t.get('read_ahead_kb')}"
                for d, t in zip(disks, tunings, strict=True)
            ]
            parts.append(f"read_ahead {', '.join(each)} KiB")
        else:
            parts.append("mixed read_ahead")
        if scheduler:
            parts.append(str(scheduler))
    dirty = context.get("dirty")
    if isinstance(dirty, Mapping):
        if dirty.get("dirty_bytes"):
            parts.append(f"dirty {int(dirty['dirty_bytes']) // 2**20} MiB")
        elif dirty.get("dirty_ratio_pct") is not None:
            background = dirty.get("dirty_background_ratio_pct")
            parts.append(f"dirty {dirty['dirty_ratio_pct']}/{background} %")
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

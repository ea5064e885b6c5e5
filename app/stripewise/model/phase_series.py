"""Throughput over time: each phase's engine MB/s against time, for the runs' own plots and
the comparison's "Over time". Shown, never judged: samples within a pass are no repetitions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from stripewise.model.bench import counted_of
from stripewise.model.run_detail import RunDetail

ENGINE_KEYS = ("engine_read_mb_s", "engine_write_mb_s")  # what "Over time" draws
Series = dict[str, tuple[tuple[float, ...], tuple[float, ...]]]  # phase -> (s since start, MB/s)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def engine_series(samples: Iterable[tuple[float, str, int, Mapping[str, float | None]]]) -> Series:
    """The engine's MB/s of each phase's first repetition against seconds since its first
    sample, from (t_s, phase, repetition, data) in time order. Rates are counted as the
    phase's result counts them (PhaseOutcome.mb_s): rewrite half of what moved (each block
    once), everything else reads plus writes. Shown only: samples within a pass are no
    evidence for a verdict."""
    starts: dict[str, tuple[float, int]] = {}
    points: dict[str, tuple[list[float], list[float]]] = {}
    for t_s, phase, repetition, data in samples:
        if phase in ("", "None"):
            continue
        read_mb, write_mb = (_number(data.get(k)) for k in ENGINE_KEYS)
        if read_mb is None and write_mb is None:
            continue
        start = starts.setdefault(phase, (t_s, repetition))
        if repetition == start[1]:
            xs, ys = points.setdefault(phase, ([], []))
            xs.append(t_s - start[0])
            moved = (read_mb or 0.0) + (write_mb or 0.0)
            ys.append(counted_of(phase, moved))
    return {phase: (tuple(xs), tuple(ys)) for phase, (xs, ys) in points.items()}


def series_note(runs: Sequence[RunDetail], series: Mapping[int, Series], phase: str) -> str:
    """Which runs have no line for `phase` and why: an import keeps results only; a measured
    run's phase can end before its first sample. One sample is a dot, not a line."""
    imported, unsampled, single = [], [], []
    for run in runs:
        xs = series.get(run.summary.id, {}).get(phase, ((), ()))[0]
        label = f"#{run.summary.id}"
        if run.source != "measured":
            imported.append(label)
        elif not xs:
            unsampled.append(label)
        elif len(xs) == 1:
            single.append(label)
    said = []
    if imported:
        said.append(f"{', '.join(imported)}: imported, results only")
    if unsampled:
        said.append(f"{', '.join(unsampled)}: no sample (the phase ended before the first one)")
    if single:
        said.append(f"{', '.join(single)}: one sample, shown as a dot")
    return "; ".join(said)

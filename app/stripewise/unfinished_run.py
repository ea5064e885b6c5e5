"""A run_result for a run the helper never reported the end of, made from the events received.

When the helper is lost mid-run (killed, crashed) or does not answer a cancel in time, no
run_result comes. The client still files the run, with the phases that did finish summarised
over their repetitions as the helper summarises them (`model.bench.summarize`), so the history
keeps what was measured. One shape for `stripewise bench` and the GUI's bench session.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from stripewise.model.bench import BONNIE_NAMES, Phase, PhaseResult, spread_of


def _numbers(events: Sequence[Mapping[str, Any]], key: str) -> list[float]:
    values = (event.get(key) for event in events)
    return [float(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]


def _summary(phase: Phase, events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    good = [e for e in events if not e.get("error")]
    latencies50, latencies99 = _numbers(good, "lat_p50_us"), _numbers(good, "lat_p99_us")
    cpus = _numbers(good, "cpu_pct")
    mb = spread_of(_numbers(good, "mb_s"))
    cpu = statistics.median(cpus) if cpus else None
    result = PhaseResult(
        phase=phase,
        mb_s=mb,
        iops=spread_of(_numbers(good, "iops")),
        lat_p50_us=statistics.median(latencies50) if latencies50 else None,
        lat_p99_us=statistics.median(latencies99) if latencies99 else None,
        cpu_pct=cpu,
        kb_s_per_cpu_pct=mb.median * 1000 / cpu if mb and cpu else None,
        errors=tuple(str(e["error"]) for e in events if e.get("error")),
    )
    return asdict(result) | {"phase": phase.value, "name": BONNIE_NAMES[phase]}


def phase_summaries(phase_results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """run_result's `results` from the phase_result events received, phases in run order."""
    by_phase: dict[Phase, list[Mapping[str, Any]]] = {}
    for event in phase_results:
        if event.get("phase") in Phase._value2member_map_:
            by_phase.setdefault(Phase(event["phase"]), []).append(event)
    return [_summary(phase, events) for phase, events in by_phase.items()]


def unfinished_result(
    status: str,
    message: str,
    phase_results: Sequence[Mapping[str, Any]],
    *,
    run: str | None,
    engine: str,
    engine_version: str,
    elapsed_s: float,
) -> dict[str, Any]:
    """`status` is `aborted` (the helper was lost) or `cancelled` (it did not answer the
    cancel in time); `message` says which."""
    return {
        "event": "run_result",
        "run": run,
        "status": status,
        "error": message,
        "elapsed_s": round(elapsed_s, 3),
        "engine": engine,
        "engine_version": engine_version,
        "results": phase_summaries(phase_results),
    }

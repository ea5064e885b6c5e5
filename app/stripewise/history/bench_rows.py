"""The helper's events as history rows: one shape for `stripewise bench --save` and the GUI."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stripewise.history.store import SampleRow
from stripewise.model.run import ResultValue, RunStatus

RUN_STATUS = {
    "complete": RunStatus.COMPLETE,
    "cancelled": RunStatus.CANCELLED,
    "failed": RunStatus.FAILED,
}
_NOT_SERIES = ("event", "run", "phase", "repetition", "t_s")
_SPREAD_METRICS = (("throughput", "MB/s", "mb_s"), ("iops", "IOPS", "iops"))
_SINGLE_METRICS = (
    ("latency_p50", "us", "lat_p50_us"),
    ("latency_p99", "us", "lat_p99_us"),
    ("cpu", "%", "cpu_pct"),
    ("efficiency", "KB/s per CPU %", "kb_s_per_cpu_pct"),
)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def flat_series(sample: Mapping[str, Any]) -> dict[str, float]:
    """Numeric series only, units in their names; nested ones dotted (`disks.sda.read_mb_s`)."""
    data: dict[str, float] = {}
    for key, value in sample.items():
        if key in _NOT_SERIES:
            continue
        if (number := _number(value)) is not None:
            data[key] = number
        elif isinstance(value, Mapping):
            for inner, figure in value.items():
                if isinstance(figure, Mapping):
                    for name, nested in figure.items():
                        if (number := _number(nested)) is not None:
                            data[f"{key}.{inner}.{name}"] = number
                elif (number := _number(figure)) is not None:
                    data[f"{key}.{inner}"] = number
    return data


def sample_row(seq: int, sample: Mapping[str, Any]) -> SampleRow:
    return SampleRow(
        seq=seq,
        t_s=_number(sample.get("t_s")) or 0.0,
        phase=str(sample.get("phase")),
        repetition=int(_number(sample.get("repetition")) or 0),
        data=flat_series(sample),
    )


def result_values(run_result: Mapping[str, Any]) -> list[ResultValue]:
    """Per phase: MB/s and IOPS with their spread over repetitions, then single figures."""
    values: list[ResultValue] = []
    for phase in run_result.get("results") or []:
        if not isinstance(phase, Mapping) or not isinstance(phase.get("phase"), str):
            continue
        name = phase["phase"]
        for metric, unit, key in _SPREAD_METRICS:
            spread = phase.get(key)
            if isinstance(spread, Mapping):
                values.append(
                    ResultValue(
                        name,
                        metric,
                        unit,
                        _number(spread.get("median")),
                        _number(spread.get("low")),
                        _number(spread.get("high")),
                        int(_number(spread.get("n")) or 1),
                    )
                )
        for metric, unit, key in _SINGLE_METRICS:
            values.append(ResultValue(name, metric, unit, _number(phase.get(key))))
    return values


def final_status(run_result: Mapping[str, Any] | None) -> RunStatus:
    if run_result is None:
        return RunStatus.FAILED
    return RUN_STATUS.get(str(run_result.get("status")), RunStatus.FAILED)

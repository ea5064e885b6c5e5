"""`stripewise bench --save`: the run, its samples and its results into the history."""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime, timedelta
from typing import Any

from stripewise.model.run import ResultValue, RunStatus

_STATUS = {
    "complete": RunStatus.COMPLETE,
    "cancelled": RunStatus.CANCELLED,
    "failed": RunStatus.FAILED,
}


def _flat(sample: dict[str, Any]) -> dict[str, float | None]:
    """Numeric series only, with their units in the names (disk counters per disk)."""
    data: dict[str, float | None] = {}
    for key, value in sample.items():
        if key in ("event", "run", "phase", "repetition", "t_s"):
            continue
        if isinstance(value, int | float) and not isinstance(value, bool):
            data[key] = float(value)
        elif isinstance(value, dict):
            for inner, figure in value.items():
                if isinstance(figure, dict):
                    for name, number in figure.items():
                        if isinstance(number, int | float):
                            data[f"{key}.{inner}.{name}"] = float(number)
                elif isinstance(figure, int | float) and not isinstance(figure, bool):
                    data[f"{key}.{inner}"] = float(figure)
    return data


def context_of(target: str) -> dict[str, Any]:
    import platform

    from stripewise.history.hostinfo import HostInfo
    from stripewise.inventory.mounts import read_mount_entries

    host = HostInfo.current()
    context: dict[str, Any] = {
        "host": host.hostname,
        "kernel": host.kernel,
        "cpu_model": host.cpu_model,
        "cpu_count": host.cpu_count,
        "ram_bytes": host.ram_bytes,
        "target": target,
        "python": platform.python_version(),
    }
    try:
        st = os.stat(target)
        devno = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        mount = next((m for m in read_mount_entries() if m.devno == devno), None)
        if mount is not None:
            context.update(
                mountpoint=mount.mountpoint,
                filesystem=mount.fstype,
                mount_options=mount.options,
                source=mount.source,
            )
        vfs = os.statvfs(target)
        if vfs.f_blocks:
            context["fill_pct"] = round(100 * (1 - vfs.f_bfree / vfs.f_blocks), 1)
    except (OSError, ValueError):
        pass
    return context


def save_run(
    url: str, args: argparse.Namespace, result: dict[str, Any], samples: list[dict[str, Any]]
) -> int:
    from stripewise.history.database import open_database
    from stripewise.history.hostinfo import HostInfo
    from stripewise.history.store import HistoryStore, SampleRow

    finished = datetime.now(UTC)
    started = finished - timedelta(seconds=float(result.get("elapsed_s") or 0))
    db = open_database(url)
    try:
        store = HistoryStore(db)
        run_id = store.create_run(
            store.ensure_host(HostInfo.current()),
            name=f"{args.engine} on {args.target}",
            target=args.target,
            engine=str(result.get("engine")),
            engine_version=str(result.get("engine_version")),
            spec={
                k: v
                for k, v in vars(args).items()
                if k
                in (
                    "size",
                    "block_size",
                    "phases",
                    "streams",
                    "repeat",
                    "rate",
                    "engine",
                    "buffered",
                    "queue_depth",
                )
            },
            context=context_of(args.target),
            started_at=started,
        )
        store.add_samples(
            run_id,
            [
                SampleRow(
                    seq=n,
                    t_s=float(s.get("t_s") or 0.0),
                    phase=str(s.get("phase")),
                    repetition=int(s.get("repetition") or 0),
                    data=_flat(s),
                )
                for n, s in enumerate(samples)
            ],
        )
        values: list[ResultValue] = []
        for phase in result.get("results", []):
            name = phase["phase"]
            for metric, unit, key in (("throughput", "MB/s", "mb_s"), ("iops", "IOPS", "iops")):
                spread = phase.get(key)
                if spread:
                    values.append(
                        ResultValue(
                            name,
                            metric,
                            unit,
                            spread["median"],
                            spread["low"],
                            spread["high"],
                            spread["n"],
                        )
                    )
            for metric, unit, key in (
                ("latency_p50", "us", "lat_p50_us"),
                ("latency_p99", "us", "lat_p99_us"),
                ("cpu", "%", "cpu_pct"),
                ("efficiency", "KB/s per CPU %", "kb_s_per_cpu_pct"),
            ):
                values.append(ResultValue(name, metric, unit, phase.get(key)))
        store.add_results(run_id, values)
        store.finish_run(
            run_id, _STATUS.get(str(result.get("status")), RunStatus.FAILED), finished_at=finished
        )
        return run_id
    finally:
        db.close()

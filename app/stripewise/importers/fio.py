"""fio JSON output (`--output-format=json`), plain or from client/server runs.

A file may hold text before the JSON (client mode prefixes server lines with `<host>`), several
JSON objects one after the other (runs appended to one file, or `--status-interval` reports)
and duplicate keys in "global options"; each object starts with `{` at the start of a line.
Interval reports of one run are cumulative, so only the last of them is kept.

Per job and direction with I/O: phase = the job name, plus " read"/" write"/" trim" when the
job did more than one; metrics as the measured runs use them (`PhaseResult.values`).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from stripewise.importers.common import (
    NAME_MAX,
    ImportedRun,
    ImportFormatError,
    clip,
    text_lines,
)
from stripewise.input_files import MAX_DEPTH, InputFileError, check_depth
from stripewise.model.run import ResultValue

ENGINE = "fio"
DIRECTIONS = ("read", "write", "trim")
TOTAL_JOB = "All clients"
_LIFTED = ("rw", "bs", "iodepth", "numjobs", "size", "ioengine", "direct", "runtime")
# A direction's figures, each at most what any run can report: an exbibyte moved, a petabyte
# per second, a trillion IOPS, a year of runtime in ms.
_CEILINGS = {
    "io_bytes": 2**60,
    "io_kbytes": 2**50,
    "bw_bytes": 1e15,
    "bw": 1e12,
    "iops": 1e12,
    "runtime": 3.2e10,
}


def looks_like(text: str) -> bool:
    return (
        '"fio version"' in text
        or '"client_stats"' in text
        or ('"jobs"' in text and '"jobname"' in text)
    )


def parse(text: str, source: str) -> list[ImportedRun]:
    objects = _drop_interval_reports(json_objects(text, source))
    if not objects:
        raise ImportFormatError(source, 1, "no fio JSON output found")
    runs: list[ImportedRun] = []
    for line, obj, reports in objects:
        try:
            runs.extend(_runs_of(obj, line, source, reports))
        except (TypeError, AttributeError, KeyError, IndexError) as exc:
            # a file is untrusted input: a field of another type than fio writes is a
            # refusal naming where, never a traceback
            raise ImportFormatError(
                source, line, f"fio JSON of an unexpected shape ({type(exc).__name__}: {exc})"
            ) from None
    return runs


def json_objects(text: str, source: str) -> list[tuple[int, dict[str, Any]]]:
    """Each top-level JSON object with the line it starts on; other lines are skipped."""
    lines = text_lines(text)
    joined = "\n".join(lines)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    decoder = json.JSONDecoder()
    found: list[tuple[int, dict[str, Any]]] = []
    index = 0
    while index < len(lines):
        if not lines[index].lstrip().startswith("{"):
            index += 1
            continue
        start = offsets[index] + lines[index].index("{")
        try:
            obj, end = decoder.raw_decode(joined, start)
            check_depth(joined[start:end], source)
        except json.JSONDecodeError as exc:
            raise ImportFormatError(
                source, exc.lineno, f"malformed or truncated fio JSON: {exc.msg}"
            ) from None
        except (RecursionError, InputFileError):
            raise ImportFormatError(
                source, index + 1, f"JSON nested deeper than {MAX_DEPTH} levels"
            ) from None
        if not isinstance(obj, dict) or not ("jobs" in obj or "client_stats" in obj):
            raise ImportFormatError(
                source, index + 1, "JSON object without fio's jobs or client_stats"
            )
        found.append((index + 1, obj))
        index = joined.count("\n", 0, end) + 1
    return found


def _entries(obj: dict[str, Any]) -> list[dict[str, Any]]:
    entries = obj.get("client_stats") if "client_stats" in obj else obj.get("jobs")
    return [e for e in entries or [] if isinstance(e, dict)]


def _drop_interval_reports(
    objects: list[tuple[int, dict[str, Any]]],
) -> list[tuple[int, dict[str, Any], int]]:
    """`--status-interval` repeats the same jobs with growing elapsed time: keep the last,
    with the line of the first and the number of reports."""
    kept: list[tuple[int, dict[str, Any], int]] = []
    for line, obj in objects:
        if kept and _continues(kept[-1][1], obj):
            first_line, _, reports = kept[-1]
            kept[-1] = (first_line, obj, reports + 1)
        else:
            kept.append((line, obj, 1))
    return kept


def _continues(earlier: dict[str, Any], later: dict[str, Any]) -> bool:
    def identity(obj: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(e.get("jobname"), e.get("groupid"), e.get("hostname")) for e in _entries(obj)]

    def elapsed(obj: dict[str, Any]) -> float | None:
        times = [e.get("elapsed") for e in _entries(obj)]
        numbers = [t for t in times if isinstance(t, int | float)]
        return max(numbers) if numbers else None

    before, after = elapsed(earlier), elapsed(later)
    t0, t1 = earlier.get("timestamp"), later.get("timestamp")
    if before is None or after is None or not isinstance(t0, int) or not isinstance(t1, int):
        return False
    # A new run appended later started after the earlier one ended: its report comes more
    # wall-clock seconds later than its elapsed time grew.
    return (
        identity(earlier) == identity(later)
        and after > before
        and 0 <= t1 - t0 <= after - before + 2
    )


def _runs_of(obj: dict[str, Any], line: int, source: str, reports: int) -> list[ImportedRun]:
    entries = _entries(obj)
    if not entries:
        raise ImportFormatError(source, line, "fio JSON with no jobs")
    if "client_stats" not in obj:
        run = _run(obj, entries, line, source, host=None, client=None)
        if reports > 1:
            run.context["status_reports"] = reports
        return [run]
    hosts: dict[tuple[str, Any], list[dict[str, Any]]] = {}
    totals = [e for e in entries if e.get("jobname") == TOTAL_JOB]
    for entry in entries:
        if entry.get("jobname") != TOTAL_JOB:
            key = (str(entry.get("hostname") or "unknown"), entry.get("port"))
            hosts.setdefault(key, []).append(entry)
    names = Counter(hostname for hostname, _ in hosts)
    runs = [
        _run(obj, group, line, source, host=hostname, client=(hostname, port, names[hostname] > 1))
        for (hostname, port), group in hosts.items()
    ]
    if totals:
        total = _run(obj, totals, line, source, host=None, client=None, total=len(hosts))
        targets = dict.fromkeys(t for run in runs for t in run.target.split(", ") if t)
        runs.append(replace(total, target=", ".join(targets)))
    return runs


def _run(
    obj: dict[str, Any],
    entries: list[dict[str, Any]],
    line: int,
    source: str,
    *,
    host: str | None,
    client: tuple[str, Any, bool] | None,
    total: int = 0,
) -> ImportedRun:
    global_options = obj.get("global options") or {}
    jobs = {
        str(e.get("jobname")): {**global_options, **(e.get("job options") or {})}
        for e in entries
        if e.get("jobname") != TOTAL_JOB
    }
    results = _results(entries, source, line)
    if not results:
        raise ImportFormatError(source, line, "fio JSON whose jobs did no I/O")
    version = str(obj.get("fio version") or "").removeprefix("fio-")
    context: dict[str, Any] = {
        "format": "fio json client" if "client_stats" in obj else "fio json",
        "line": line,
        "time": obj.get("time"),
        "jobs": len(entries),
    }
    if errors := {str(e.get("jobname")): e["error"] for e in entries if e.get("error")}:
        context["errors"] = errors
    where = ""
    if client is not None:
        hostname, port, shared = client
        context["client"] = {"hostname": hostname, "port": port}
        where = f"{hostname}:{port}" if shared else hostname
        context["disk_util"] = [
            d
            for d in obj.get("disk_util") or []
            if d.get("hostname") == hostname and d.get("port") == port
        ]
    elif total:
        context["clients"] = total
    targets = list(dict.fromkeys(t for t in map(_target, jobs.values()) if t))
    if total:
        name = f"fio total of {total} clients ({TOTAL_JOB})"
    else:
        name = f"fio {', '.join(jobs)}" + (f" on {where}" if where else "")
    return ImportedRun(
        name=clip(name, NAME_MAX),
        host=host,
        engine=ENGINE,
        engine_version=version,
        target=", ".join(targets),
        started_at=_time(obj.get("timestamp"), source, line),
        spec=_spec(global_options, jobs),
        context=context,
        results=results,
    )


def _spec(global_options: dict[str, Any], jobs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = {"global": dict(global_options), "jobs": jobs}
    for key in _LIFTED:
        found = [options.get(key) for options in jobs.values()]
        if found and found[0] is not None and all(value == found[0] for value in found):
            spec[key] = found[0]
    return spec


def _target(options: dict[str, Any]) -> str:
    filename, directory = options.get("filename"), options.get("directory")
    if filename and directory and not str(filename).startswith("/"):
        return f"{str(directory).rstrip('/')}/{filename}"
    return str(filename or directory or "")


def _time(timestamp: Any, source: str, line: int) -> datetime | None:
    if not isinstance(timestamp, int | float) or not timestamp > 0:
        return None
    try:
        return datetime.fromtimestamp(timestamp, UTC)
    except (OverflowError, ValueError, OSError):  # past year 9999, or infinite
        raise ImportFormatError(source, line, f"timestamp: {timestamp:g} is not a time") from None


def _results(entries: list[dict[str, Any]], source: str, line: int) -> list[ResultValue]:
    counts = Counter(str(e.get("jobname")) for e in entries)
    seen: Counter[str] = Counter()
    results: list[ResultValue] = []
    for entry in entries:
        name = str(entry.get("jobname"))
        if counts[name] > 1:  # numjobs without group_reporting: one entry per clone
            seen[name] += 1
            name = f"{name}#{seen[name]}"
        for direction in DIRECTIONS:
            if isinstance(stats := entry.get(direction), dict):
                _check_direction(stats, f"{name} {direction}", source, line)
        active = [d for d in DIRECTIONS if _io_bytes(entry.get(d)) > 0]
        cpu = _cpu(entry)
        for direction in active:
            phase = clip(name if len(active) == 1 else f"{name} {direction}")
            results.extend(_direction(phase, entry[direction], cpu))
    return results


def _check_direction(stats: dict[str, Any], where: str, source: str, line: int) -> None:
    """Refuse what no run reports: NaN, infinite, negative or absurd figures, and I/O done in
    no time (no rate can come from it)."""
    for key, ceiling in _CEILINGS.items():
        value = stats.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue  # figures fio did not write are missing, not refused
        if not 0 <= value <= ceiling:
            raise ImportFormatError(
                source, line, f"{where} {key}: {value:g} is out of range (0 to {ceiling:g})"
            )
    if _io_bytes(stats) > 0 and stats.get("runtime") == 0:
        raise ImportFormatError(source, line, f"{where} runtime: 0 ms with I/O done")


def _io_bytes(stats: Any) -> float:
    if not isinstance(stats, dict):
        return 0
    value = stats.get("io_bytes", stats.get("io_kbytes"))
    return float(value) if isinstance(value, int | float) else 0


def _cpu(entry: dict[str, Any]) -> float | None:
    usr, sys = entry.get("usr_cpu"), entry.get("sys_cpu")
    if isinstance(usr, int | float) and isinstance(sys, int | float):
        return float(usr) + float(sys)
    return None


def _direction(phase: str, stats: dict[str, Any], cpu: float | None) -> list[ResultValue]:
    bw_bytes = stats.get("bw_bytes")
    if not isinstance(bw_bytes, int | float) and isinstance(stats.get("bw"), int | float):
        bw_bytes = stats["bw"] * 1024  # fio before 3.0: `bw` only, in KiB/s
    iops = stats.get("iops")
    p50, p99 = _percentiles_us(stats)
    return [
        ResultValue(phase, "throughput", "MB/s", _num(bw_bytes, 1e6)),
        ResultValue(phase, "iops", "IOPS", _num(iops, 1)),
        ResultValue(phase, "latency_p50", "us", p50),
        ResultValue(phase, "latency_p99", "us", p99),
        ResultValue(phase, "cpu", "%", cpu),
    ]


def _num(value: Any, divisor: float) -> float | None:
    return float(value) / divisor if isinstance(value, int | float) else None


def _percentiles_us(stats: dict[str, Any]) -> tuple[float | None, float | None]:
    """Completion latency percentiles; fio 2.x wrote `clat` in microseconds."""
    clat, divisor = stats.get("clat_ns"), 1000
    if not isinstance(clat, dict):
        clat, divisor = stats.get("clat"), 1
    points = clat.get("percentile") if isinstance(clat, dict) else None
    if not isinstance(points, dict):
        return None, None
    return _num(points.get("50.000000"), divisor), _num(points.get("99.000000"), divisor)

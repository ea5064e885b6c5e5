"""fio job entries as figures: per job and direction with I/O, under the parser's names.

Phase = the job name, plus " read"/" write"/" trim" when the job did more than one or when
its `rw` is not known (the direction is then all that tells its figures apart); metrics as
the measured runs use them (`PhaseResult.values`). `--output-format=json+` adds latency
histograms (`bins`); they are kept as fio gave them, never turned into other figures. A
figure of another type than fio writes (`"sys_cpu": "abc"`) is missing and named in `Unread`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from stripewise.fio.latency import PERCENTILE_KEYS, clat_key
from stripewise.fio.report import DIRECTIONS
from stripewise.model.imported_run import ImportFormatError, clip, digits
from stripewise.model.run import ResultValue

# fio 3.x json+ histograms, per direction: completion, total and submission latency (ns).
HISTOGRAM_KINDS = ("clat_ns", "lat_ns", "slat_ns")
# A direction's figures, each at most what any run can report: an exbibyte moved, a petabyte
# per second, a trillion IOPS, a year of runtime in ms.
CPU_CEILING_PCT = 1e6  # of one CPU: the importers' ceiling for a CPU figure (docs/importing.md)
_CEILINGS = {
    "io_bytes": 2**60,
    "io_kbytes": 2**50,
    "bw_bytes": 1e15,
    "bw": 1e12,
    "iops": 1e12,
    "runtime": 3.2e10,
}


# Lines searched for a figure's own line, then the document's is named: one search per run,
# and a document may hold many clients' runs.
_MOST_SCANNED = 10_000


class Unread:
    """Figures present but not numbers, as (where, value): missing, and said in one warning
    naming the line of the first, found in its document: lines `start` to `end` of `lines`."""

    def __init__(self, lines: Sequence[str] = (), start: int = 1, end: int = 0) -> None:
        self.found: list[tuple[str, Any]] = []
        self.lines, self.start, self.end = lines, start, end

    def add(self, where: str, value: Any) -> None:
        self.found.append((where, value))

    def __bool__(self) -> bool:
        return bool(self.found)

    def warning(self, source: str, line: int) -> str:
        (where, value), rest = self.found[0], self.found[1:]
        more = ""
        if rest:
            listed = "; ".join(f"{w} {_shown(v)}" for w, v in rest[:3])
            more = f" (and {len(rest)} more: {listed}{'; ...' if len(rest) > 3 else ''})"
        return (
            f"{source} line {self._line_of(where, value) or line}: {where} is {_shown(value)}, "
            f"not a number{more}; read as missing figures"
        )

    def _line_of(self, where: str, value: Any) -> int | None:
        """The first line holding the figure's key and value, as fio lays them out."""
        if isinstance(value, dict | list):
            return None
        key, shown = f'"{where.rsplit(" ", 1)[-1]}"', json.dumps(value, ensure_ascii=False)
        last = min(self.end, len(self.lines), self.start + _MOST_SCANNED)
        for number in range(self.start, last + 1):
            if key in self.lines[number - 1] and shown in self.lines[number - 1]:
                return number
        return None


def _shown(value: Any) -> str:
    return clip(repr(value), 40)


def instance_names(entries: list[dict[str, Any]]) -> list[str]:
    """Each entry's job name; clones of one job (numjobs without group_reporting) get
    `name#1`, `name#2`..."""
    counts = Counter(str(e.get("jobname")) for e in entries)
    seen: Counter[str] = Counter()
    names = []
    for entry in entries:
        name = str(entry.get("jobname"))
        if counts[name] > 1:
            seen[name] += 1
            name = f"{name}#{seen[name]}"
        names.append(name)
    return names


def job_results(
    entries: list[dict[str, Any]],
    source: str,
    line: int,
    rw_unknown: Iterable[str] = (),
    unread: Unread | None = None,
) -> list[ResultValue]:
    """Each job's figures; jobs named in `rw_unknown` get the direction in every phase;
    figures that are no numbers go to `unread`."""
    unknown = set(rw_unknown)
    results: list[ResultValue] = []
    for name, entry in zip(instance_names(entries), entries, strict=True):
        for direction in DIRECTIONS:
            if isinstance(stats := entry.get(direction), dict):
                check_direction(stats, f"{name} {direction}", source, line)
                moved = stats.get("io_bytes", stats.get("io_kbytes"))
                num(moved, 1, f"job {name} {direction} io_bytes", unread)
            elif stats is not None and unread is not None:  # fio writes an object: missing
                unread.add(f"job {name} {direction}", stats)
        check_cpu(entry, f"{name}", source, line)
        active = active_directions([entry])
        cpu = _cpu(entry, f"job {name}", unread)
        alone = len(active) == 1 and str(entry.get("jobname")) not in unknown
        for direction in active:
            phase = clip(name if alone else f"{name} {direction}")
            where = f"job {name} {direction}"
            results.extend(_direction(phase, entry[direction], cpu, where, unread))
    return results


def active_directions(entries: Iterable[dict[str, Any]]) -> list[str]:
    """Directions in which any of the entries moved data."""
    listed = list(entries)
    return [d for d in DIRECTIONS if any(io_bytes(e.get(d)) > 0 for e in listed)]


def check_direction(stats: dict[str, Any], where: str, source: str, line: int) -> None:
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
    if io_bytes(stats) > 0 and stats.get("runtime") == 0:
        raise ImportFormatError(source, line, f"{where} runtime: 0 ms with I/O done")


def check_cpu(entry: dict[str, Any], where: str, source: str, line: int) -> None:
    """A job's user and system CPU % each in range: their sum alone could hide a negative."""
    for key in ("usr_cpu", "sys_cpu"):
        value = entry.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue  # no number: missing, not refused
        if not 0 <= value <= CPU_CEILING_PCT:
            shown = f"{value:g}" if isinstance(value, float) or abs(value) < 10**15 else "too large"
            said = f"{where} {key}: {shown} is out of range (0 to {CPU_CEILING_PCT:g})"
            raise ImportFormatError(source, line, said)


def io_bytes(stats: Any) -> float:
    if not isinstance(stats, dict):
        return 0
    value = stats.get("io_bytes", stats.get("io_kbytes"))
    return float(value) if isinstance(value, int | float) else 0


def bandwidth_bytes(
    stats: dict[str, Any], where: str = "", unread: Unread | None = None
) -> float | None:
    """Bytes per second; fio before 3.0 wrote `bw` only, in KiB/s."""
    if stats.get("bw_bytes") is not None:
        return num(stats["bw_bytes"], 1, f"{where} bw_bytes", unread)
    bw = num(stats.get("bw"), 1, f"{where} bw", unread)
    return None if bw is None else bw * 1024


def iops(stats: dict[str, Any], where: str = "", unread: Unread | None = None) -> float | None:
    return num(stats.get("iops"), 1, f"{where} iops", unread)


def _cpu(entry: dict[str, Any], where: str, unread: Unread | None) -> float | None:
    usr = num(entry.get("usr_cpu"), 1, f"{where} usr_cpu", unread)
    sys = num(entry.get("sys_cpu"), 1, f"{where} sys_cpu", unread)
    return None if usr is None or sys is None else usr + sys


def _direction(
    phase: str, stats: dict[str, Any], cpu: float | None, where: str, unread: Unread | None
) -> list[ResultValue]:
    p50, p99 = percentiles_us(stats, where, unread)
    return [
        ResultValue(phase, "throughput", "MB/s", num(bandwidth_bytes(stats, where, unread), 1e6)),
        ResultValue(phase, "iops", "IOPS", iops(stats, where, unread)),
        ResultValue(phase, "latency_p50", "us", p50),
        ResultValue(phase, "latency_p99", "us", p99),
        ResultValue(phase, "cpu", "%", cpu),
    ]


def num(value: Any, divisor: float, where: str = "", unread: Unread | None = None) -> float | None:
    """A figure fio wrote, divided; None when it wrote none (null or absent) or, named in
    `unread`, something else than a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        if value is not None and unread is not None:
            unread.add(where, value)
        return None
    return float(value) / divisor


def percentiles_us(
    stats: dict[str, Any], where: str = "", unread: Unread | None = None
) -> tuple[float | None, float | None]:
    """Completion latency percentiles (`fio.latency`); fio 2.x wrote `clat` in microseconds."""
    key, unit_ns = clat_key(stats)
    divisor = 1000 / unit_ns
    clat = stats.get(key)
    points = clat.get("percentile") if isinstance(clat, dict) else clat
    if not isinstance(points, dict):
        if points is not None and unread is not None:  # fio wrote no percentiles: missing
            unread.add(f"{where} {key}", points)
        return None, None
    p50, p99 = (
        num(points.get(p), divisor, f"{where} {key} percentile {p}", unread)
        for p in PERCENTILE_KEYS
    )
    return p50, p99


def histograms(entries: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, list[list[int]]]]]:
    """json+ latency histograms: job -> direction -> kind -> [[latency ns, I/Os], ...] in
    increasing latency. Pairs rather than fio's {"ns": count} object so the ns stay numbers
    and a comparison of contexts sees one value per histogram, not one per bucket."""
    found: dict[str, dict[str, dict[str, list[list[int]]]]] = {}
    for name, entry in zip(instance_names(entries), entries, strict=True):
        for direction in DIRECTIONS:
            stats = entry.get(direction)
            if not isinstance(stats, dict):
                continue
            for kind in HISTOGRAM_KINDS:
                pairs = _bins(stats.get(kind))
                if pairs:
                    found.setdefault(name, {}).setdefault(direction, {})[kind] = pairs
    return found


def _bins(latency: Any) -> list[list[int]]:
    """fio 3.x `bins`: latency in ns (as a string key) -> I/Os; anything else is left out
    (fio 2.x's json+ numbered its buckets instead, which are no latencies)."""
    bins = latency.get("bins") if isinstance(latency, dict) else None
    if not isinstance(bins, dict):
        return []
    pairs = []
    for key, count in bins.items():
        if not digits(str(key)) or isinstance(count, bool) or not isinstance(count, int):
            continue
        if count >= 0:
            pairs.append([int(key), count])
    return sorted(pairs)

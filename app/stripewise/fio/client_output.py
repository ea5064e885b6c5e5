"""What one `fio --client` process prints: its live ETA lines and its final terse lines.

Found by experiment with fio 3.33 (docs/protocol.md, "Group runs"): in client mode fio keeps every
`--status-interval` report until the end (JSON and terse alike), and prints no ETA line at all
when asked for JSON (alone or with terse), so the results are terse and the only live figures are
the ETA lines (`--eta=always --eta-newline=1`, one per `--eta-interval`), e.g.
`Jobs: 2 (f=2): [_(2),R(2),P(2)][60.0%][r=205M][r=200 IOPS][eta 00m:02s]`. Their rates are
KiB/s written with decimal prefixes (`M` = 1000 KiB/s; checked against fio's own final
figures) to three significant digits: live rates are within 0.5 %. Results come from the
final terse v3 lines (one per job, exact KiB counts and runtimes), never from the ETA.
The state field lists every job: `_` finished, so finished jobs / streams = the section
running now (sections run one after the other).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stripewise.fio.latency import terse_points

# No field holds a bracket: a `[` that opens none of them is passed over at the next bracket,
# so a line of `[`s costs one scan, not one per `[` (a remote fio's line is untrusted).
_ETA = re.compile(
    r"\[(?P<states>[^\[\]]*)\]\[(?P<pct>[-.\d]+)%\]"
    r"\[(?P<rates>[^\[\]]*)\]\[(?P<iops>[^\[\]]*) IOPS\]"
)
_STATE_RUN = re.compile(r"(.)\((\d+)\)|(.)")
_FIGURE = re.compile(r"([rwt])=([\d.]+)([A-Za-z]*)")
_KIB_PREFIX = {"": 1.0, "k": 1.0, "K": 1.0, "M": 1e3, "G": 1e6, "T": 1e9}  # x KiB/s
_COUNT_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
TERSE_VERSION = 3
# terse v3 fields, 0-based (fio HOWTO "Terse output"): read block from 5, write from 46
_READ, _WRITE = 5, 46
_IO_KIB, _BW_KIB_S, _RUNTIME_MS, _CLAT_PCT = 0, 1, 3, 12  # offsets in a direction's block
_CPU_USR, _CPU_SYS = 87, 88


@dataclass(frozen=True)
class LiveRates:
    """One ETA line: decimal MB/s and IOPS per direction, jobs finished, progress 0-1."""

    read_mb_s: float
    write_mb_s: float
    read_iops: float
    write_iops: float
    finished_jobs: int
    progress: float | None


def parse_eta(line: str) -> LiveRates | None:
    """An ETA line's figures; None for lines without them (`Jobs: 0 (f=0)`, start-up)."""
    found = _ETA.search(line)
    if found is None:
        return None
    finished = 0
    for run in _STATE_RUN.finditer(found["states"]):
        state, count = (run[1], int(run[2])) if run[1] else (run[3], 1)
        if state == "_":
            finished += count
    # a unit fio may add later is not guessed at: the figure is left out (never off by 1000x)
    rates = {
        d: v * _KIB_PREFIX[u] * 1024 / 1e6
        for d, v, u in _figures(found["rates"])
        if u in _KIB_PREFIX
    }
    iops = {d: v * _COUNT_PREFIX[u] for d, v, u in _figures(found["iops"]) if u in _COUNT_PREFIX}
    try:
        progress: float | None = min(1.0, float(found["pct"]) / 100)
    except ValueError:
        progress = None  # fio prints -.-% when it cannot tell
    return LiveRates(
        rates.get("r", 0.0), rates.get("w", 0.0), iops.get("r", 0.0), iops.get("w", 0.0),
        finished, progress,
    )  # fmt: skip


def _figures(text: str) -> list[tuple[str, float, str]]:
    return [(m[1], float(m[2]), m[3]) for m in _FIGURE.finditer(text)]


@dataclass(frozen=True)
class JobFigures:
    """One job (one stream of one section) from its terse line. Bytes are KiB x 1024 (terse
    counts whole KiB; blocks are at least 512 B, so at most 512 B per job are lost)."""

    section: str
    error: int
    read_bytes: int
    write_bytes: int
    read_runtime_ms: int
    write_runtime_ms: int
    read_bw_kib_s: int  # fio's own bandwidth figure: a cross-check (bench.group_drive)
    write_bw_kib_s: int
    # completion latency points per direction, (microseconds, percent) in increasing latency
    read_clat: tuple[tuple[float, float], ...]
    write_clat: tuple[tuple[float, float], ...]
    cpu_pct: float | None


def parse_terse(text: str) -> list[JobFigures]:
    """Every job line of a terse v3 output, in order; the "All clients" line and anything
    that is not a v3 line (fio's own messages) are skipped."""
    jobs = []
    for line in text.splitlines():
        fields = line.split(";")
        if len(fields) < _CPU_SYS + 1 or fields[0] != str(TERSE_VERSION):
            continue
        if fields[2] == "All clients":
            continue
        try:
            jobs.append(_job(fields))
        except (ValueError, IndexError):
            continue  # a line cut short by a dying client: not a result
    return jobs


def _job(fields: list[str]) -> JobFigures:
    def whole(index: int) -> int:
        return int(fields[index])

    usr, sys_ = float(fields[_CPU_USR].rstrip("%")), float(fields[_CPU_SYS].rstrip("%"))
    return JobFigures(
        section=fields[2],
        error=whole(4),
        read_bytes=whole(_READ + _IO_KIB) * 1024,
        write_bytes=whole(_WRITE + _IO_KIB) * 1024,
        read_runtime_ms=whole(_READ + _RUNTIME_MS),
        write_runtime_ms=whole(_WRITE + _RUNTIME_MS),
        read_bw_kib_s=whole(_READ + _BW_KIB_S),
        write_bw_kib_s=whole(_WRITE + _BW_KIB_S),
        read_clat=terse_points(fields[_READ + _CLAT_PCT : _READ + _CLAT_PCT + 20]),
        write_clat=terse_points(fields[_WRITE + _CLAT_PCT : _WRITE + _CLAT_PCT + 20]),
        cpu_pct=usr + sys_,
    )

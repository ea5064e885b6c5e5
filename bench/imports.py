"""bonnie++ CSV imports of growing size: parsing alone, and the whole `stripewise import`.

Each CSV line is a run. The files repeat the two recorded bonnie++ 2.00a lines of
tests/fixtures/imports/bonnie200a_direct_x2_files.csv, each with a seed of its own (so no two
lines are the same), to 1,000, 5,000, 20,000 and 100,000 lines (22 MB) and to 60 MiB (under
the 64 MiB cap). Each stage runs in a process of its own that reports its CPU time and peak
RSS (VmHWM; with its children's: a large import parses in a second process), and an import
the largest size its history's write-ahead log reached:
`python -m bench.imports parse FILE` parses the file as an import does (run by run);
`python -m bench.imports import FILE URL` runs `stripewise --db URL import FILE --json` in
process into a new SQLite history, its output thrown away. Figures only, never pass/fail:
from 5,000 to 20,000 lines time and memory grow 4 times when they grow linearly (a process's
start, about a second, aside).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parents[1] / "tests/fixtures/imports/bonnie200a_direct_x2_files.csv"
LINES = (1_000, 5_000, 20_000)
MANY_RUNS = 100_000  # issue 36's figure: 22 MB, under 60 s and 500 MB resident
BIG_BYTES = 60 * 2**20
SEED = "1795358228"  # the recorded lines' seed field, replaced by one per line


def write_csv(path: Path, lines: int | None = None, size_bytes: int | None = None) -> int:
    """A CSV of `lines` lines, or of as many as fit in `size_bytes`; returns the lines."""
    recorded = [
        line for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line[:1].isdigit()
    ]
    written = size = 0
    with path.open("w", encoding="utf-8") as out:
        while lines is None or written < lines:
            line = recorded[written % len(recorded)].replace(SEED, str(int(SEED) + written))
            if size_bytes is not None and size + len(line) + 1 > size_bytes:
                break
            out.write(line + "\n")
            size += len(line) + 1
            written += 1
    return written


def run_measured(
    argv: list[str], timeout_s: float, report: Path, wal: Path | None = None
) -> dict[str, Any]:
    """Run `argv`, a `python -m bench.imports` stage that ends its output (into `report`)
    with a JSON object of its CPU seconds and peak RSS (its own VmHWM: the ru_maxrss of a
    child starts at its parent's size); the wall seconds are measured here, and so is the
    largest size the history's write-ahead log `wal` reached (looked at every 50 ms: SQLite
    deletes it when the command closes the history)."""
    began = time.perf_counter()
    wal_bytes = 0
    with report.open("wb") as out:
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL)
        while child.poll() is None and time.perf_counter() - began < timeout_s:
            with contextlib.suppress(OSError):
                wal_bytes = max(wal_bytes, wal.stat().st_size) if wal else 0
            time.sleep(0.05)
        if child.poll() is None:
            child.kill()
        done = child.wait()
    result: dict[str, Any] = {"wall_s": time.perf_counter() - began, "ok": False}
    if wal is not None:
        result["wal_mib"] = wal_bytes / 2**20
    lines = report.read_text(errors="replace").strip().splitlines()
    if done == 0 and lines and lines[-1].startswith("{"):
        result |= json.loads(lines[-1]) | {"ok": True}
    return result


def _own_usage() -> dict[str, float]:
    """This process's CPU seconds and peak RSS in MiB (VmHWM), with those of the children it
    waited for (a large import parses in a second process): their CPU added, and the largest
    one's peak added to this one's, as if both peaked at once (an upper bound: a child's
    ru_maxrss starts at the size its parent had when it started it)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    status = Path("/proc/self/status").read_text()
    peak_kib = next(int(line.split()[1]) for line in status.splitlines() if line[:6] == "VmHWM:")
    cpu_s = usage.ru_utime + usage.ru_stime + children.ru_utime + children.ru_stime
    return {"cpu_s": cpu_s, "peak_mib": (peak_kib + children.ru_maxrss) / 1024}


def measure_file(path: Path, scratch: Path, *, command: bool, timeout_s: float) -> dict[str, Any]:
    """Parsing `path` alone, then (if `command`) the whole import into a fresh history."""
    stage = [sys.executable, "-m", "bench.imports"]
    found = {"parse": run_measured([*stage, "parse", str(path)], timeout_s, scratch / "out")}
    if command:
        db = scratch / f"{path.stem}.db"
        db.unlink(missing_ok=True)
        argv = [*stage, "import", str(path), f"sqlite:///{db}"]
        found["import"] = run_measured(
            argv, timeout_s, scratch / "out", wal=db.with_name(db.name + "-wal")
        )
        db.unlink(missing_ok=True)
    (scratch / "out").unlink(missing_ok=True)
    return found


def measure(scratch: str, *, big_command: bool = True) -> list[tuple[str, float, str]]:
    """(name, value, unit) rows: time and peak memory per size (a process's CPU includes its
    start, about a second for the whole import), and their growth from 5,000 to 20,000 runs."""
    where = Path(scratch)
    cases: list[tuple[str, Path]] = []
    for lines in LINES:
        path = where / f"bonnie_{lines}.csv"
        write_csv(path, lines=lines)
        cases.append((f"{lines:,} runs", path))
    many = where / f"bonnie_{MANY_RUNS}.csv"
    write_csv(many, lines=MANY_RUNS)
    cases.append((f"{MANY_RUNS:,} runs ({many.stat().st_size / 1e6:.1f} MB)", many))
    big = where / "bonnie_60mib.csv"
    cases.append((f"{BIG_BYTES >> 20} MiB, {write_csv(big, size_bytes=BIG_BYTES):,} runs", big))
    rows: list[tuple[str, float, str]] = []
    measured: dict[str, dict[str, Any]] = {}
    for label, path in cases:
        command = big_command or path != big
        found = measure_file(path, where, command=command, timeout_s=3600)
        measured[label] = found
        for stage, result in found.items():
            what = "parse" if stage == "parse" else "whole import"
            failed = "" if result["ok"] else " (FAILED or timed out)"
            rows.append((f"bonnie++ {label}: {what} time{failed}", result["wall_s"], "s"))
            rows.append((f"bonnie++ {label}: {what} CPU", result["cpu_s"], "s"))
            rows.append((f"bonnie++ {label}: {what} peak RSS", result["peak_mib"], "MiB"))
            if "wal_mib" in result:
                rows.append((f"bonnie++ {label}: {what} WAL peak", result["wal_mib"], "MiB"))
    small, large = (measured[f"{lines:,} runs"] for lines in LINES[-2:])
    for stage in small:
        for key, what in (("cpu_s", "CPU"), ("peak_mib", "peak RSS")):
            ratio = large[stage][key] / small[stage][key]
            growth = f"{LINES[-1]:,} / {LINES[-2]:,} runs"
            rows.append((f"bonnie++ {stage} {what}: {growth}", ratio, "ratio"))
    return rows


def _stage(stage: str, path: str, db_url: str = "") -> None:
    """`parse`: parse the file in this process; `import`: the command `stripewise --db URL
    import FILE --json` in this process, its output thrown away. Then the usage as JSON."""
    if stage == "parse":  # as the import parses: the runs taken one at a time, let go
        from stripewise.importers import ParsedFile

        parsed = ParsedFile(Path(path).read_text(encoding="utf-8"), Path(path).name)
        for _run in parsed.runs():
            pass
    else:
        from stripewise.cli import main

        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            if main(["--db", db_url, "import", path, "--json"]) != 0:
                raise SystemExit(1)
    print(json.dumps({"bench": stage, **_own_usage()}))


if __name__ == "__main__":
    if sys.argv[1:2] in (["parse"], ["import"]):
        _stage(*sys.argv[1:])
    else:  # python -m bench.imports SCRATCH: the figures alone
        for name, value, unit in measure(sys.argv[1]):
            print(f"{name:<60} {value:>10.2f} {unit}")

"""bonnie++ CSV imports of growing size: parsing alone, and the whole `stripewise import`.

Each CSV line is a run. The files repeat the two recorded bonnie++ 2.00a lines of
tests/fixtures/imports/bonnie200a_direct_x2_files.csv, each with a seed of its own (so no two
lines are the same), to 1,000, 5,000 and 20,000 lines and to 60 MiB (under the 64 MiB cap).
Each measurement runs in a process of its own, so its peak memory (RSS) is its own:
`python -m bench.imports parse FILE` parses in process; the whole import is the real command
into a new SQLite history, its JSON output thrown away. Figures only, never pass/fail: the
growth from 5,000 to 20,000 lines is 4 when time and memory grow linearly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parents[1] / "tests/fixtures/imports/bonnie200a_direct_x2_files.csv"
LINES = (1_000, 5_000, 20_000)
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


def run_measured(argv: list[str], timeout_s: float, report: Path | None = None) -> dict[str, Any]:
    """Run `argv` (its output into `report`, else discarded): wall and CPU seconds and peak
    RSS (MiB) of that process alone (wait4), and the JSON object its report ends with."""
    began = time.perf_counter()
    with (report or Path(os.devnull)).open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL)
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - began > timeout_s:
                process.kill()
            time.sleep(0.05)
    process.returncode = os.waitstatus_to_exitcode(status)
    result: dict[str, Any] = {
        "wall_s": time.perf_counter() - began,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mib": usage.ru_maxrss / 1024,
        "ok": process.returncode == 0,
    }
    if report is not None and result["ok"]:
        result |= json.loads(report.read_text().strip().splitlines()[-1])
    return result


def _stripewise() -> list[str]:
    script = Path(sys.executable).parent / "stripewise"
    return [str(script)] if script.exists() else [sys.executable, "-m", "stripewise"]


def measure_file(path: Path, scratch: Path, *, command: bool, timeout_s: float) -> dict[str, Any]:
    """Parsing `path` alone, then (if `command`) the whole import into a fresh history."""
    parse = [sys.executable, "-m", "bench.imports", "parse", str(path)]
    found = {"parse": run_measured(parse, timeout_s, scratch / "parse.json")}
    if command:
        db = scratch / f"{path.stem}.db"
        db.unlink(missing_ok=True)
        argv = [*_stripewise(), "--db", f"sqlite:///{db}", "import", str(path), "--json"]
        found["import"] = run_measured(argv, timeout_s)
        db.unlink(missing_ok=True)
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
    small, large = (measured[f"{lines:,} runs"] for lines in LINES[-2:])
    for stage in small:
        for key, what in (("cpu_s", "CPU"), ("peak_mib", "peak RSS")):
            ratio = large[stage][key] / small[stage][key]
            growth = f"{LINES[-1]:,} / {LINES[-2]:,} runs"
            rows.append((f"bonnie++ {stage} {what}: {growth}", ratio, "ratio"))
    return rows


def _parse_in_process(path: str) -> None:
    from stripewise.importers import parse

    began, cpu = time.perf_counter(), time.process_time()
    runs = parse(Path(path).read_text(encoding="utf-8"), Path(path).name)
    print(json.dumps({"bench": "parse", "runs": len(runs), "cpu_in_s": time.process_time() - cpu,
                      "wall_in_s": time.perf_counter() - began}))  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1:2] == ["parse"]:
        _parse_in_process(sys.argv[2])
    else:  # python -m bench.imports SCRATCH: the figures alone
        for name, value, unit in measure(sys.argv[1]):
            print(f"{name:<60} {value:>10.2f} {unit}")

"""Reading `udevadm info --export-db` dumps of growing size, one process per dump.

Run by `python -m bench --only udev-dump` as `python -m bench.udev_dump FILE RUNS`; prints one
JSON object: the milliseconds of each run split into reading the file, parsing it into
devices (DumpSource) and building the map, the CPU milliseconds of parsing and of the whole
(a loaded machine stretches the others), and the process's peak memory above what it held
before the first byte was read (MiB, from VmHWM: the high-water mark, not a sample; not
ru_maxrss, which a child starts with its parent's size at the fork).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DISKS = (192, 768, 3072, 12288)  # dumps of about 1, 4, 16 and 64 MiB
TIMEOUT_S = 900


def measure(form: str, scratch: str, runs: int) -> dict[int, dict[str, Any]]:
    """Per disk count: read/parse/build milliseconds, their sum, peak MiB and the dump's
    size; a dump whose process outlasts TIMEOUT_S is left out (and said on stderr)."""
    from tests.fixtures.udev_growth import as_json, export_db

    results = {}
    for disks in DISKS:
        path = Path(scratch) / f"export-db-{disks}.{form}"
        text = export_db(disks)
        path.write_text(as_json(text) if form == "json" else text)
        del text
        argv = [sys.executable, "-m", "bench.udev_dump", str(path), str(runs)]
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=True
            )
        except subprocess.TimeoutExpired:
            print(f"udev {form} dump of {disks} disks: over {TIMEOUT_S} s", file=sys.stderr)
            continue
        finally:
            mib = path.stat().st_size / 2**20
            path.unlink()
        result = json.loads(done.stdout.strip().splitlines()[-1])
        phases = zip(result["read_ms"], result["parse_ms"], result["build_ms"], strict=True)
        result["total_ms"] = [sum(phase) for phase in phases]
        result["mib"] = mib
        results[disks] = result
        print(f"udev {form} dump, {mib:.0f} MiB: {result}", file=sys.stderr, flush=True)
    return results


def _peak_mib() -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def main() -> int:
    path, runs = Path(sys.argv[1]), int(sys.argv[2])
    from stripewise.inventory.build import build_inventory
    from stripewise.inventory.udevdump import DumpSource, decode_dump

    before = _peak_mib()
    read_ms, parse_ms, build_ms, parse_cpu_ms, total_cpu_ms, disks = [], [], [], [], [], 0
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        text, _note = decode_dump(path.read_bytes(), str(path))
        read, read_cpu = time.perf_counter(), time.process_time()
        source = DumpSource(text, str(path))
        del text
        parsed, parsed_cpu = time.perf_counter(), time.process_time()
        inventory = build_inventory(source)
        built, built_cpu = time.perf_counter(), time.process_time()
        del source
        read_ms.append((read - started) * 1000)
        parse_ms.append((parsed - read) * 1000)
        build_ms.append((built - parsed) * 1000)
        parse_cpu_ms.append((parsed_cpu - read_cpu) * 1000)
        total_cpu_ms.append((built_cpu - started_cpu) * 1000)
        disks = len(inventory.disks)
        del inventory
    result = {
        "read_ms": read_ms,
        "parse_ms": parse_ms,
        "build_ms": build_ms,
        "parse_cpu_ms": parse_cpu_ms,  # this process's CPU only: what the 64/16 ratios use
        "total_cpu_ms": total_cpu_ms,
        "peak_mib": _peak_mib() - before,
        "disks": disks,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

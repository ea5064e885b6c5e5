"""What `stripewise bench` prints: one JSON event per line, or live progress and a table.

Output never costs a run its record: a terminal that hung up (SIGHUP) or a closed pipe only
stops the printing.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import IO, Any

from stripewise.model.bench import BONNIE_NAMES, Phase

BAR_WIDTH = 28


def emit(message: dict[str, Any], *, as_json: bool) -> None:
    """One event: a JSON line, or what a person reads (nothing for a sample off a terminal)."""
    if as_json:
        say(json.dumps(message) + "\n", sys.stdout)
    else:
        say(_text(message, sys.stdout.isatty()), sys.stdout)


def say(text: str, stream: IO[str]) -> None:
    """Write and flush. A terminal that hung up (SIGHUP) or a closed pipe gets nothing more,
    but must not cost the run its record: os.devnull takes its place, as Python's docs advise."""
    if not text:
        return
    try:
        stream.write(text)
        stream.flush()
    except OSError:
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)


def _text(message: dict[str, Any], interactive: bool) -> str:
    kind = message["event"]
    if kind == "phase_started":
        return f"{message['name']} (repetition {message['repetition']})\n"
    if kind == "sample" and interactive:
        done = message.get("progress") or 0.0
        bar = "#" * int(done * BAR_WIDTH)
        rate = (message.get("engine_read_mb_s") or 0) + (message.get("engine_write_mb_s") or 0)
        eta = message.get("eta_s")
        eta_text = f" ETA {eta:,.0f} s" if eta is not None else ""
        return f"\r  [{bar:<{BAR_WIDTH}}] {done:4.0%} {rate:9,.1f} MB/s{eta_text}   "
    if kind == "phase_result":
        status = f"  failed: {message['error']}" if message.get("error") else ""
        return (
            ("\r" + " " * 70 + "\r" if interactive else "")
            + f"  {message['mb_s']:,.1f} MB/s, {message['iops']:,.0f} IOPS in "
            f"{message['elapsed_s']:.1f} s{status}\n"
        )
    if kind in ("warning", "error"):
        return f"{kind}: {message['message']}\n"
    if kind in ("run_result", "helper_lost"):
        return format_results(message)
    return ""


def format_results(result: dict[str, Any]) -> str:
    lines = [
        f"\nRun {result['status']} ({result['engine']} {result['engine_version']}, "
        f"{result['elapsed_s']:.1f} s)",
        f"{'Phase':<28} {'MB/s median':>11} {'min .. max':>19} {'IOPS':>9} "
        f"{'p99 us':>9} {'CPU %':>6} {'KB/s per CPU%':>14}",
    ]
    for phase in result["results"]:
        mb = phase.get("mb_s") or {}
        iops = phase.get("iops") or {}
        spread = f"{mb.get('low', 0):,.1f} .. {mb.get('high', 0):,.1f}" if mb else "-"
        cpu = phase.get("cpu_pct")
        efficiency = phase.get("kb_s_per_cpu_pct")
        p99 = phase.get("lat_p99_us")
        lines.append(
            f"{BONNIE_NAMES[Phase(phase['phase'])]:<28} {mb.get('median', 0):>11,.1f} "
            f"{spread:>19} {iops.get('median', 0):>9,.0f} "
            f"{f'{p99:,.0f}' if p99 else '-':>9} {f'{cpu:.0f}' if cpu else '-':>6} "
            f"{f'{efficiency:,.0f}' if efficiency else '-':>14}"
        )
    return "\n".join(lines) + "\n"

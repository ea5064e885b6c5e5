"""What `stripewise bench` prints: one JSON event per line, or live progress and a table.

Output never costs a run its record: a terminal that hung up (SIGHUP) or a closed pipe only
stops the printing.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import IO

from stripewise.model.bench import BONNIE_NAMES
from stripewise.model.guards import describe, guard
from stripewise.model.phase_stop import CANCELLED, stopped
from stripewise.model.run import RunStatus
from stripewise.model.steady_state import Window, round_words
from stripewise.model.units import microseconds_text
from stripewise.model.wording import count_noun
from stripewise.protocol.events import (
    Event,
    PhaseFinished,
    PhaseStarted,
    RunError,
    RunResult,
    RunWarning,
    Sample,
    SteadyRound,
    event_to_json,
)
from stripewise.protocol.group import GroupOutcome

BAR_WIDTH = 28
TOTAL_HOST = "total"  # protocol.group's name for the summed samples
CLEAR_LINE = "\r" + " " * 70 + "\r"  # a live bar's line wiped for a line of text


# a repetition that failed or was cancelled has no figures: the history keeps them missing
UNMEASURED = ("mb_s", "iops", "lat_p50_us", "lat_p99_us", "cpu_pct")


def emit(event: Event, *, as_json: bool) -> None:
    """One event: a JSON line, or what a person reads (nothing for a sample off a terminal)."""
    if as_json:
        data = event_to_json(event)
        if isinstance(event, PhaseFinished) and event.error:
            data |= dict.fromkeys(UNMEASURED)  # the keys stay; a partial figure is no result
        say(json.dumps(data) + "\n", sys.stdout)
    else:
        say(_text(event, sys.stdout.isatty()), sys.stdout)


def emit_lost(result: RunResult, samples: int, *, as_json: bool) -> None:
    """The helper went away mid-run: `helper_lost`, shaped as the run_result the client made,
    with the number of samples received."""
    if as_json:
        lost = result.to_json() | {"event": "helper_lost", "samples": samples}
        say(json.dumps(lost) + "\n", sys.stdout)
    else:
        say(format_results(result), sys.stdout)


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


def _text(event: Event, interactive: bool) -> str:
    if isinstance(event, PhaseStarted):
        return f"{event.name} (repetition {event.repetition})\n"
    if isinstance(event, Sample):
        if not interactive:
            return ""
        done = event.progress or 0.0
        bar = "#" * int(done * BAR_WIDTH)
        rate = event.engine_read_mb_s + event.engine_write_mb_s
        eta_text = f" ETA {event.eta_s:,.0f} s" if event.eta_s is not None else ""
        return f"\r  [{bar:<{BAR_WIDTH}}] {done:4.0%} {rate:9,.1f} MB/s{eta_text}   "
    if isinstance(event, PhaseFinished):
        return (CLEAR_LINE if interactive else "") + f"  {_finished(event)}\n"
    if isinstance(event, SteadyRound):  # "round 7: not steady, excursion 34 %"
        window = Window(event.figure, event.excursion_pct, event.slope_pct)
        words = round_words(event.round, window)
        return (CLEAR_LINE if interactive else "") + f"  {words}\n"
    if isinstance(event, RunWarning | RunError):
        return f"{event.EVENT}: {event.message}\n"
    if isinstance(event, RunResult):
        return format_results(event)
    return ""  # a scaling test's events: cli/bench_scaling.py says them


def _finished(event: PhaseFinished) -> str:
    """A repetition's figures, or why it has none; then its guards and stalls (indented)."""
    status = ""
    if event.flags:  # the helper's warning just before says why, with its figures
        status += f"  ! {', '.join(guard(f).title for f in event.flags)}"
    if event.error:  # what it measured before it stopped is no result: no rate shown
        line = f"{_stopped(event.error)} after {event.elapsed_s:.1f} s"
        line += "" if event.error == CANCELLED else f": {event.error}"
    else:
        line = f"{event.mb_s:,.1f} MB/s, {event.iops:,.0f} IOPS in {event.elapsed_s:.1f} s"
        if event.rounds is not None:  # the figures are the last 5 rounds' means
            settled = "steady" if event.steady else "not steady"
            line += f", {settled} after {len(event.rounds)} rounds"
    for stall in event.stalls or ():  # an interval whose p99 stood out, when it ended
        status += f"\n  stall at {stall.t_s:,.1f} s: p99 {stall.p99_us / 1000:,.1f} ms"
    return line + status


def format_results(result: RunResult) -> str:
    engine = f"{result.engine} {result.engine_version}".strip()  # version unknown: no gap
    lines = [
        f"\nRun {result.status} ({engine}, {result.elapsed_s:.1f} s)",
        f"{'Phase':<28} {'MB/s median':>11} {'min .. max':>19} {'IOPS':>9} "
        f"{'p99 us':>9} {'CPU %':>6} {'KB/s per CPU%':>14}",
    ]
    flagged: dict[str, tuple[str, ...]] = {}
    for phase in result.results:
        mb, iops = phase.mb_s, phase.iops
        name = f"{phase.name} !" if phase.flags else phase.name
        if phase.flags:
            flagged[phase.phase.value] = phase.flags
        spread = f"{mb.low:,.1f} .. {mb.high:,.1f}" if mb else "-"
        median = f"{mb.median:,.1f}" if mb else _unmeasured(phase.errors)
        cpu, efficiency, p99 = phase.cpu_pct, phase.kb_s_per_cpu_pct, phase.lat_p99_us
        lines.append(
            f"{name:<28} {median:>11} "
            f"{spread:>19} {f'{iops.median:,.0f}' if iops else '-':>9} "
            f"{microseconds_text(p99) if p99 else '-':>9} {f'{cpu:.0f}' if cpu else '-':>6} "
            f"{f'{efficiency:,.0f}' if efficiency else '-':>14}"
        )
    lines.append("p99 us: the 99th percentile of completion latency, in microseconds")
    if flagged:
        lines.append("! guards tripped (the figure is not the disks' alone):")
        for phase_name, flags in flagged.items():
            lines += [f"  {phase_name}: {line}" for line in describe(flags)]
    return "\n".join(lines) + "\n"


def _stopped(error: str) -> str:
    return stopped((error,))


def _unmeasured(errors: tuple[str, ...]) -> str:
    """What stands where a phase's MB/s would: why there is none (never a 0 not measured)."""
    return stopped(errors) or "-"


def emit_group(event: Event, *, as_json: bool) -> None:
    """A group run's event: as JSON the same lines with `host`; as text each line names its
    host, and the live bar follows the total."""
    host = getattr(event, "host", None)
    if as_json or host is None or isinstance(event, RunError):  # an error names its host
        emit(event, as_json=as_json)
    elif isinstance(event, Sample):
        if host == TOTAL_HOST and event.latency_us is None:  # a late interval is no live rate
            say(_text(event, sys.stdout.isatty()).replace("  [", "  total [", 1), sys.stdout)
    else:  # a line of its own, over the live bar when there is one
        clear = CLEAR_LINE if sys.stdout.isatty() else ""
        say(f"{clear}{host}: {_host_text(event)}", sys.stdout)


def _host_text(event: Event) -> str:
    if isinstance(event, PhaseFinished):  # named: a host's come when its client ends, long
        # after its phase_started (and a phase fio ran between two ETA lines has none)
        named = f"{BONNIE_NAMES[event.phase]} (repetition {event.repetition})"
        return f"{named}: {_finished(event)}\n"
    if isinstance(event, RunResult):
        return f"{event.status}" + (f" ({event.error})\n" if event.error else "\n")
    return _text(event, interactive=False)


def format_group(outcome: GroupOutcome) -> str:
    """Each host's results, then the total (the sum of the hosts that completed)."""
    parts = []
    for host in outcome.hosts:
        if host.result is not None:
            parts.append(f"\n{host.host}:" + format_results(host.result))
        else:
            why = (host.error or "").removeprefix(f"{host.host}: ")  # the driver names it too
            parts.append(f"\n{host.host}: {host.status}: {why}\n")
    completed = sum(h.complete for h in outcome.hosts)
    if completed == 0:  # nothing to add up: no empty table under a "Total"
        count = len(outcome.hosts)
        said = "the host did not complete" if count == 1 else f"none of the {count} hosts completed"
        parts.append(f"\nNo total: {said}\n")
        return "".join(parts)
    partial = " (partial: not every host completed)" if outcome.partial else ""
    version = next((h.result.engine_version for h in outcome.hosts if h.result), "")
    total = RunResult(
        "total", RunStatus(outcome.status), outcome.elapsed_s, "fio", version, outcome.total
    )
    parts.append(
        f"\nTotal of {completed} of {count_noun(len(outcome.hosts), 'host')}{partial}:"
        + format_results(total)
    )
    return "".join(parts)


def emit_outcome(outcome: GroupOutcome, *, as_json: bool) -> None:
    if as_json:
        say(json.dumps(outcome.to_json()) + "\n", sys.stdout)
    else:
        say(format_group(outcome), sys.stdout)

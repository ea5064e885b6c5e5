"""Who is writing a running run: so a second Stripewise never marks a live run aborted.

A run being recorded carries `context.recorder` = this process's pid and its start time in
clock ticks since boot (field 22 of /proc/PID/stat) plus the boot id. At start-up only runs of
this machine whose recorder is gone (no such pid, a reused pid, or another boot) are aborted.
"""

from __future__ import annotations

import functools
import os
from datetime import UTC, datetime
from pathlib import Path

from stripewise.model.run_context import Recorder

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
KERNEL_STAT = Path("/proc/stat")


def _start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ")"
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 overall
    except (IndexError, ValueError):
        return None


def _boot_id() -> str:
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return ""


def this_recorder() -> Recorder:
    return _recorder(os.getpid())


@functools.cache
def _recorder(pid: int) -> Recorder:
    """Read once per process (keyed by pid, so a forked child reads its own): neither its start
    time nor the boot changes while it runs."""
    return Recorder(pid=pid, start_ticks=_start_ticks(pid), boot_id=_boot_id())


def recorder_alive(recorder: Recorder | None) -> bool:
    """True when the process that recorded `recorder` still runs; a run without one (or with
    one this version cannot read) counts as gone."""
    if recorder is None or recorder.pid is None or recorder.pid <= 0:
        return False
    if recorder.boot_id != _boot_id():
        return False
    return recorder.start_ticks is not None and _start_ticks(recorder.pid) == recorder.start_ticks


def booted_at() -> datetime | None:
    """When this machine booted (/proc/stat's btime), to the second; None if unreadable."""
    try:
        lines = KERNEL_STAT.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        name, _sep, value = line.partition(" ")
        if name == "btime" and value.strip().isdigit():
            return datetime.fromtimestamp(int(value), UTC)
    return None

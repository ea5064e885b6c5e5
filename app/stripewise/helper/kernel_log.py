"""What the kernel said about a process that died of a signal: the OOM killer's line.

/dev/kmsg is read without blocking, from the start of the ring buffer, bounded in records and
bytes, keeping only records since the process started (their timestamps are microseconds on
the kernel's clock, which CLOCK_MONOTONIC follows). Where /dev/kmsg cannot be read (a helper
without root on a system with dmesg_restrict), `dmesg` is tried, its output bounded; where
that fails too the caller says so and moves on.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import subprocess

_MAX_RECORDS = 20_000
_MAX_BYTES = 4 * 2**20
_RECORD_BYTES = 8192  # more than one record holds (1 KiB of text, its prefix, its dictionary)
_DMESG_S = 5.0
_SHOWN_CHARS = 200
_UNREADABLE = "the kernel log could not be read (see dmesg for an out-of-memory kill)"
_SLACK_US = 2_000_000  # records a little before the start: clocks are read at different moments


def signal_name(number: int) -> str:
    """9 -> 'SIGKILL'; a number no signal has as 'signal 200'."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _mentions(pid: int) -> re.Pattern[str]:
    """The OOM killer's lines about the pid, and nothing else: the caller may kill their own
    fio to have the log searched, so no other line of a root-only log goes back to them."""
    # "Out of memory: Killed process 1234 (fio)", "Memory cgroup out of memory: Killed
    # process 1234 (fio)", "oom-kill:constraint=...,task=fio,pid=1234,uid=0"
    return re.compile(rf"(?:Killed process {pid} \(|^oom-kill:.*,pid={pid},)")


def _kmsg(since_us: int) -> list[str] | None:
    """Records since `since_us`, text only; None when /dev/kmsg cannot be read."""
    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    found: list[str] = []
    total = 0
    try:
        for _ in range(_MAX_RECORDS):
            try:
                record = os.read(fd, _RECORD_BYTES)
            except BlockingIOError:
                break  # the end of the buffer
            except OSError as error:
                if error.errno == errno.EPIPE:
                    continue  # overwritten while we read: the next one is there
                return found or None
            total += len(record)
            if not record or total > _MAX_BYTES:
                break
            head, _, text = record.decode(errors="replace").partition(";")
            fields = head.split(",")
            with contextlib.suppress(IndexError, ValueError):
                if int(fields[2]) >= since_us:
                    found.append(text.splitlines()[0] if text else "")
    finally:
        os.close(fd)
    return found


def _dmesg() -> list[str] | None:
    try:
        done = subprocess.run(
            ["dmesg", "--kernel", "--notime"],
            capture_output=True, timeout=_DMESG_S, check=False, stdin=subprocess.DEVNULL,
            env={"PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C"},
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout[-_MAX_BYTES:].decode(errors="replace").splitlines()


def kernel_says(pid: int, started_monotonic: float) -> str | None:
    """The OOM killer's last line about `pid` since it started, shortened; None when the log
    says nothing of it; a note when the log cannot be read."""
    lines = _kmsg(int(started_monotonic * 1e6) - _SLACK_US)
    if lines is None:
        lines = _dmesg()
    if lines is None:
        return _UNREADABLE
    pattern = _mentions(pid)
    said = [line.strip() for line in lines if pattern.search(line.strip())]
    if not said:
        return None
    killed = [line for line in said if "Killed process" in line]
    line = (killed or said)[-1]
    return line if len(line) <= _SHOWN_CHARS else line[: _SHOWN_CHARS - 3] + "..."


def killed_by(program: str, pid: int, returncode: int, started_monotonic: float) -> str:
    """'fio was killed by SIGKILL' and, when the OOM killer did it, the kernel's line."""
    text = f"{program} was killed by {signal_name(-returncode)}"
    said = kernel_says(pid, started_monotonic)
    if said is None:
        return text
    if said == _UNREADABLE:
        return f"{text}; {said}"
    return (
        f"{text}: the kernel's out-of-memory killer ended it; free memory or lower streams "
        f"x queue depth x block size (kernel: {said})"
    )

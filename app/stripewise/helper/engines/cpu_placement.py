"""Which CPU each I/O thread of a phase stays on, as fio's `cpus_allowed` can place its jobs.

A thread that sleeps in io_getevents or preadv wakes wherever the scheduler puts it; at queue
depth 1 on a fast device that is a move to the other CPU at about one I/O in eight here.
fio's few kilobytes of loop state barely notice a move. The interpreter's working set does:
on this 2-CPU VM an unplaced Python stream read 23,000-28,000 4 KiB IOPS, the same stream kept
on one CPU 35,000-40,000, against fio's 38,000-48,000. The figure is the device's either way;
placement only takes the engine's own cache misses out of it.

Threads are placed only when each can have a CPU to itself: more threads than CPUs would
stack some of them where the scheduler would have spread them.
"""

from __future__ import annotations

import os


def cpus_for(threads: int) -> list[int] | None:
    """One CPU per thread from those this process may use, highest-numbered first (CPU 0
    takes most device interrupts on many machines); None when they cannot each have one."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except OSError:
        return None
    if threads < 1 or len(allowed) < 2 or threads > len(allowed):
        return None
    return allowed[::-1][:threads]


def stay_on(cpu: int) -> bool:
    """Keep the calling thread on `cpu` (Linux applies affinity per thread); False when a
    cpuset or a hot-unplugged CPU refuses it, and the thread runs where it may."""
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        return False
    return True

"""Which CPU each I/O thread of a phase stays on, as fio's `cpus_allowed` can place its jobs.

At queue depth 1 on a fast device, an I/O's time is mostly the wake-ups around it: the loop or
driver worker woken by the submission, the thread woken by the completion. A wake-up on an
idle CPU other than the waker's costs an inter-processor interrupt, about 20 us on this 2-CPU
VM against 4 us on the waker's own. The scheduler pulls light threads such as fio's to the
waker's CPU about half the time; it left an unplaced Python stream on its previous, idle CPU
nine times in ten (perf sched), so it read 22,000-28,000 4 KiB IOPS where fio read
45,000-64,000. Kept on one CPU, the worker mostly comes to it: 33,000-40,000, and fio kept on
one CPU reads 42,000-45,000. The figure is the device's either way; placement only takes the
engine's scheduling out of it.

Threads are placed only when each can have a CPU to itself: more threads than CPUs would
stack some of them where the scheduler would have spread them. Each gets a fast CPU and, while
there are enough, a core of its own. On a NUMA machine they go to the CPUs of the node the
device's controller hangs off (fio's `numa_cpu_nodes`), when the kernel says which one that is
and that node has enough of them.
"""

from __future__ import annotations

import os

from stripewise.helper.sysfs_files import block_device_path, read_attribute

_MAX_CPU = 1 << 16  # a cpulist naming more is not one the kernel wrote


def cpus_for(
    threads: int,
    near: set[int] | None = None,
    sysfs: str = "/sys",
    allowed: set[int] | None = None,
) -> list[int] | None:
    """One CPU per thread from those this process may use (or `allowed`), `near` ones if
    enough of them; None when they cannot each have one. A core of its own for each thread
    before SMT siblings share one (a sibling gives about half a core); the fastest cores
    first (a hybrid CPU's performance cores), then the highest-numbered (CPU 0 takes most
    device interrupts on many machines)."""
    if allowed is None:
        try:
            allowed = set(os.sched_getaffinity(0))
        except OSError:
            return None
    if threads < 1 or len(allowed) < 2:  # one CPU: nowhere else to go
        return None
    if near and len(allowed & near) >= threads:
        allowed &= near
    if threads > len(allowed):
        return None
    fastest = sorted(allowed, key=lambda cpu: (-_capacity(cpu, sysfs), -cpu))
    cores_taken: set[str] = set()
    own_core: list[int] = []
    sharing: list[int] = []
    for cpu in fastest:
        core = _core(cpu, sysfs)
        (sharing if core in cores_taken else own_core).append(cpu)
        cores_taken.add(core)
    return (own_core + sharing)[:threads]


def _capacity(cpu: int, sysfs: str) -> int:
    """The kernel's relative capacity (1024 for the fastest), else the highest clock."""
    base = f"{sysfs}/devices/system/cpu/cpu{cpu}"
    for name in ("cpu_capacity", "cpufreq/cpuinfo_max_freq"):
        text = read_attribute(f"{base}/{name}")
        if text and text.isdigit():
            return int(text)
    return 0


def _core(cpu: int, sysfs: str) -> str:
    """The same text for SMT siblings of one core."""
    siblings = read_attribute(f"{sysfs}/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list")
    return siblings or str(cpu)


def parse_cpulist(text: str) -> set[int]:
    """The kernel's CPU list format ("0-3,8-11"); ValueError for anything else."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        first, _, last = part.partition("-")
        low, high = int(first), int(last or first)
        if not 0 <= low <= high < _MAX_CPU:
            raise ValueError(f"not a CPU range: {part!r}")
        cpus.update(range(low, high + 1))
    return cpus


def device_node_cpus(fd: int, sysfs: str = "/sys") -> set[int] | None:
    """The CPUs of the NUMA node of the device under `fd` (a block device, or the device a
    file's filesystem is on): the first `numa_node` up its sysfs path, its controller's.
    None when the kernel names none (one node, a virtual device such as md or dm, -1)."""
    block = block_device_path(fd, sysfs)
    if block is None:
        return None
    devices = os.path.realpath(f"{sysfs}/devices")
    where = os.path.realpath(block)
    while where.startswith(devices + "/"):
        node = read_attribute(f"{where}/numa_node")
        if node is not None:
            if not node.isdigit():
                return None  # -1: the kernel knows of one node only
            cpulist = read_attribute(f"{sysfs}/devices/system/node/node{node}/cpulist")
            try:
                return parse_cpulist(cpulist or "") or None
            except ValueError:
                return None
        where = os.path.dirname(where)
    return None


def stay_on(cpu: int) -> bool:
    """Keep the calling thread on `cpu` (Linux applies affinity per thread); False when a
    cpuset or a hot-unplugged CPU refuses it, and the thread runs where it may."""
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        return False
    return True

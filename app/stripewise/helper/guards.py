"""The guards, run by the helper on every repetition of a phase (the names and their meaning
are in `model.guards`). Each reads what the kernel says, never the engine's opinion:

- above_ceiling: MB/s over the physical ceiling of the lowest layer (`ceilings`) by more
  than CEILING_MARGIN (for `mixed`, twice the ceiling: links carry both directions at once);
- cached_reads: the devices at the bottom of the target read (/proc/diskstats, read sectors
  over the phase) less than CACHED_SHARE of the bytes the engine read;
- cpu_bound: some CPU over SATURATED busy (/proc/stat, per CPU, user+nice+system+irq+softirq)
  in at least SATURATED_SHARE of the phase's ticks, or the engine's own CPU time (its threads,
  or for the built-in engine the interpreter, which runs one thread at a time) at SATURATED
  of the elapsed time;
- small_buffered_file: a phase that reads, through the page cache, a file under 2 x RAM;
- compressed_writes: a phase that writes data the storage's compressor can shrink;
- member_stands_out: an array member's await or utilisation over the phase, from the
  phase's samples (the kernel's per-disk counters), more than twice the other members'
  (`model.members`).
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from stripewise.fio.layout import block_of
from stripewise.helper.ceilings import (
    RAM_FILESYSTEMS,
    Ceiling,
    Layer,
    ceiling,
    lowest_layer,
    memory_mb_s,
)
from stripewise.helper.resolve import mount_of, mount_source, open_loop_backing
from stripewise.helper.target import Target
from stripewise.model import guards as names
from stripewise.model.bench import BONNIE_NAMES, BenchSpec, Phase, PhaseOutcome
from stripewise.model.members import MemberTally
from stripewise.protocol.events import Sample

CEILING_MARGIN = 1.10  # links are quoted after encoding but before protocol overhead
CACHED_SHARE = 0.5
CACHED_MIN_BYTES = 8 * 2**20  # below this the counters' noise (metadata, readahead) rules
SATURATED = 0.95
SATURATED_SHARE = 0.75
CPU_TICK_S = 0.2
CPU_MIN_PHASE_S = 0.5  # shorter phases are too few clock ticks (10 ms each) to judge
FS_COMPRESSION_UNIT = 128 * 2**10  # btrfs compresses 128 KiB at most at once; zfs's record
PAGE_BYTES = 4096  # zram compresses page by page
_FS_IOC_GETFLAGS = 0x80086601
_FS_COMPR_FL, _FS_NOCOMP_FL = 0x4, 0x400
_MAX_PROC = 2**20
_ZFS_S = 5.0
_T = TypeVar("_T")


def _read_proc(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read(_MAX_PROC).decode(errors="replace")


# --- compression ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Compression:
    where: str  # "btrfs compress=zstd:3", "zram0"
    unit_bytes: int  # the most it compresses at once
    assembles: bool  # compresses what adjacent writes left together (pages, records), even
    # for direct I/O; False: a direct write is compressed on its own (btrfs)


def _fs_compression(fields: list[str] | None, fd: int | None) -> Compression | None:
    """From a mountinfo line: btrfs `compress`/`compress-force` (unless the test file says
    nocompress, or says compress itself), zfs's `compression` property."""
    if not fields or "-" not in fields:
        return None
    at = fields.index("-")
    fstype = fields[at + 1]
    options = (fields[5] if len(fields) > 5 else "").split(",")
    options += (fields[at + 3] if len(fields) > at + 3 else "").split(",")
    if fstype == "btrfs":
        inode = _inode_flags(fd)
        if inode & _FS_NOCOMP_FL:
            return None
        for option in options:
            key, _, value = option.partition("=")
            if key in ("compress", "compress-force") and value.split(":")[0] != "no":
                return Compression(f"btrfs {option}", FS_COMPRESSION_UNIT, False)
        if inode & _FS_COMPR_FL:
            return Compression(
                "btrfs, the test file's compress attribute", FS_COMPRESSION_UNIT, False
            )
    if fstype == "zfs":
        setting = _zfs_compression(mount_source(fields))
        if setting and setting not in ("off", "-"):
            return Compression(f"zfs compression={setting}", FS_COMPRESSION_UNIT, True)
    return None


def _inode_flags(fd: int | None) -> int:
    if fd is None or fd < 0:
        return 0
    flags = array.array("i", [0])
    try:
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, flags, True)
    except OSError:
        return 0
    return flags[0]


def _zfs_compression(dataset: str) -> str | None:
    """The dataset's `compression` property (the name is the kernel's mount source)."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:/@-]{0,255}", dataset):
        return None
    try:
        done = subprocess.run(
            ["zfs", "get", "-H", "-o", "value", "compression", dataset],
            capture_output=True, timeout=_ZFS_S, check=False, stdin=subprocess.DEVNULL,
            env={"PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C"},
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout[:200].decode(errors="replace").strip() if done.returncode == 0 else None


def _loop_compression(names_: tuple[str, ...], sys: str) -> Compression | None:
    """A loop device whose backing file sits on a compressing filesystem compresses too."""
    for name in names_:
        fd = open_loop_backing(name, sys)
        if fd is None:
            continue
        try:
            found = _fs_compression(mount_of(fd), None)
        finally:
            os.close(fd)
        if found is not None:
            return replace(found, where=f"{found.where} under {name}")
    return None


def data_period(engine: str, spec: BenchSpec, phase: Phase) -> int | None:
    """Every how many bytes (at most) the engine's written data repeats; None: it does not.
    Built-in: one random pattern per block, the same in every block. fio: each I/O unit's
    buffer is filled with random bytes once and reused (scramble_buffers changes a few bytes
    per 512), one buffer per I/O in flight; verified on btrfs with compress-force=zstd, where
    4 KiB blocks at queue depth 1 are stored in a sixteenth of their size (the job comes from
    the spec alone: it never asks for compressible buffers of its own)."""
    if engine == "builtin":
        from stripewise.helper.engines.builtin import pattern_period_bytes

        return pattern_period_bytes(spec, phase)

    return block_of(spec, phase) * spec.queue_depth  # psync cycles fewer: shorter


def compressible(period: int | None, compression: Compression, direct: bool) -> bool:
    """Data repeating within the compressor's unit shrinks; a direct write to a filesystem
    that compresses each write alone holds one copy of the pattern, which does not."""
    if period is None or period >= compression.unit_bytes:
        return False
    return compression.assembles or not direct


# --- what the run is on --------------------------------------------------------------------


@dataclass(frozen=True)
class TargetFacts:
    layer: Layer
    ceiling: Ceiling | None
    compression: Compression | None
    ram_bytes: int

    @property
    def counted(self) -> tuple[str, ...]:
        """Block devices at the bottom whose read counters say what reached the storage."""
        return self.layer.disks + tuple(n for n in self.layer.ram if n not in RAM_FILESYSTEMS)


def target_facts(
    target: Target,
    *,
    sys: str = "/sys",
    memory: Callable[[], float | None] | None = None,
) -> TargetFacts:
    """Read once per run. A fact that cannot be read is left unknown (no ceiling, no
    compression): a guard never fails a run. `memory` stands in for the measured figure."""
    import psutil

    ram = psutil.virtual_memory().total
    fields = mount_of(target.dir_fd) if target.kind == "directory" else None
    fstype = fields[fields.index("-") + 1] if fields and "-" in fields else None
    try:
        layer = lowest_layer(target.disks, fstype, sys)
    except (OSError, ValueError):
        return TargetFacts(Layer((), (), target.disks), None, None, ram)
    try:
        figure = (memory or memory_mb_s)() if layer.ram else None
        found = ceiling(layer, figure, sys)
    except (OSError, ValueError):
        found = None
    compression = None
    with contextlib.suppress(OSError, ValueError):
        if target.kind == "directory":
            compression = _fs_compression(fields, target.fd)
        loops = tuple(n for n in target.disks if n.startswith("loop"))
        compression = compression or _loop_compression(loops, sys)
    zram = next((n for n in layer.ram if n.startswith("zram")), None)
    if compression is None and zram is not None:
        compression = Compression(zram, PAGE_BYTES, True)
    return TargetFacts(layer, found, compression, ram)


# --- one phase -----------------------------------------------------------------------------


def _cpu_table(proc: str) -> dict[str, tuple[float, float]]:
    """cpuN -> (busy, total) clock ticks; guest time is inside user, so it is not added."""
    table = {}
    for line in _read_proc(f"{proc}/stat").splitlines():
        if not line.startswith("cpu") or line.startswith("cpu "):
            continue
        name, *ticks = line.split()
        values = [float(t) for t in ticks[:8]] + [0.0] * (8 - len(ticks[:8]))
        user, nice, system, idle, iowait, irq, softirq, steal = values
        busy = user + nice + system + irq + softirq
        table[name] = (busy, busy + idle + iowait + steal)
    return table


def _busiest(
    before: dict[str, tuple[float, float]], after: dict[str, tuple[float, float]]
) -> tuple[str, float] | None:
    """The busiest CPU between two readings and its busy share."""
    shares = []
    for name, (busy, total) in after.items():
        if name in before and total > before[name][1]:
            shares.append(((busy - before[name][0]) / (total - before[name][1]), name))
    if not shares:
        return None
    share, name = max(shares)
    return name, share


def _read_sectors(proc: str, devices: tuple[str, ...]) -> int | None:
    """Sectors (512 B, whatever the device's block size) read by the devices, summed."""
    wanted, total, seen = set(devices), 0, set()
    for line in _read_proc(f"{proc}/diskstats").splitlines():
        fields = line.split()
        if len(fields) > 5 and fields[2] in wanted:
            total += int(fields[5])
            seen.add(fields[2])
    return total if seen == wanted else None


class PhaseWatch:
    """Counters around one phase: per-CPU busy every `tick_s` (tick(), on the run's sampler
    thread: helper/sampling.py), the bottom devices' read sectors and the helper's and its
    children's CPU time at both ends, and the array members' figures from each sample the
    sampler sends (sampled())."""

    def __init__(
        self, devices: tuple[str, ...], proc: str = "/proc", tick_s: float = CPU_TICK_S
    ) -> None:
        self._devices, self._proc, self.tick_s = devices, proc, tick_s
        self.ticks = 0
        self.saturated_ticks = 0
        self.busiest: dict[str, int] = {}  # CPU -> saturated ticks
        self.whole: tuple[str, float] | None = None  # busiest CPU over the whole phase
        self.device_read_bytes: int | None = None
        self.own_cpu_s = self.own_user_s = self.children_cpu_s = 0.0
        self.members = MemberTally()

    def sampled(self, sample: Sample) -> None:
        """A sample of the phase as it went out (the sampler's thread, then stop()'s)."""
        self.members.add(sample.disks)

    def start(self) -> PhaseWatch:
        self._times = os.times()
        self._sectors = self._safely(lambda: _read_sectors(self._proc, self._devices))
        self._first = self._last = self._safely(lambda: _cpu_table(self._proc)) or {}
        return self

    def stop(self) -> None:
        """After the last tick()."""
        times = os.times()
        self.own_user_s = times.user - self._times.user
        self.own_cpu_s = self.own_user_s + times.system - self._times.system
        self.children_cpu_s = (
            times.children_user - self._times.children_user
            + times.children_system - self._times.children_system
        )  # fmt: skip
        after = self._safely(lambda: _read_sectors(self._proc, self._devices))
        if self._devices and self._sectors is not None and after is not None:
            self.device_read_bytes = (after - self._sectors) * 512
        last = self._safely(lambda: _cpu_table(self._proc))
        if last:
            self.whole = _busiest(self._first, last)

    @staticmethod
    def _safely(read: Callable[[], _T]) -> _T | None:
        try:
            return read()
        except (OSError, ValueError):
            return None

    def tick(self) -> None:
        """Each CPU's busy share since the last tick: is one saturated?"""
        now = self._safely(lambda: _cpu_table(self._proc))
        if not now:
            return
        found = _busiest(self._last, now)
        self._last = now
        if found is None:
            return
        self.ticks += 1
        if found[1] >= SATURATED:
            self.saturated_ticks += 1
            self.busiest[found[0]] = self.busiest.get(found[0], 0) + 1


def engine_threads(engine: str, spec: BenchSpec, phase: Phase) -> int:
    """Threads the engine moves data with: fio one per job; built-in one per stream (direct
    I/O through Linux AIO, or sequential), else one per stream and queue slot (as
    builtin._workers makes them)."""
    from stripewise.helper.engines.builtin import MAX_THREADS
    from stripewise.helper.engines.linux_aio import aio_supported

    sequential = phase in (Phase.SEQ_WRITE, Phase.REWRITE, Phase.SEQ_READ)
    if engine == "fio" or sequential or (spec.direct and aio_supported()):
        return spec.streams
    return spec.streams * max(1, min(spec.queue_depth, MAX_THREADS // spec.streams))


# --- the verdicts --------------------------------------------------------------------------


class RunGuards:
    """The guards of one run: the target's facts read once, then each repetition judged;
    `warn(code, message)` says why, once per guard and phase."""

    def __init__(
        self,
        spec: BenchSpec,
        engine: str,
        facts: TargetFacts,
        warn: Callable[[str, str], None],
        proc: str = "/proc",
    ) -> None:
        self.spec, self.engine, self.facts, self._warn, self._proc = spec, engine, facts, warn, proc
        self._said: set[tuple[str, Phase]] = set()

    def watch(self) -> PhaseWatch:
        return PhaseWatch(self.facts.counted, self._proc).start()

    def judge(self, outcome: PhaseOutcome, watch: PhaseWatch, *, buffered: bool) -> PhaseOutcome:
        """The outcome with the flags it tripped; a failed or cancelled one is left alone."""
        if outcome.error is not None or outcome.elapsed_s <= 0:
            return outcome
        found: dict[str, str] = {}
        checks = (self._ceiling, self._cache, self._cpu, self._compression, self._members)
        for check in checks:
            try:
                tripped = check(outcome, watch, buffered)
            except (OSError, ValueError, RuntimeError):  # a guard never fails a run
                continue
            if tripped is not None:
                found[tripped[0]] = tripped[1]
        if buffered and outcome.phase.reads and self._small_file():
            found[names.SMALL_BUFFERED_FILE] = ""  # said once at the start (page_cache)
        for flag, why in found.items():
            if why and (flag, outcome.phase) not in self._said:
                self._said.add((flag, outcome.phase))
                where = f"{BONNIE_NAMES[outcome.phase]}, pass {outcome.repetition}"
                self._warn(flag, f"{where}: {why}")
        flags = tuple(dict.fromkeys((*outcome.flags, *found)))
        return replace(outcome, flags=flags) if flags != outcome.flags else outcome

    def _small_file(self) -> bool:
        return self.spec.size_bytes < names.PAGE_CACHE_FACTOR * self.facts.ram_bytes

    def _ceiling(self, outcome: PhaseOutcome, _w: PhaseWatch, _b: bool) -> tuple[str, str] | None:
        top = self.facts.ceiling
        if top is None:
            return None
        allowed = top.mb_s * (2 if outcome.phase is Phase.MIXED else 1) * CEILING_MARGIN
        if outcome.mb_s <= allowed:
            return None
        margin = round((CEILING_MARGIN - 1) * 100)
        return names.ABOVE_CEILING, (
            f"{outcome.mb_s:,.0f} MB/s is more than {margin} % above the ceiling of "
            f"{top.what}: the figure is not the disks'"
        )

    def _cache(self, outcome: PhaseOutcome, watch: PhaseWatch, _b: bool) -> tuple[str, str] | None:
        device = watch.device_read_bytes
        if device is None or outcome.read_bytes < CACHED_MIN_BYTES:
            return None
        if device >= CACHED_SHARE * outcome.read_bytes:
            return None
        disks = ", ".join(self.facts.counted)
        return names.CACHED_READS, (
            f"the engine read {outcome.read_bytes / 1e6:,.0f} MB but {disks} read "
            f"{device / 1e6:,.0f} MB: a cache answered the rest"
        )

    def _cpu(self, outcome: PhaseOutcome, watch: PhaseWatch, _b: bool) -> tuple[str, str] | None:
        elapsed = outcome.elapsed_s
        if elapsed < CPU_MIN_PHASE_S:
            return None
        threads = engine_threads(self.engine, self.spec, outcome.phase)
        engine_s = watch.children_cpu_s if self.engine == "fio" else watch.own_cpu_s
        why = None
        if watch.ticks >= 3 and watch.saturated_ticks >= SATURATED_SHARE * watch.ticks:
            cpu = max(watch.busiest, key=lambda n: watch.busiest[n])
            share = watch.saturated_ticks / watch.ticks
            why = (
                f"a CPU ({cpu} most often) was over {SATURATED * 100:.0f} % busy for "
                f"{share * 100:.0f} % of it"
            )
        elif watch.ticks < 3 and watch.whole is not None and watch.whole[1] >= SATURATED:
            why = f"{watch.whole[0]} was {watch.whole[1] * 100:.0f} % busy through it"
        elif engine_s >= SATURATED * elapsed * threads:
            why = (
                f"the {self.engine} engine used {engine_s / elapsed:.2f} s of CPU per second "
                f"on {threads} thread{'s' if threads > 1 else ''}"
            )
        elif self.engine == "builtin" and watch.own_user_s >= SATURATED * elapsed:
            busy = 100 * watch.own_user_s / elapsed
            why = (
                f"the built-in engine's Python code ran {busy:.0f} % of the time, and it runs "
                "one thread at a time"
            )
        if why is None:
            return None
        return names.CPU_BOUND, f"{why}: the figure is the CPU's limit, not the disks'"

    def _compression(
        self, outcome: PhaseOutcome, _w: PhaseWatch, buffered: bool
    ) -> tuple[str, str] | None:
        found = self.facts.compression
        if found is None or not outcome.phase.writes or not outcome.write_bytes:
            return None
        period = data_period(self.engine, self.spec, outcome.phase)
        if not compressible(period, found, direct=not buffered):
            return None
        return names.COMPRESSED_WRITES, (
            f"{found.where} compresses, and the {self.engine} engine's data repeats every "
            f"{period:,} bytes, within the {found.unit_bytes // 1024} KiB it compresses at once: "
            "fewer bytes reached the disks than the figure counts"
        )

    def _members(self, _o: PhaseOutcome, watch: PhaseWatch, _b: bool) -> tuple[str, str] | None:
        said = watch.members.describe()
        return (names.MEMBER_STANDS_OUT, said) if said is not None else None

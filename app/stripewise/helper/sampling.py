"""Live samples during a benchmark: engine counters, the kernel's per-disk counters, system CPU.

Every figure is a delta between two readings divided by the time between them, so an engine's
own notion of its rate is never trusted: the kernel's counters over the wall clock, the
engine's byte counts over the wall clock or, for an engine that reports in steps (fio), over its
own runtime at those reports (`Sampler`). Rates are decimal (bytes / 1e6 / s).

The disks are kept as layers (helper/disk_layers.py), each with its place in its sample, so
nobody adds up a layer and the one under it.

CPU "busy" is user + nice + system + irq + softirq: bonnie++'s user+system plus the interrupt
work the kernel does for the I/O. iowait is idle time (a CPU waiting for nothing but a disk) and
steal is time the hypervisor took, so neither counts. Percentages are of the whole machine
(100 = every core busy), read from /proc/stat, never the benchmark's own rusage.
"""

from __future__ import annotations

import collections
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

import psutil

from stripewise.helper import diskstats
from stripewise.helper.diskstats import DiskCounters
from stripewise.helper.engines.base import Counters, Progress
from stripewise.helper.engines.latency_histogram import percentile_of, wire_buckets
from stripewise.model.bench import Phase
from stripewise.model.latency import IntervalLatency, LatencyBuckets
from stripewise.protocol.events import DiskLayer, Sample

_ETA_WINDOW_S = 2.0  # the "current" rate behind the ETA: long enough to be steady
_SHORTEST = 0.9  # of a period: the shortest span a rate is taken over (clocks jitter by ms)
_POLL_S = 0.01  # how often to look for a stepped engine's next report
_MIN_DIVISOR_S = 1e-3  # a phase shorter than this is timed as this long


@dataclass(frozen=True)
class SampledPhase:
    """Which run, phase and repetition a sampler's samples belong to (they name it)."""

    run: str
    phase: Phase
    repetition: int


class Ticked(Protocol):
    """Work done beside the samples, on the sampler's thread, every `tick_s` of a phase (the
    guards' per-CPU watch): no thread of its own for what a clock already running can do."""

    tick_s: float

    def tick(self) -> None: ...


@runtime_checkable
class Watching(Ticked, Protocol):
    """Ticked work that also sees each sample of the phase as it goes out (the guards' watch
    of the array members): after the emit, on the thread that emitted it."""

    def sampled(self, sample: Sample) -> None: ...


def _cpu_split(before: Any, after: Any) -> dict[str, float] | None:
    """Percent of all CPUs between two psutil.cpu_times() readings (guest is inside user)."""
    fields = after._fields
    delta: dict[str, float] = {f: getattr(after, f) - getattr(before, f) for f in fields}
    total = sum(v for f, v in delta.items() if f not in ("guest", "guest_nice"))
    if total <= 0:
        return None

    def pct(*names: str) -> float:
        return round(100.0 * sum(delta.get(n, 0.0) for n in names) / total, 2)

    return {
        "user": pct("user", "nice"),
        "system": pct("system", "irq", "softirq"),
        "iowait": pct("iowait"),
        "idle": pct("idle"),
        "steal": pct("steal"),
    }


@dataclass(frozen=True)
class _Reading:
    """What the sampler read at one moment: the wall clock, the kernel's disk and CPU counters."""

    t: float
    disks: dict[str, DiskCounters]
    cpu: Any  # psutil's scputimes: its fields differ between kernels


@dataclass(frozen=True)
class _EngineAt:
    """The engine's counters at a point of its own clock (seconds since the phase began)."""

    engine_s: float
    counters: Counters


_START = _EngineAt(0.0, Counters())


# the engine's read and write MB/s (decimal), read and write IOPS: in Sample's order
_EngineRates = tuple[float, float, float, float]


def _engine_rates(since: _EngineAt, now: _EngineAt) -> _EngineRates:
    span = max(now.engine_s - since.engine_s, _MIN_DIVISOR_S)
    before, after = since.counters, now.counters
    return (
        round((after.read_bytes - before.read_bytes) / span / 1e6, 3),
        round((after.write_bytes - before.write_bytes) / span / 1e6, 3),
        round((after.read_ops - before.read_ops) / span, 1),
        round((after.write_ops - before.write_ops) / span, 1),
    )


_NO_RATES = _engine_rates(_START, _START)


class Sampler:
    """A run's samples, from one thread: about one every 1/rate seconds of each phase, from
    its start() to its stop(), which emits a closing one. Between phases the thread waits
    (nothing is sampled while the run does what lies between them); close() ends it.

    No rate is taken over less than `_SHORTEST` of a period where it can be helped: a tick
    that comes too soon after the previous sample (a late tick before it) is skipped, and so
    is one after which the phase, at its present rate, will end sooner than that: the closing
    sample then takes its interval too. The engine rates always stand for exactly the time
    their `span_s` says, so, weighted by it, they add up to the phase's bytes.

    Rates are taken on the engine's runtime, the clock its result is timed with. An engine that
    counts as it goes (the built-in one) runs from `Progress.begin()` to `end()`; one that never
    calls them runs on the sampler's clock from the phase's start. An engine that reports
    totals in steps (`Progress.update_period_s`, fio) gives its runtime with each, and a sample
    is emitted soon after a report came in, its rates from one report to another: fio's
    start-up and the delay of its output count for nothing, as in its result. Without a report
    for `_overdue_s` (a stalled engine), a sample says 0 so the view does not freeze; a report
    that did come, over less than `_SHORTEST` of a period, is taken over its own span then.
    """

    def __init__(
        self,
        disks: Sequence[str | DiskLayer],
        rate_hz: float,
        emit: Callable[[Sample], None],
        clock_zero: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[threading.Event, float], bool] = threading.Event.wait,
        latency_log: bool = True,
    ) -> None:
        """`disks`: kernel names, or layers to say in each disk's entry. `clock_zero`: the
        run's start on `clock`, so `t_s` runs on across phases (by default the first phase's
        start). `clock` tells the time in seconds and `wait(stop, timeout)` sleeps until `stop`
        is set or the timeout has passed, saying whether it was set: tests pass a fake pair.
        `latency_log`: each sample carries its interval's latency, where the engine keeps it."""
        self._emit = emit
        self._layers: dict[str, DiskLayer | None] = {  # in order, with their place if known
            d.name if isinstance(d, DiskLayer) else d: d if isinstance(d, DiskLayer) else None
            for d in disks
        }
        self._clock_zero = clock_zero
        self._clock, self._wait = clock, wait
        self._latency_log = latency_log
        # each sample's (t_s, p99 us) of the phase, where the engine measures latency: the
        # phase's stalls are found among them; a steady-state phase's rounds share one
        self.latency_trail: list[tuple[float, float]] = []
        self._trail_of: SampledPhase | None = None
        self.period_s = 1.0 / rate_hz
        self._shortest_s = _SHORTEST * self.period_s
        self.samples = 0
        self.own_cpu_s = 0.0  # the sampler thread's CPU time: its cost, for the record
        self.error: BaseException | None = None  # an emit that failed stops nothing
        self._stop = threading.Event()  # the phase's ticking ends
        self._turns = threading.Condition()  # the phases handed to the thread, and back
        self._begun = self._ticked = 0  # phases started; phases the thread is done with
        self._sampling = self._closed = False
        self._thread: threading.Thread | None = None
        self._phase_cpu: Any = None

    def start(
        self,
        progress: Callable[[], Progress | None],
        sampled: SampledPhase,
        beside: Ticked | None = None,
    ) -> None:
        """A phase begins, its counts in `progress()`, its samples named `sampled`: its first
        reading now is only a baseline. The thread starts with the first phase; `beside` is
        ticked on it through the phase too."""
        if self._sampling:
            self.stop()
        now = self._clock()
        baseline = self._read(now)
        with self._turns:
            self._progress, self._sampled, self._beside = progress, sampled, beside
            if self._trail_of != sampled:  # a new phase, not the next round of this one
                self._trail_of, self.latency_trail = sampled, []
            self._started, self._last = now, baseline
            self._before: _Reading | None = None  # the one before the last sample's
            self._phase_cpu = baseline.cpu
            if self._clock_zero is None:
                self._clock_zero = now
            self._begin_phase(progress(), now)
            self._stop.clear()
            self._sampling = True
            self._begun += 1
            self._turns.notify_all()
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._serve, name="stripewise-sampler", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """The phase ends: its ticking stops (a tick under way first finishes) and its closing
        sample is emitted, with its last rates."""
        with self._turns:
            if not self._sampling:
                return
            self._sampling = False
            self._stop.set()
            self._turns.wait_for(lambda: self._ticked == self._begun)
        try:
            closing = self._closing()
            self._emit(closing)
            self.samples += 1
            self._show(closing)
        except Exception as error:
            self.error = error

    def close(self) -> None:
        """The run is over: a phase still sampled ends (stop()), and the thread with it."""
        self.stop()
        with self._turns:
            self._closed = True
            self._turns.notify_all()
        if self._thread is not None:
            self._thread.join()

    def mark_phase(self) -> None:
        """Start the CPU average that cpu_busy_pct() reports (call as a phase starts)."""
        self._phase_cpu = psutil.cpu_times()

    def cpu_busy_pct(self) -> float | None:
        """Average busy percent of all CPUs since mark_phase() (or the phase's start)."""
        if self._phase_cpu is None:
            return None
        split = _cpu_split(self._phase_cpu, psutil.cpu_times())
        if split is None:
            return None
        return round(100.0 - split["idle"] - split["iowait"] - split["steal"], 2)

    # --- the thread -----------------------------------------------------------------------
    def _serve(self) -> None:
        """Each phase as start() hands it over, until its stop(); then wait for the next."""
        with self._turns:
            while True:
                self._turns.wait_for(lambda: self._ticked < self._begun or self._closed)
                if self._ticked == self._begun:
                    return  # closed
                phase = self._begun
                self._turns.release()
                try:
                    self._tick_until_stopped()
                finally:
                    self._turns.acquire()
                    self._ticked = phase
                    self._turns.notify_all()

    def _tick_until_stopped(self) -> None:
        due = self._started + self.period_s
        beside = self._beside
        beside_due = self._started + beside.tick_s if beside is not None else math.inf
        while not self._wait(self._stop, max(0.0, min(due, beside_due) - self._clock())):
            if beside is not None and beside_due <= due:
                woken_for = beside_due
                try:
                    beside.tick()
                except Exception as error:  # nor may a broken watch
                    self.error = error
                now = self._clock()
                beside_due = max(beside_due + beside.tick_s, now)  # behind: skip, no burst
                if woken_for < due:
                    continue
            sample = None
            try:
                sample = self._tick()
                if sample is not None:
                    self.samples += 1
                    self._emit(sample)
                    self._show(sample)
            except Exception as error:  # a broken consumer must not kill the benchmark
                self.error = error
            self.own_cpu_s = time.thread_time()
            now = self._clock()
            if self._stepped is not None:  # follow the engine's reports: soon after each
                due = now + (self.period_s if sample is not None else _POLL_S)
                continue
            due += self.period_s
            if due < now:  # fell behind (suspended host): skip, do not burst
                due = now + self.period_s

    def _show(self, sample: Sample) -> None:
        if isinstance(self._beside, Watching):
            self._beside.sampled(sample)

    def _read(self, now: float) -> _Reading:
        return _Reading(now, self._disk_counters(), psutil.cpu_times())

    def _disk_counters(self) -> dict[str, DiskCounters]:
        try:
            return diskstats.read(self._layers)
        except OSError:  # no /proc/diskstats (a container without it): no disk figures
            return {}

    # --- the engine's clock -----------------------------------------------------------------
    def _begin_phase(self, progress: Progress | None, now: float) -> None:
        """A new phase counts from zero: its clock, its rates and its ETA."""
        self._phase = progress
        self._phase_t0 = now
        self._stepped = progress.update_period_s if progress is not None else None
        self._base = _START  # where the next rate starts
        self._left_to_closing = False  # the last tick left its interval to the closing sample
        self._last_rates = _NO_RATES  # the last sample's engine rates
        self._seen: tuple[Counters, float] | None = None  # reports without a runtime
        self._window: collections.deque[tuple[float, int]] = collections.deque([(0.0, 0)])
        self._latency_base: Any = None  # the engine's latency counts at the last sample

    def _engine_now(self, now: float) -> _EngineAt | None:
        """The engine's counters on its own clock; None until it has begun (or, stepped, has
        reported moving anything)."""
        progress = self._progress()
        if progress is not self._phase:
            self._begin_phase(progress, now)
        if progress is None:
            return _EngineAt(now - self._phase_t0, Counters())
        counters, runtime_s = progress.reading()
        self._stepped = progress.update_period_s
        moved = counters.read_bytes + counters.write_bytes
        if not moved and (runtime_s is None or self._stepped is not None):
            return None  # fio's first report may come before its I/O, with a runtime of no use
        if self._stepped is None:
            if runtime_s is None:  # an engine that keeps no clock: the sampler's
                runtime_s = now - self._phase_t0
        elif not runtime_s:  # a report without the engine's clock: when it was first seen
            if self._seen is None or self._seen[0] != counters:
                self._seen = (counters, now - self._phase_t0)
            runtime_s = self._seen[1]
        if runtime_s < self._base.engine_s:  # a clock that ran back tells nothing new
            return None
        return _EngineAt(runtime_s, counters)

    def _overdue_s(self) -> float:
        return max(1.0, 1.5 * (self._stepped or 0.0), 1.5 * self.period_s)

    def _progress_and_eta(
        self, engine: _EngineAt | None, fresh: bool
    ) -> tuple[float | None, float | None]:
        """Progress of the planned bytes; the ETA from the rate over the last few seconds of
        the engine's clock (unknown when nothing new came in)."""
        progress = self._phase
        counters = engine.counters if engine is not None else Counters()
        moved = counters.read_bytes + counters.write_bytes
        if progress is None or not progress.planned_bytes:
            return None, None
        share, left = progress.phase_share(moved)
        eta = None
        if engine is not None and fresh:
            self._window.append((engine.engine_s, moved))
            while engine.engine_s - self._window[0][0] > _ETA_WINDOW_S:
                self._window.popleft()
            first_s, first_moved = self._window[0]
            span = engine.engine_s - first_s
            rate = (moved - first_moved) / span if span > 0 else 0.0
            eta = 0.0 if left == 0 else (round(left / rate, 1) if rate > 0 else None)
        return round(share, 4), eta

    # --- samples ----------------------------------------------------------------------------
    def _tick(self) -> Sample | None:
        """A sample when a rate can be taken over at least `_SHORTEST` of a period (or the
        engine is overdue); None to wait for the next tick or report."""
        now = self._clock()
        engine = self._engine_now(now)
        waited = now - self._last.t
        fresh = engine is not None and engine.engine_s - self._base.engine_s >= self._shortest_s
        if waited < self._shortest_s or not (fresh or waited >= self._overdue_s()):
            return None
        if (
            engine
            and fresh
            and not self._left_to_closing
            and self._ends_within(engine, self._shortest_s)
        ):
            self._left_to_closing = True  # else the closing rate would be a sliver's
            return None
        self._left_to_closing = False
        span_s = 0.0  # no report for too long: stalled as far as anyone knows, for no time
        rates = _NO_RATES
        # overdue, yet a report came in over less than `_SHORTEST` of a period (fio's first,
        # soon after its start): its rate over its own span, not a stall that did not happen
        if engine is not None and engine.engine_s > self._base.engine_s:
            rates, span_s = _engine_rates(self._base, engine), engine.engine_s - self._base.engine_s
            self._base, self._last_rates = engine, rates
        return self._sample(now, self._last, rates, self._progress_and_eta(engine, fresh), span_s)

    def _ends_within(self, engine: _EngineAt, seconds: float) -> bool:
        """Whether the phase's planned bytes will all have moved within `seconds` of the
        engine's clock, at the rate since the last sample."""
        progress = self._phase
        if progress is None or not progress.planned_bytes:
            return False
        moved = engine.counters.read_bytes + engine.counters.write_bytes
        left = progress.planned_bytes - moved
        if left <= 0:  # past its plan (a flush, a loop): its end is not foreseen
            return False
        base = self._base.counters.read_bytes + self._base.counters.write_bytes
        span = engine.engine_s - self._base.engine_s
        rate = (moved - base) / span if span > 0 else 0.0
        return rate > 0 and left / rate < seconds

    def _closing(self) -> Sample:
        """The phase's end: the engine's rates over the time not yet sampled, exactly (the
        last tick left its interval to this one when the end was near), or, when none is
        left, the last sample's with `span_s` 0. Disk and CPU figures
        reach back over the previous sample's interval when the phase ended less than
        `_SHORTEST` of a period after it, so they are not taken over a sliver."""
        now = self._clock()
        engine = self._engine_now(now)
        rates, fresh, span_s = _NO_RATES, False, 0.0
        if engine is not None:  # else a stepped engine that never reported moving anything
            span_s = max(0.0, engine.engine_s - self._base.engine_s)  # the time not yet sampled
            fresh = span_s > 0
            # nothing new since the last sample (a stepped engine's last report): its rates
            # again, for the plot, with no weight
            rates = _engine_rates(self._base, engine) if fresh else self._last_rates
        last = self._last
        if now - last.t < self._shortest_s and self._before is not None:
            last = self._before
        return self._sample(now, last, rates, self._progress_and_eta(engine, fresh), span_s)

    def _sample(
        self,
        now: float,
        since: _Reading,
        rates: _EngineRates,
        progress: tuple[float | None, float | None],
        span_s: float,
    ) -> Sample:
        """Disk and CPU rates since `since`. `span_s`: the engine's running time the sample
        adds to the phase, on the engine's clock (what its result is timed on), so that the
        rates weighted by it add up to the phase's bytes."""
        reading = self._read(now)
        dt = max(now - since.t, _MIN_DIVISOR_S)
        zero = self._started if self._clock_zero is None else self._clock_zero
        sampled = self._sampled
        sample = Sample(
            sampled.run,
            sampled.phase,
            sampled.repetition,
            round(now - zero, 3),
            *rates,
            *progress,
            disks={
                name: diskstats.rates(since.disks[name], after, dt, self._layers.get(name))
                for name, after in reading.disks.items()
                if name in since.disks
            },
            cpu=_cpu_split(since.cpu, reading.cpu),
            span_s=round(span_s, 3),
        )
        self._before, self._last = self._last, reading
        return self._with_latency(sample)

    def _with_latency(self, sample: Sample) -> Sample:
        """The I/O times counted since the previous sample (a diff of the engine's cumulative
        histogram, so a phase's intervals add up to its count), where the engine keeps them."""
        progress = self._phase if self._latency_log else None
        counts = progress.latency_counts() if progress is not None else None
        if counts is None:
            return sample
        interval = counts if self._latency_base is None else counts - self._latency_base
        self._latency_base = counts
        p50, p99, p999 = (percentile_of(interval, share) for share in (0.5, 0.99, 0.999))
        if p50 is None or p99 is None or p999 is None:
            return sample  # no I/O completed in the interval
        latency = IntervalLatency(round(p50, 3), round(p99, 3), round(p999, 3))
        self.latency_trail.append((sample.t_s, latency.p99))  # the stall says the sample's p99
        edges, tally = wire_buckets(interval)
        return replace(sample, latency_us=latency, histogram=LatencyBuckets(edges, tally))

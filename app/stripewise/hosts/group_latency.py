"""A group run's latency per interval: each host's, and all hosts' together, as they arrive.

fio sends a job's histogram log to its client when the job ends (fio.client_latency), so a
host's intervals of a phase come after that phase, never live. Each goes out as a late
`sample` of its host carrying `latency_us` and `histogram`, its rates the window's own I/Os
over its length (fio's counts, not the ETA line's), `span_s` the window, `progress` none. Once
every host still able to has sent a phase's logs, the hosts' k-th windows of it are summed
(counts add up; percentiles are read from the sum, never averaged) into `total` samples.
Live samples never carry latency: a sample with `latency_us` in a group run is a late one.

A window's time on the run's clock is its end after the section's start, the tick at which the
host's ETA line first showed that section (its first rates for the first section): as late as
the ETA line is (with a store frozen for a second, the windows' gap fell where the live rates
dipped, 0.2 to 1.3 s after the freeze as the test's own thread timed it); a section no tick
saw starts where the one before ended.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from stripewise.fio.client_latency import (
    Window,
    grid_buckets,
    log_files,
    percentiles,
    read_log,
    section_windows,
)
from stripewise.fio.jobs import Section
from stripewise.fio.layout import block_of
from stripewise.model.bench import BenchSpec
from stripewise.model.latency import IntervalLatency, Stall, find_stalls
from stripewise.protocol.events import Sample
from stripewise.protocol.group import TOTAL_HOST


@dataclass
class _HostLogs:
    directory: Path
    started: dict[int, float] = field(default_factory=dict)  # section -> run-clock start
    sizes: dict[int, int] = field(default_factory=dict)  # job number -> size last looked at
    windows: dict[int, tuple[tuple[float, Window], ...]] = field(default_factory=dict)
    lost: list[int] = field(default_factory=list)  # sections whose logs never came


class GroupLatency:
    """Collects the hosts' logs (`directories`: each host's client working directory) into
    samples for `run_id`; called from the driver's thread only."""

    def __init__(
        self,
        run_id: str,
        spec: BenchSpec,
        sections: Sequence[Section],
        directories: dict[str, Path],
        started_s: float,
    ) -> None:
        self._run = run_id
        self._spec = spec
        self._sections = sections
        self._hosts = {label: _HostLogs(path) for label, path in directories.items()}
        for logs in self._hosts.values():
            logs.started[0] = started_s  # until the first ETA line says better
        self._first_rates: set[str] = set()
        self._totalled: set[int] = set()

    def seen(self, label: str, section: int, t_s: float) -> None:
        """The host's ETA line shows it in `section` at `t_s` (the first time counts)."""
        logs = self._hosts[label]
        if section == 0 and label not in self._first_rates:
            self._first_rates.add(label)
            logs.started[0] = t_s
        elif section > 0:
            logs.started.setdefault(section, t_s)

    def collect(self, label: str, current: int | None) -> list[Sample]:
        """The host's intervals of every section before `current` (None: its client has ended,
        every section) whose logs have all arrived, as samples; each section once."""
        logs = self._hosts[label]
        files = log_files(logs.directory)
        found = []
        last = len(self._sections) if current is None else current
        for index in range(last):
            if index in logs.windows:
                continue
            streams = range(index * self._spec.streams + 1, (index + 1) * self._spec.streams + 1)
            paths = [files.get(number) for number in streams]
            if current is not None and not self._settled(logs, streams, paths):
                continue
            if any(path is None for path in paths):  # the client ended without it
                logs.lost.append(index)
            read = [read_log(path.read_text(errors="replace")) for path in paths if path]
            windows = section_windows(lines for lines in read if lines is not None)
            start = self._start(logs, index)
            logs.windows[index] = tuple((start + w.end_ms / 1000, w) for w in windows)
            found += [
                self._sample(label, index, t_s, [w], w.latency, w.counts)
                for t_s, w in logs.windows[index]
            ]
        return [sample for sample in found if sample is not None]

    def lost(self, label: str) -> list[Section]:
        """The sections of a host whose client ended without every log of theirs: fio's
        client does not always retrieve a histogram log (axboe/fio#274). Their latency over
        time is missing; their figures stand."""
        return [self._sections[index] for index in self._hosts[label].lost]

    def stalls(self, label: str, section: int) -> tuple[Stall, ...]:
        """The host's stalls in `section` (model/latency.py's rule, as on one machine)."""
        timed = self._hosts[label].windows.get(section, ())
        return find_stalls(
            [(round(t_s, 3), w.latency.p99) for t_s, w in timed if w.latency is not None]
        )

    def totals(self, waiting: Iterable[str]) -> list[Sample]:
        """All hosts' samples of each section that no host in `waiting` (still running) has
        yet to send: the k-th windows of the hosts that sent it, summed."""
        pending = set(waiting)
        found = []
        for index in range(len(self._sections)):
            if index in self._totalled:
                continue
            if any(index not in self._hosts[label].windows for label in pending):
                continue
            self._totalled.add(index)
            sent = [logs.windows[index] for logs in self._hosts.values() if index in logs.windows]
            counts = _summed_by_window([[w.counts for _t, w in timed] for timed in sent])
            for k, latency in enumerate(percentiles(counts) if len(counts) else ()):
                at_k = [timed[k] for timed in sent if k < len(timed)]
                t_s = max(t for t, _w in at_k)
                windows = [w for _t, w in at_k]
                sample = self._sample(
                    TOTAL_HOST, index, t_s, windows, latency, tuple(counts[k].tolist())
                )
                if sample is not None:
                    found.append(sample)
        return found

    def _settled(self, logs: _HostLogs, streams: range, paths: Sequence[Path | None]) -> bool:
        """Every stream's log is there and has not grown since the last look (the client
        writes each whole, when its job's log comes in)."""
        if any(path is None for path in paths):
            return False
        settled = True
        for number, path in zip(streams, paths, strict=True):
            assert path is not None
            size = path.stat().st_size
            settled = settled and logs.sizes.get(number) == size
            logs.sizes[number] = size
        return settled

    def _start(self, logs: _HostLogs, index: int) -> float:
        if index in logs.started:
            return logs.started[index]
        before = logs.windows.get(index - 1, ())
        start = before[-1][0] if before else self._start(logs, index - 1) if index else 0.0
        logs.started[index] = start
        return start

    def _sample(
        self,
        host: str,
        index: int,
        t_s: float,
        windows: Sequence[Window],
        latency: IntervalLatency | None,
        counts: tuple[int, ...],
    ) -> Sample | None:
        """One interval's sample: one host's window, or the hosts' k-th windows summed (their
        `counts` and the `latency` read from them)."""
        if latency is None:
            return None
        section = self._sections[index]
        block = block_of(self._spec, section.phase)
        read_iops = sum(w.read_ios / max(w.span_ms, 1) * 1000 for w in windows)
        write_iops = sum(w.write_ios / max(w.span_ms, 1) * 1000 for w in windows)
        return Sample(
            self._run, section.phase, section.repetition, round(t_s, 3),
            read_iops * block / 1e6, write_iops * block / 1e6, read_iops, write_iops,
            None, None, span_s=max(w.span_ms for w in windows) / 1000, host=host,
            latency_us=latency, histogram=grid_buckets(counts),
        )  # fmt: skip


def _summed_by_window(hosts: Sequence[Sequence[tuple[int, ...]]]) -> npt.NDArray[np.int64]:
    """The hosts' k-th windows' counts added up, a row per k (as many as the longest host's)."""
    rows = max((len(windows) for windows in hosts), default=0)
    width = max((len(counts) for windows in hosts for counts in windows), default=0)
    total = np.zeros((rows, width), dtype=np.int64)
    for windows in hosts:
        for k, counts in enumerate(windows):
            total[k, : len(counts)] += counts
    return total

"""`stripewise bench --save`: the run into the history while it runs, as the GUI records it.

The run's row is written as soon as the helper accepts the benchmark, samples at least every
FLUSH_S from a thread of their own (a slow or locked database never stalls the live output),
and each phase's results before its line is printed: a `phase_result` the CLI printed is in
the history, so a CLI killed by SIGKILL leaves a `running` run with its finished phases and
samples, which the next command that reads the history files `aborted` (history.live_run).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from stripewise.cli.errors import CliError
from stripewise.model.health import DiskHealth
from stripewise.model.run_context import RunContext
from stripewise.protocol.events import PhaseFinished, RunResult, Sample
from stripewise.protocol.group import GroupOutcome
from stripewise.protocol.verbs import BenchStarted

if TYPE_CHECKING:
    from stripewise.history.live_run import Filed, LiveRun

FLUSH_S = 0.5  # as the GUI's recorder: samples reach the history at least once a second


class Recording:
    """One `bench --save` run being written. `add` and `phase_finished` come from the CLI's
    event loop; the header (its context read from sysfs) and the sample batches are written
    by the recording's own thread, begun at once."""

    def __init__(
        self,
        url: str,
        name: str,
        started: BenchStarted,
        tags: tuple[str, ...] = (),
        *,
        health: Mapping[str, DiskHealth] | None = None,  # its disks', read before it started
    ) -> None:
        self._url = url
        self._health = health
        self._name = name
        self._started = started
        self._tags = tags
        self._pending: list[Sample] = []
        self._seq = 0
        self._lock = threading.Lock()  # the pending samples and their numbering
        self._flushing = threading.Lock()  # one batch written at a time, in order
        self._stop = threading.Event()
        self._live: LiveRun | None = None
        self._failed: BaseException | None = None  # raised again where the run is filed
        self._ready = threading.Event()  # the header was written (or spooled)
        self._thread = threading.Thread(target=self._work, name="bench-save", daemon=True)
        self._thread.start()

    def add(self, sample: Sample) -> None:
        with self._lock:
            self._pending.append(sample)

    def phase_finished(self, received: Sequence[PhaseFinished]) -> None:
        """Before the phase's line is printed: its samples, then every finished phase's
        results as the helper will summarise them (`unfinished_run`'s summary)."""
        from stripewise.model.bench import phase_summaries

        live = self._wait_ready()
        self._flush(live)
        live.set_results([v for phase in phase_summaries(received) for v in phase.values()])

    def finish(self, result: RunResult) -> Filed:
        """The run's end as the helper reported it, or as the client made it."""
        self._stop.set()
        live = self._wait_ready()
        self._thread.join()
        self._flush(live)
        return live.finish(result.values(), result.status, datetime.now(UTC))

    def _wait_ready(self) -> LiveRun:
        self._ready.wait()
        if self._live is None:
            raise CliError(f"the run cannot be saved: {self._failed}") from self._failed
        return self._live

    def _work(self) -> None:
        try:
            live = _live_run(self._url, self._name, self._started, self._tags, self._health)
            live.begin()
            self._live = live
        except Exception as exc:  # said by the main thread, where the run is filed
            self._failed = exc
            return
        finally:
            self._ready.set()
        while not self._stop.wait(FLUSH_S):
            self._flush(live)

    def _flush(self, live: LiveRun) -> None:
        """The samples received so far, written (or spooled); a batch the thread took is
        written before this returns, so a phase's samples precede its results."""
        from stripewise.history.store import SampleRow

        with self._flushing:
            with self._lock:
                received, self._pending = self._pending, []
                first, self._seq = self._seq, self._seq + len(received)
            live.add_samples([SampleRow.of(first + n, s) for n, s in enumerate(received)])


def _live_run(
    url: str,
    name: str,
    started: BenchStarted,
    tags: tuple[str, ...],
    health: Mapping[str, DiskHealth] | None = None,
) -> LiveRun:
    # lazy: SQLAlchemy and the context probes load only for `bench --save`
    from stripewise.history.keyed_runs import KeyedRun
    from stripewise.history.live_run import LiveRun
    from stripewise.history.recorder_id import this_recorder
    from stripewise.history.run_row import RunRow
    from stripewise.inventory.bench_context import collect_context
    from stripewise.system.hostinfo import HostInfo

    context = collect_context(
        started.spec.target,
        started.disks,
        engine=started.engine,
        engine_version=started.engine_version,
        layers=started.layers,
        health=health,
    )
    row = RunRow(
        name=name,
        target=started.spec.target,
        engine=started.engine,
        engine_version=started.engine_version,
        started_at=datetime.now(UTC),
        spec=started.spec,
        tags=tags,
        # a live run is never filed aborted by a reader: its recorder is named
        context=replace(RunContext.from_json(context), recorder=this_recorder()),
    )
    return LiveRun(url, KeyedRun(HostInfo.current(), row))


def say_filed(filed: Filed) -> None:
    """One line on stderr when the run is not simply saved (the caller says `saved as`)."""
    if filed.waiting is not None:
        print(f"stripewise: {filed.waiting}", file=sys.stderr)
    elif filed.lost is not None:
        print(f"stripewise: error: {filed.lost}", file=sys.stderr)


def save_group_run(url: str, outcome: GroupOutcome, samples: Sequence[Sample]) -> Filed:
    """A group run (`--host`/`--group`): the totals as one run, each host's run under it; kept
    on this computer when the database refuses it (history.group_filing)."""
    from stripewise.history.group_filing import file_group_run

    return file_group_run(url, outcome, samples=samples)

"""Writes a benchmark to the history while it streams, through the history's serial writer.

The run row is created (status `running`, with its context) as soon as the helper accepts the
benchmark; samples are written in batches at least every `FLUSH_S`; results and the final
status when the run ends. The GUI thread only appends to a list and queues writes, so a slow
disk under the database never stalls the plots, and the recorder's writes take their turn with
every other write to the history. A crash leaves the run `running` with the samples written
so far; the next start marks it aborted (see `recorder_id`).

When the database refuses a write (a team history's server gone mid-run), nothing is lost:
the run goes on into the local spool (`history.spool`), the recorder says in one line how much
waits, retries every `RETRY_S`, and syncs the spool as soon as the server takes writes again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Signal

from stripewise.history.connection import Database
from stripewise.history.errors import DatabaseError
from stripewise.history.keyed_runs import KeyedRun
from stripewise.history.models import utc_now
from stripewise.history.run_row import RunRow, new_run_key, write_run
from stripewise.history.spool import Spool, waiting_line
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.bench import BenchSpec
from stripewise.model.run_context import RunContext
from stripewise.protocol.events import RunResult, Sample
from stripewise.services.tasks import SerialWriter
from stripewise.system.hostinfo import HostInfo

FLUSH_S = 0.5  # the issue asks for at least once a second
RETRY_S = 5.0  # while spooling, how often the server is tried again


@dataclass(frozen=True)
class RunHeader:
    name: str
    target: str
    engine: str
    engine_version: str
    spec: BenchSpec  # as the helper normalised it (bench.start's reply)
    context: Callable[[], RunContext]  # gathered off the GUI thread (reads sysfs)
    tags: tuple[str, ...] = ()


class RunRecorder(QObject):
    """One run's writer. Its work runs on the serial writer's thread; signals arrive on the
    GUI thread."""

    created = Signal(int)  # history id of the run, status running
    saved = Signal(int, str)  # history id, final status: everything is written
    failed = Signal(str)  # one line: what went wrong, or what waits in the spool to sync
    waiting = Signal(int)  # samples kept in the local spool (0: all synced)

    def __init__(
        self,
        db: Database,
        writer: SerialWriter,
        parent: QObject | None = None,
        spool: Spool | None = None,
    ) -> None:
        super().__init__(parent)
        self._db = db
        self._store = HistoryStore(db)
        self._writer = writer
        self._spool = spool or Spool(db.url)
        self._samples: list[Sample] = []  # as received; rows made on the writer
        self._lock = threading.Lock()
        self._seq = 0
        self._timer = QTimer(self)
        self._timer.setInterval(int(FLUSH_S * 1000))
        self._timer.timeout.connect(lambda: self._write(self._flush))
        self._broken = False
        self._run: KeyedRun | None = None
        self._spooling = False  # the server refused a write: the run goes on locally
        self._spooled_once = False
        self._said = False  # the waiting line was shown for this stretch of spooling
        self._reason = ""
        self._next_try = 0.0
        self.key = new_run_key()  # the run's `uuid` in the history, and its key in the spool
        self.run_id: int | None = None
        self.samples_written = 0  # on the server
        self.samples_spooled = 0  # waiting locally

    def begin(self, header: RunHeader) -> None:
        def create() -> int | None:
            self._run = self._keyed(header)
            try:
                self.run_id = write_run(self._db, self._run.host, self._run.row)
            except DatabaseError as exc:
                self._start_spooling(exc)
            return self.run_id

        self._writer.submit(create, self._on_created, self._on_failure)
        self._timer.start()

    def add_sample(self, sample: Sample) -> None:
        with self._lock:
            self._samples.append(sample)

    def finish(self, result: RunResult) -> None:
        """The run's end as the helper reported it, or as the client made it (unfinished_run):
        its results and its status are filed."""
        self._timer.stop()

        def finish() -> int | None:
            self._flush()
            if not self._spooling:
                assert self.run_id is not None
                try:
                    self._store.add_results(self.run_id, result.values())
                    self._store.finish_run(self.run_id, result.status)
                    if self._spooled_once:  # synced mid-run: the spool's copy is done with
                        self._spool.forget(self.key)
                    return self.run_id
                except DatabaseError as exc:
                    self._start_spooling(exc)
            self._spool.keep_end(self.key, result.values(), result.status, utc_now())
            self._next_try = 0.0  # one last try now: the server may be back
            self._try_sync()
            return None if self._spooling else self.run_id

        def done(run: int | None) -> None:
            if run is not None:
                self.saved.emit(run, result.status.value)
            else:
                self._say_waiting()

        self._writer.submit(finish, done, self._on_failure)

    def wait(self, timeout_s: float = 10.0) -> bool:
        """For shutdown and tests: True once everything asked for is written."""
        return self._writer.wait(int(timeout_s * 1000))

    def _write(self, work: Callable[[], object]) -> None:
        self._writer.submit(work, None, self._on_failure)

    def _on_created(self, run_id: int | None) -> None:
        if run_id is not None:
            self.created.emit(run_id)

    def _on_failure(self, exc: Exception) -> None:
        """A problem the spool cannot take (its own disk): said once, never lost silently."""
        if not self._broken:
            self._broken = True
            self._timer.stop()
            self.failed.emit(f"saving the run to the history failed: {exc}")

    def _say_waiting(self) -> None:
        """Signals may be emitted from the writer's thread: Qt queues them to the GUI's."""
        self.waiting.emit(self.samples_spooled)
        line = waiting_line(1, self.samples_spooled, self._db.location)
        self.failed.emit(f"{line} (the database refused a write: {self._reason})")

    # --- on the writer's thread --------------------------------------------------------
    def _keyed(self, header: RunHeader) -> KeyedRun:
        row = RunRow(
            key=self.key,
            name=header.name,
            target=header.target,
            engine=header.engine,
            engine_version=header.engine_version,
            spec=header.spec,
            context=header.context(),
            started_at=utc_now(),
            tags=header.tags,
        )
        return KeyedRun(HostInfo.current(), row)

    def _start_spooling(self, exc: DatabaseError) -> None:
        """From now on the run is written to the spool; the header first, so a sync can
        create the run if the server never had it."""
        assert self._run is not None
        self._spool.keep_run(self._run)
        self._spooled_once = True
        self._reason = _short(str(exc))
        if not self._spooling:
            self._spooling = True
            self._said = False
            self._next_try = time.monotonic() + RETRY_S

    def _flush(self) -> None:
        with self._lock:
            received, self._samples = self._samples, []
        if not received or self._run is None:
            if self._spooling:
                self._try_sync()
            return
        first, self._seq = self._seq, self._seq + len(received)
        batch = [SampleRow.of(first + n, sample) for n, sample in enumerate(received)]
        if not self._spooling:
            assert self.run_id is not None
            try:
                self._store.add_samples(self.run_id, batch)
                self.samples_written += len(batch)
                return
            except DatabaseError as exc:
                self._start_spooling(exc)
        self._spool.keep_samples(self.key, batch)
        self.samples_spooled += len(batch)
        if not self._said:  # once when spooling begins; the end says it again
            self._said = True
            self._say_waiting()
        self._try_sync()

    def _try_sync(self) -> None:
        """Every RETRY_S while spooling: the whole spool to the server, this run's and any
        other's waiting there; back to writing directly once it took everything of ours."""
        if time.monotonic() < self._next_try:
            return
        self._next_try = time.monotonic() + RETRY_S
        outcome = self._spool.sync(self._db)
        if self.key in outcome.synced:
            self.run_id = outcome.synced[self.key]
            self.samples_written += self.samples_spooled
            self.samples_spooled = 0
            self._spooling = False
            self.waiting.emit(0)


def _short(reason: str, limit: int = 160) -> str:
    return reason if len(reason) <= limit else reason[: limit - 1] + "…"

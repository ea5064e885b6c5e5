"""Writes a benchmark to the history while it streams, through the history's serial writer.

The run row is created (status `running`, with its context) as soon as the helper accepts the
benchmark; samples are written in batches at least every `FLUSH_S`; results and the final
status when the run ends. The GUI thread only appends to a list and queues writes, so a slow
disk under the database never stalls the plots, and the recorder's writes take their turn with
every other write to the history. A crash leaves the run `running` with the samples written
so far; the next start marks it aborted (see `recorder_id`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from stripewise.history.database import Database
from stripewise.history.hostinfo import HostInfo
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.bench import BenchSpec
from stripewise.protocol.events import RunResult, Sample
from stripewise.protocol.spec import spec_to_json
from stripewise.services.tasks import SerialWriter

FLUSH_S = 0.5  # the issue asks for at least once a second


@dataclass(frozen=True)
class RunHeader:
    name: str
    target: str
    engine: str
    engine_version: str
    spec: BenchSpec  # as the helper normalised it (bench.start's reply)
    context: Callable[[], dict[str, Any]]  # gathered off the GUI thread (reads sysfs)
    tags: tuple[str, ...] = ()


class RunRecorder(QObject):
    """One run's writer. Its work runs on the serial writer's thread; signals arrive on the
    GUI thread."""

    created = Signal(int)  # history id of the run, status running
    saved = Signal(int, str)  # history id, final status: everything is written
    failed = Signal(str)

    def __init__(self, db: Database, writer: SerialWriter, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._store = HistoryStore(db)
        self._writer = writer
        self._samples: list[Sample] = []  # as received; rows made on the writer
        self._lock = threading.Lock()
        self._seq = 0
        self._timer = QTimer(self)
        self._timer.setInterval(int(FLUSH_S * 1000))
        self._timer.timeout.connect(lambda: self._write(self._flush))
        self._broken = False
        self.run_id: int | None = None
        self.samples_written = 0

    def begin(self, header: RunHeader) -> None:
        def create() -> int:
            self.run_id = self._create(header)
            return self.run_id

        self._writer.submit(create, self.created.emit, self._on_failure)
        self._timer.start()

    def add_sample(self, sample: Sample) -> None:
        with self._lock:
            self._samples.append(sample)

    def finish(self, result: RunResult) -> None:
        """The run's end as the helper reported it, or as the client made it (unfinished_run):
        its results and its status are filed."""
        self._timer.stop()

        def finish() -> int:
            self._flush()
            assert self.run_id is not None
            self._store.add_results(self.run_id, result.values())
            self._store.finish_run(self.run_id, result.status)
            return self.run_id

        self._writer.submit(
            finish, lambda run: self.saved.emit(run, result.status.value), self._on_failure
        )

    def wait(self, timeout_s: float = 10.0) -> bool:
        """For shutdown and tests: True once everything asked for is written."""
        return self._writer.wait(int(timeout_s * 1000))

    def _write(self, work: Callable[[], object]) -> None:
        self._writer.submit(work, None, self._on_failure)

    def _on_failure(self, exc: Exception) -> None:
        """A database problem: said once, never lost silently."""
        if not self._broken:
            self._broken = True
            self._timer.stop()
            self.failed.emit(f"saving the run to the history failed: {exc}")

    # --- on the writer's thread --------------------------------------------------------
    def _create(self, header: RunHeader) -> int:
        host = self._store.ensure_host(HostInfo.current())
        return self._store.create_run(
            host,
            name=header.name,
            target=header.target,
            engine=header.engine,
            engine_version=header.engine_version,
            spec=spec_to_json(header.spec),
            context=header.context(),
            tags=header.tags,
        )

    def _flush(self) -> None:
        with self._lock:
            received, self._samples = self._samples, []
        if received and self.run_id is not None:
            first, self._seq = self._seq, self._seq + len(received)
            batch = [SampleRow.of(first + n, sample) for n, sample in enumerate(received)]
            self._store.add_samples(self.run_id, batch)
            self.samples_written += len(batch)

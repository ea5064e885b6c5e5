"""Writes a benchmark to the history while it streams, on a thread of its own.

The run row is created (status `running`, with its context) as soon as the helper accepts the
benchmark; samples are written in batches at least every `FLUSH_S`; results and the final
status when the run ends. The GUI thread only appends to a list and posts to a queue, so a
slow disk under the database never stalls the plots. A crash leaves the run `running` with
the samples written so far; the next start marks it aborted (see `recorder_id`).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from stripewise.history.bench_rows import result_values, sample_row
from stripewise.history.database import Database
from stripewise.history.hostinfo import HostInfo
from stripewise.history.store import HistoryStore
from stripewise.model.run import RunStatus

FLUSH_S = 0.5  # the issue asks for at least once a second


@dataclass(frozen=True)
class RunHeader:
    name: str
    target: str
    engine: str
    engine_version: str
    spec: Mapping[str, Any]
    context: Callable[[], dict[str, Any]]  # gathered on the recorder's thread (reads sysfs)
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Finish:
    status: RunStatus
    run_result: Mapping[str, Any] | None


class RunRecorder(QObject):
    """One run's writer. Signals arrive on the GUI thread (queued from the worker)."""

    created = Signal(int)  # history id of the run, status running
    saved = Signal(int, str)  # history id, final status: everything is written
    failed = Signal(str)

    def __init__(self, db: Database, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._store = HistoryStore(db)
        self._jobs: queue.Queue[RunHeader | _Finish] = queue.Queue()
        self._samples: list[Mapping[str, Any]] = []  # as received; rows made on the worker
        self._lock = threading.Lock()
        self._seq = 0
        self._thread: threading.Thread | None = None
        self.run_id: int | None = None
        self.samples_written = 0

    def begin(self, header: RunHeader) -> None:
        self._thread = threading.Thread(target=self._work, name="run-recorder", daemon=True)
        self._jobs.put(header)
        self._thread.start()

    def add_sample(self, sample: Mapping[str, Any]) -> None:
        with self._lock:
            self._samples.append(sample)

    def finish(self, status: RunStatus, run_result: Mapping[str, Any] | None = None) -> None:
        self._jobs.put(_Finish(status, run_result))

    def wait(self, timeout_s: float = 10.0) -> bool:
        """For shutdown and tests: True once everything is written."""
        if self._thread is not None:
            self._thread.join(timeout_s)
            return not self._thread.is_alive()
        return True

    # --- the worker thread -------------------------------------------------------------
    def _work(self) -> None:
        try:
            header = self._jobs.get()
            assert isinstance(header, RunHeader)
            self.run_id = self._create(header)
            self.created.emit(self.run_id)
            last_flush = time.monotonic()
            while True:
                wait = max(0.0, FLUSH_S - (time.monotonic() - last_flush))
                try:
                    job = self._jobs.get(timeout=wait)
                except queue.Empty:
                    self._flush()
                    last_flush = time.monotonic()
                    continue
                if isinstance(job, _Finish):
                    self._flush()
                    self._finish(job)
                    self.saved.emit(self.run_id, job.status.value)
                    return
        except Exception as exc:  # a database problem: say so, never lose the thread silently
            self.failed.emit(f"saving the run to the history failed: {exc}")

    def _create(self, header: RunHeader) -> int:
        host = self._store.ensure_host(HostInfo.current())
        return self._store.create_run(
            host,
            name=header.name,
            target=header.target,
            engine=header.engine,
            engine_version=header.engine_version,
            spec=header.spec,
            context=header.context(),
            tags=header.tags,
        )

    def _flush(self) -> None:
        with self._lock:
            received, self._samples = self._samples, []
        if received and self.run_id is not None:
            first, self._seq = self._seq, self._seq + len(received)
            batch = [sample_row(first + n, sample) for n, sample in enumerate(received)]
            self._store.add_samples(self.run_id, batch)
            self.samples_written += len(batch)

    def _finish(self, job: _Finish) -> None:
        assert self.run_id is not None
        if job.run_result is not None:
            self._store.add_results(self.run_id, result_values(job.run_result))
        self._store.finish_run(self.run_id, job.status)

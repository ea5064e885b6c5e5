"""Run a function off the GUI thread and deliver its outcome on the GUI thread.

One small helper in the spirit of Anki's CollectionOp: the callable runs in Qt's global thread
pool; `on_success(result)` or `on_failure(exception)` are then called on the thread that owns
the returned handle (the GUI thread when started from it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal


class BackgroundTask(QObject):
    succeeded = Signal(object)
    failed = Signal(object)
    finished = Signal()
    _outcome = Signal(object, bool)  # from the worker: (result or exception, ok)

    # Keeps handles alive until their outcome has been delivered.
    _running: ClassVar[set[BackgroundTask]] = set()

    def __init__(
        self,
        work: Callable[[], Any],
        on_success: Callable[[Any], None] | None = None,
        on_failure: Callable[[Exception], None] | None = None,
    ) -> None:
        super().__init__()
        self._work = work
        self._on_success = on_success
        self._on_failure = on_failure
        # One queued hop to this object's thread; the callbacks run inside it, so the task
        # cannot be released before they have run.
        self._outcome.connect(self._deliver)

    def start(self, pool: QThreadPool | None = None) -> BackgroundTask:
        BackgroundTask._running.add(self)
        (pool or QThreadPool.globalInstance()).start(_Runner(self))
        return self

    def _deliver(self, outcome: object, ok: bool) -> None:
        try:
            if ok:
                if self._on_success is not None:
                    self._on_success(outcome)
                self.succeeded.emit(outcome)
            else:
                if self._on_failure is not None:
                    self._on_failure(outcome)  # type: ignore[arg-type]
                self.failed.emit(outcome)
        finally:
            BackgroundTask._running.discard(self)
            self.finished.emit()


class _Runner(QRunnable):
    def __init__(self, task: BackgroundTask) -> None:
        super().__init__()
        self._task = task

    def run(self) -> None:
        try:
            outcome, ok = self._task._work(), True
        except Exception as exc:  # delivered to on_failure, never lost in the pool
            outcome, ok = exc, False
        if shiboken6.isValid(self._task):  # not when the interpreter is already tearing down
            self._task._outcome.emit(outcome, ok)


def run_in_background(
    work: Callable[[], Any],
    on_success: Callable[[Any], None],
    on_failure: Callable[[Exception], None] | None = None,
) -> BackgroundTask:
    return BackgroundTask(work, on_success, on_failure).start()


class SerialWriter:
    """One thread for every write to one database, in the order they were asked for (Anki's
    rule: all writes through one serial worker). Writers never race each other for SQLite's
    lock or PostgreSQL's rows, and a write queued after another sees its result."""

    def __init__(self) -> None:
        self._pool = QThreadPool()
        self._pool.setMaxThreadCount(1)  # one thread: queued tasks run first come, first served

    def submit(
        self,
        work: Callable[[], Any],
        on_success: Callable[[Any], None] | None = None,
        on_failure: Callable[[Exception], None] | None = None,
    ) -> BackgroundTask:
        return BackgroundTask(work, on_success, on_failure).start(self._pool)

    def wait(self, timeout_ms: int = 10_000) -> bool:
        """True once every write asked for so far is done."""
        return self._pool.waitForDone(timeout_ms)


def wait_for_background_tasks(timeout_ms: int = 10_000) -> bool:
    """For shutdown and tests: let running tasks finish so no thread outlives the window."""
    return QThreadPool.globalInstance().waitForDone(timeout_ms)

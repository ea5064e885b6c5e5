"""Run a function off the GUI thread and deliver its outcome on the GUI thread.

One small helper in the spirit of Anki's CollectionOp: the callable runs in Qt's global thread
pool; `on_success(result)` or `on_failure(exception)` are then called on the thread that owns
the returned handle (the GUI thread when started from it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal


class BackgroundTask(QObject):
    succeeded = Signal(object)
    failed = Signal(object)
    finished = Signal()

    # Keeps handles alive until their outcome arrives.
    _running: ClassVar[set[BackgroundTask]] = set()

    def __init__(self, work: Callable[[], Any]) -> None:
        super().__init__()
        self._work = work
        self.succeeded.connect(self._done)
        self.failed.connect(self._done)

    def start(self) -> BackgroundTask:
        BackgroundTask._running.add(self)
        QThreadPool.globalInstance().start(_Runner(self))
        return self

    def _done(self, _outcome: object) -> None:
        BackgroundTask._running.discard(self)
        self.finished.emit()


class _Runner(QRunnable):
    def __init__(self, task: BackgroundTask) -> None:
        super().__init__()
        self._task = task

    def run(self) -> None:
        try:
            result = self._task._work()
        except Exception as exc:  # delivered to on_failure, never lost in the pool
            self._task.failed.emit(exc)
        else:
            self._task.succeeded.emit(result)


def run_in_background(
    work: Callable[[], Any],
    on_success: Callable[[Any], None],
    on_failure: Callable[[Exception], None] | None = None,
) -> BackgroundTask:
    task = BackgroundTask(work)
    task.succeeded.connect(on_success)
    if on_failure is not None:
        task.failed.connect(on_failure)
    return task.start()


def wait_for_background_tasks(timeout_ms: int = 10_000) -> bool:
    """For shutdown and tests: let running tasks finish so no thread outlives the window."""
    return QThreadPool.globalInstance().waitForDone(timeout_ms)

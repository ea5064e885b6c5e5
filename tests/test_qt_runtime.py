"""Guards against Qt binding defects that would crash a long session, not just a test."""

from __future__ import annotations

import gc
import sys

from PySide6.QtCore import QObject, QThreadPool, Signal


class _Emitter(QObject):
    value = Signal(object)
    empty = Signal()


def test_signal_emission_keeps_bool_reference_counts(qapp) -> None:
    """PySide6 6.12.0 decremented True's refcount on each emit: fatal after enough signals."""
    emitter = _Emitter()
    received: list[object] = []
    emitter.value.connect(received.append)
    emitter.empty.connect(lambda: received.append(None))
    QThreadPool.globalInstance().waitForDone(10_000)  # no other thread touching refcounts
    gc.collect()
    gc.disable()  # a collection mid-loop may free unrelated references to True
    try:
        before = sys.getrefcount(True), sys.getrefcount(False)
        for number in range(2000):
            emitter.value.emit([number])
            emitter.empty.emit()
        after = sys.getrefcount(True), sys.getrefcount(False)
    finally:
        gc.enable()
    assert len(received) == 4000
    # The defect loses one reference per emit (-4000); anything else is noise of a few dozen.
    assert abs(after[0] - before[0]) < 400 and abs(after[1] - before[1]) < 400, (before, after)

"""Guards against Qt binding defects that would crash a long session, not just a test."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    value = Signal(object)
    empty = Signal()


def test_signal_emission_keeps_bool_reference_counts(qapp) -> None:
    """PySide6 6.12.0 decremented True's refcount on each emit: fatal after enough signals."""
    emitter = _Emitter()
    received: list[object] = []
    emitter.value.connect(received.append)
    emitter.empty.connect(lambda: received.append(None))
    before = sys.getrefcount(True), sys.getrefcount(False)
    for number in range(500):
        emitter.value.emit([number])
        emitter.empty.emit()
    after = sys.getrefcount(True), sys.getrefcount(False)
    assert len(received) == 1000
    assert abs(after[0] - before[0]) < 50 and abs(after[1] - before[1]) < 50, (before, after)

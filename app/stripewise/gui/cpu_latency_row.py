"""The Benchmark form's CPU wake-up row: a box to hold a limit while the run lasts, and the
limit (µs), editable only while the box is ticked and the form takes edits (not mid-run)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QSpinBox, QWidget

from stripewise.model.bench import MAX_CPU_LATENCY_US


class CpuLatencyRow(QWidget):
    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hold = QCheckBox("Hold CPU wake-up to")
        self.hold.setToolTip(
            "While the run lasts, no CPU enters an idle state that takes longer to wake up "
            "(PM QoS, as tuned's force_latency). 0 keeps idle CPUs polling: at queue depth 1 a "
            "halted CPU's wake-up can cost more than the I/O. Needs the privileged helper."
        )
        self.limit = QSpinBox()
        self.limit.setRange(0, MAX_CPU_LATENCY_US)
        self.limit.setToolTip("Longest CPU wake-up allowed")
        self.limit.setSuffix(" \u00b5s")
        self.limit.setEnabled(False)
        self.limit.valueChanged.connect(self.edited)
        self.hold.toggled.connect(self.sync)
        self.hold.toggled.connect(self.edited)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.hold)
        row.addWidget(self.limit, 1)

    def sync(self) -> None:
        self.limit.setEnabled(self.hold.isChecked() and self.hold.isEnabled())

    def held_us(self) -> int | None:
        """The limit the run is to hold; None: none."""
        return self.limit.value() if self.hold.isChecked() else None

    def show_held(self, held_us: int | None) -> None:
        self.hold.setChecked(held_us is not None)
        if held_us is not None:
            self.limit.setValue(held_us)

"""The Tuning page's A/B benchmark, apart from the page: the dialog that asks where and how to
run it, the button that opens it, and the outcome's report. The page's `ABRunner` runs it: the
same benchmark with the preset and without, alternating, until the difference is known.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QWidget,
)

from stripewise.gui.help_dialogs import BENCHMARK_WITH_AND_WITHOUT, purpose_label
from stripewise.model.ab import MIN_ROUNDS, ROUND_CAP, TARGET_HALF_WIDTH_PCT, ABOutcome
from stripewise.model.bench import BenchSpec, Phase
from stripewise.model.bench_targets import BenchTarget
from stripewise.protocol.verbs import BenchStartArgs


def ab_button() -> QPushButton:
    button = QPushButton("Benchmark With and Without...")
    button.setToolTip(
        "Run the same benchmark with this preset applied and without, alternating, and "
        "say whether the difference is larger than the runs' own spread"
    )
    return button


def outcome_text(outcome: ABOutcome, label: str) -> str:
    """The verdict on `label`'s values, then one line per figure compared."""
    lines = [outcome.summary(label)]
    lines += [f"  {figure.sentence()}" for figure in outcome.figures]
    return "\n".join(lines)


class ABDialog(QDialog):
    """Where and how to benchmark for an A/B: target, size, rounds (each round = 2 runs)."""

    def __init__(self, parent: QWidget, targets: list[BenchTarget]) -> None:
        super().__init__(parent)
        self.setWindowTitle("Benchmark with and without")
        form = QFormLayout(self)
        form.addRow(purpose_label(BENCHMARK_WITH_AND_WITHOUT))
        self.target = QComboBox()
        for target in targets:
            if target.runnable and not target.path.startswith("/dev/"):
                self.target.addItem(target.label, target.path)
        form.addRow("Target", self.target)
        self.size_mib = QSpinBox()
        self.size_mib.setRange(16, 1 << 20)
        self.size_mib.setValue(1024)
        self.size_mib.setSuffix(" MiB")
        form.addRow("File size", self.size_mib)
        self.rounds = QSpinBox()
        self.rounds.setRange(MIN_ROUNDS, 20)
        self.rounds.setValue(MIN_ROUNDS)
        self.rounds.setToolTip(
            "Each round runs once with and once without, in alternating order. While a "
            f"difference is known less closely than ± {TARGET_HALF_WIDTH_PCT:g} %, rounds are "
            f"added, up to {ROUND_CAP}."
        )
        form.addRow("Rounds (at least)", self.rounds)
        form.addRow(QLabel("Sequential write and read, then random reads, direct I/O."))
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def bench_args(self) -> BenchStartArgs | None:
        """None when there is no directory to run on."""
        target = self.target.currentData()
        if not isinstance(target, str):
            return None
        spec = BenchSpec(
            target,
            self.size_mib.value() * 2**20,
            phases=(Phase.SEQ_WRITE, Phase.SEQ_READ, Phase.RANDOM_READ),
            direct=True,
            runtime_cap_s=30.0,
            engine="builtin",
        )
        return BenchStartArgs(spec)

"""The Benchmark view's settings: target, preset, engine, phases, sizes, and confirmation.

Produces the helper's `bench.start` arguments (docs/protocol.md); validation that needs the
machine (free space, serials, mounts) is the helper's, and its refusal is shown as it words it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from stripewise.model.bench import BONNIE_NAMES, BenchSpec, Phase, SpecError, parse_size
from stripewise.model.bench_presets import PRESETS, PresetValues
from stripewise.model.bench_targets import BenchTarget, TargetKind
from stripewise.protocol.events import BenchStartArgs

BLOCK_SIZES = ("4K", "64K", "128K", "256K", "512K", "1M", "4M")
PHASE_LABELS = {  # short, for a narrow column; bonnie++'s full names are the tooltips
    Phase.SEQ_WRITE: "Sequential write",
    Phase.REWRITE: "Rewrite",
    Phase.SEQ_READ: "Sequential read",
    Phase.RANDOM_READ: "Random seeks",
    Phase.RANDOM_WRITE: "Random writes",
    Phase.MIXED: "Mixed 70/30",
}
CUSTOM_PRESET = "Custom"


def size_text(size: int) -> str:
    """Bytes as the size field takes them: the largest binary unit that divides evenly."""
    for unit, scale in (("T", 2**40), ("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return f"{size // 2**20}M" if size >= 2**20 else str(size)


class BenchForm(QWidget):
    presetChosen = Signal(str)  # the page fills in machine-dependent values
    targetChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._targets: list[BenchTarget] = []
        self._applying_preset = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        layout.addLayout(form)

        self.target = QComboBox()
        self.target.setAccessibleName("Target")
        self.target.setMinimumContentsLength(14)
        self.target.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.target.currentIndexChanged.connect(self._on_target)
        browse = QPushButton("...")
        browse.setToolTip("Benchmark in a directory of your choice")
        browse.setAccessibleName("Choose a directory")
        browse.setMaximumWidth(32)
        browse.clicked.connect(self._choose_directory)
        row = QHBoxLayout()
        row.addWidget(self.target, 1)
        row.addWidget(browse)
        target_label = QLabel("&Target")
        target_label.setBuddy(self.target)
        form.addRow(target_label, row)
        self.target_note = QLabel()
        self.target_note.setWordWrap(True)
        self.target_note.setObjectName("targetNote")
        form.addRow("", self.target_note)

        self.preset = QComboBox()
        self.preset.setAccessibleName("Preset")
        self.preset.addItem(CUSTOM_PRESET)
        for preset in PRESETS:
            self.preset.addItem(preset.name)
            self.preset.setItemData(
                self.preset.count() - 1, preset.summary, Qt.ItemDataRole.ToolTipRole
            )
        self.preset.currentTextChanged.connect(self._on_preset)
        form.addRow("Pre&set", self.preset)
        self.preset_note = QLabel()
        self.preset_note.setWordWrap(True)
        form.addRow("", self.preset_note)

        self.engine = QComboBox()
        self.engine.setAccessibleName("Engine")
        self.engine.addItem("built-in", "builtin")
        form.addRow("&Engine", self.engine)

        phases = QGridLayout()
        self.phase_boxes: dict[Phase, QCheckBox] = {}
        for index, phase in enumerate(Phase):
            box = QCheckBox(PHASE_LABELS[phase])
            box.setToolTip(f"{BONNIE_NAMES[phase]} ({phase.value})")
            box.toggled.connect(self._edited)
            self.phase_boxes[phase] = box
            phases.addWidget(box, index, 0)
        form.addRow("Phases", phases)

        self.size = QLineEdit("1G")
        self.size.setAccessibleName("File size")
        self.size.setToolTip("Binary units: 512M = 512 MiB, 8G = 8 GiB")
        self.size.textEdited.connect(self._edited)
        form.addRow("File si&ze", self.size)
        self.block = QComboBox()
        self.block.addItems(BLOCK_SIZES)
        self.block.setCurrentText("1M")
        self.block.setToolTip("Sequential phases' block size (KiB/MiB); random phases use 4 KiB")
        self.block.currentTextChanged.connect(self._edited)
        form.addRow("&Block size", self.block)
        self.direct = QCheckBox("Direct I/O (no page cache)")
        self.direct.setChecked(True)
        self.direct.toggled.connect(self._edited)
        form.addRow("", self.direct)
        self.queue_depth = self._spin(1, 256, 1, "Queue depth: I/Os in flight per stream")
        self.streams = self._spin(1, 64, 1, "Parallel streams")
        self.repetitions = self._spin(1, 100, 1, "Repetitions of every phase")
        form.addRow("&Queue depth", self.queue_depth)
        form.addRow("S&treams", self.streams)
        form.addRow("Re&petitions", self.repetitions)
        self.rate = self._spin(1, 10, 10, "Samples per second (Hz)")
        self.rate.setSuffix(" Hz")
        form.addRow("Sample &rate", self.rate)
        self.runtime_cap = self._spin(1, 86_400, 600, "Stop a phase after this many seconds")
        self.runtime_cap.setSuffix(" s")
        form.addRow("Phase &cap", self.runtime_cap)

        self.confirm = QLineEdit()
        self.confirm.setPlaceholderText("type the device's serial to allow writing")
        self.confirm.setAccessibleName("Confirm serial")
        self.overwrite = QCheckBox("Overwrite an existing partition table or filesystem")
        self.confirm_label = QLabel("Confirm")
        form.addRow(self.confirm_label, self.confirm)
        form.addRow("", self.overwrite)
        self._show_confirmation(False)
        self.apply_values(PRESET_DEFAULT)

    def _spin(self, low: int, high: int, value: int, tip: str) -> QSpinBox:
        spin = QSpinBox()
        spin.setRange(low, high)
        spin.setValue(value)
        spin.setToolTip(tip)
        spin.valueChanged.connect(self._edited)
        return spin

    # --- targets ---------------------------------------------------------------------------
    def set_targets(self, targets: list[BenchTarget]) -> None:
        current = self.current_target()
        self._targets = list(targets)
        self.target.blockSignals(True)
        self.target.clear()
        for target in self._targets:
            self.target.addItem(target.label)
        keep = next(
            (
                i
                for i, t in enumerate(self._targets)
                if current and t.path == current.path and t.label == current.label
            ),
            0,
        )
        self.target.setCurrentIndex(keep if self._targets else -1)
        self.target.blockSignals(False)
        self._on_target()

    def add_directory(self, path: str) -> None:
        target = BenchTarget(f"{path}  (directory)", path, TargetKind.FILESYSTEM)
        self._targets.insert(0, target)
        self.target.insertItem(0, target.label)
        self.target.setCurrentIndex(0)

    def current_target(self) -> BenchTarget | None:
        index = self.target.currentIndex()
        return self._targets[index] if 0 <= index < len(self._targets) else None

    def _choose_directory(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Benchmark in directory")
        if path:
            self.add_directory(path)

    def _on_target(self) -> None:
        target = self.current_target()
        self.target_note.setText(target.note if target else "Pick a target or a directory.")
        raw = target is not None and target.path.startswith("/dev/")
        self._show_confirmation(raw)
        self.targetChanged.emit()

    def _show_confirmation(self, shown: bool) -> None:
        for widget in (self.confirm, self.overwrite, self.confirm_label):
            widget.setVisible(shown)

    # --- presets ---------------------------------------------------------------------------
    def set_engines(self, fio_version: str | None) -> None:
        if fio_version and self.engine.findData("fio") < 0:
            self.engine.insertItem(0, f"fio {fio_version}", "fio")
            self.engine.setCurrentIndex(0)

    def _on_preset(self, name: str) -> None:
        if name != CUSTOM_PRESET:
            self.presetChosen.emit(name)

    def apply_values(self, values: PresetValues) -> None:
        self._applying_preset = True
        try:
            for phase, box in self.phase_boxes.items():
                box.setChecked(phase in values.phases)
            self.size.setText(size_text(values.size_bytes))
            self.block.setCurrentText(size_text(values.block_bytes))
            self.direct.setChecked(values.direct)
            self.queue_depth.setValue(values.queue_depth)
            self.streams.setValue(values.streams)
            self.repetitions.setValue(values.repetitions)
            self.runtime_cap.setValue(round(values.runtime_cap_s))
            self.preset_note.setText(values.note)
        finally:
            self._applying_preset = False

    def _edited(self) -> None:
        if not self._applying_preset and self.preset.currentText() != CUSTOM_PRESET:
            self.preset.blockSignals(True)
            self.preset.setCurrentText(CUSTOM_PRESET)
            self.preset.blockSignals(False)
            self.preset_note.setText("")

    # --- the request -----------------------------------------------------------------------
    def phases(self) -> list[Phase]:
        return [phase for phase, box in self.phase_boxes.items() if box.isChecked()]

    def start_args(self) -> BenchStartArgs:
        """bench.start's arguments; SpecError naming the field when the form is incomplete or
        out of bounds (the helper checks the same bounds again: it trusts no client)."""
        target = self.current_target()
        if target is None or not target.runnable:
            raise SpecError(target.note if target else "pick a target first")
        phases = self.phases()
        if not phases:
            raise SpecError("tick at least one phase")
        spec = BenchSpec(
            target=target.path,
            size_bytes=parse_size(self.size.text().strip()),
            block_bytes=parse_size(self.block.currentText()),
            direct=self.direct.isChecked(),
            phases=tuple(phases),
            queue_depth=self.queue_depth.value(),
            streams=self.streams.value(),
            repetitions=self.repetitions.value(),
            runtime_cap_s=float(self.runtime_cap.value()),
            sample_rate_hz=float(self.rate.value()),
            engine=str(self.engine.currentData()),
        )
        if problems := spec.problems():
            raise SpecError("; ".join(problems))
        confirm = self.confirm.text().strip() if self.confirm.isVisible() else ""
        return BenchStartArgs(
            spec,
            confirm_serial=confirm or None,
            overwrite=self.overwrite.isVisible() and self.overwrite.isChecked(),
        )

    def load_spec(self, spec: Mapping[str, Any], repetitions: int) -> list[str]:
        """A stored run's spec (runs.spec, as the helper normalised it) in the form, with
        `repetitions` passes: to run it again for a verdict. Returns what could not be
        carried over, each as a line to show (the form keeps its own value there)."""
        left_out: list[str] = []
        target = spec.get("target")
        if isinstance(target, str) and target:
            known = next((i for i, t in enumerate(self._targets) if t.path == target), None)
            if known is not None:
                self.target.setCurrentIndex(known)
            elif target.startswith("/dev/"):
                left_out.append(f"target {target} is not among the devices found now")
            else:
                self.add_directory(target)
        self.preset.setCurrentText(CUSTOM_PRESET)
        self._applying_preset = True
        try:
            phases = spec.get("phases")
            if isinstance(phases, list) and phases:
                for phase, box in self.phase_boxes.items():
                    box.setChecked(phase.value in phases)
            size, block = spec.get("size"), spec.get("block_size")
            if isinstance(size, int) and not isinstance(size, bool):
                self.size.setText(size_text(size))
            if isinstance(block, int) and not isinstance(block, bool):
                if self.block.findText(size_text(block)) < 0:  # a size the list lacks
                    self.block.addItem(size_text(block))
                self.block.setCurrentText(size_text(block))
            if isinstance(spec.get("direct"), bool):
                self.direct.setChecked(bool(spec["direct"]))
            for key, spin in (
                ("queue_depth", self.queue_depth),
                ("streams", self.streams),
                ("sample_rate_hz", self.rate),
                ("runtime_cap_s", self.runtime_cap),
            ):
                value = spec.get(key)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    spin.setValue(round(value))
            self.repetitions.setValue(repetitions)
            engine = spec.get("engine")
            if isinstance(engine, str) and engine:
                found = self.engine.findData(engine)
                if found >= 0:
                    self.engine.setCurrentIndex(found)
                else:
                    left_out.append(f"engine {engine} is not available here")
            random_block = spec.get("random_block_size")
            if isinstance(random_block, int) and random_block != 4096:
                left_out.append("random phases use 4 KiB blocks here")
            self.preset_note.setText(f"Set up as a stored run, with {repetitions} passes.")
        finally:
            self._applying_preset = False
        return left_out

    def set_running(self, running: bool) -> None:
        for child in self.findChildren(QWidget):
            child.setEnabled(not running)


PRESET_DEFAULT = PresetValues(
    (Phase.SEQ_WRITE, Phase.REWRITE, Phase.SEQ_READ, Phase.RANDOM_READ), 2**30
)

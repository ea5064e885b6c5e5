"""The Benchmark view's settings: target, preset, engine, phases, sizes, and confirmation.

Produces the helper's `bench.start` arguments (docs/protocol.md); validation that needs the
machine (free space, serials, mounts) is the helper's, and its refusal is shown as it words it.

The target the admin picked stays picked: a re-read of the hardware map (a hotplug) finds it
again by identity, and when it went away it stays on show as gone, and cannot start. The form
keeps one geometry whatever its hints say: they have room reserved, and the confirmation rows
are always there, enabled for a device only.
"""

from __future__ import annotations

import os

import shiboken6
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
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui import file_places
from stripewise.gui.bench_form_rows import (
    OTHER,
    FieldErrors,
    HintLabel,
    add_pair,
    field_error,
    spec_problems,
)
from stripewise.gui.cpu_latency_row import CpuLatencyRow
from stripewise.gui.help_dialogs import BENCH_DIRECTORY
from stripewise.gui.steady_state_row import SteadyStateRow
from stripewise.model.bench import (
    BONNIE_NAMES,
    MAX_CPU_LATENCY_US,
    BenchSpec,
    Phase,
    SpecError,
    parse_size,
)
from stripewise.model.bench_presets import PRESETS, PresetValues
from stripewise.model.bench_targets import BenchTarget, TargetKind, directory_target, gone_reason
from stripewise.model.setting_labels import PHASE_LABELS  # one set of names, the compare's too
from stripewise.model.wording import count_noun
from stripewise.protocol.verbs import BenchStartArgs
from stripewise.services.tasks import run_in_background

BLOCK_SIZES = ("4K", "64K", "128K", "256K", "512K", "1M", "4M")
CUSTOM_PRESET = "Custom"
CUSTOM_NOTE = "Your own settings; a preset fills them in for this target"
NO_TARGET = "Pick a target, or a directory with \u2026"


def size_text(size: int) -> str:
    """Bytes as the size field takes them: the largest binary unit that divides evenly."""
    for unit, scale in (("T", 2**40), ("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return f"{size // 2**20}M" if size >= 2**20 else str(size)


class BenchForm(QWidget):
    presetChosen = Signal(str)  # the page fills in machine-dependent values
    targetChanged = Signal()
    errorShown = Signal(QWidget)  # the label under the field: the page scrolls to it

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._targets: list[BenchTarget] = []
        self._shown: tuple[str, ...] | None = None  # the identity the form last showed
        self._applying_preset = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        layout.addLayout(form)
        self.errors = FieldErrors(form)  # each under its field, hidden until there is one

        self.target = QComboBox()
        self.target.setAccessibleName("Target")
        self.target.setMinimumContentsLength(14)
        self.target.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.target.currentIndexChanged.connect(self._on_target)
        self.browse = QToolButton()
        self.browse.setText("\u2026")
        self.browse.setToolTip("Benchmark in a directory of your choice")
        self.browse.setAccessibleName("Choose a directory")
        self.browse.clicked.connect(self._choose_directory)
        row = QHBoxLayout()
        row.addWidget(self.target, 1)
        row.addWidget(self.browse)
        target_label = QLabel("&Target")
        target_label.setBuddy(self.target)
        form.addRow(target_label, row)
        self.errors.add_row("target")
        self.target_note = HintLabel()
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
        self.preset_note = HintLabel()
        self.preset_note.setObjectName("presetNote")
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
            phases.addWidget(box, index // 2, index % 2)  # two columns: the form fits 768 px
        form.addRow("Phases", phases)
        self.errors.add_row("phases")

        self.file_size = QLineEdit("1G")
        self.file_size.setAccessibleName("File size")
        self.file_size.setToolTip("Binary units: 512M = 512 MiB, 8G = 8 GiB")
        self.file_size.textEdited.connect(self._edited)
        form.addRow("File si&ze", self.file_size)
        self.errors.add_row("size")
        self.block = QComboBox()
        self.block.addItems(BLOCK_SIZES)
        self.block.setCurrentText("1M")
        self.block.setToolTip("Sequential phases' block size (KiB/MiB); random phases use 4 KiB")
        self.block.currentTextChanged.connect(self._edited)
        form.addRow("&Block size", self.block)
        self.errors.add_row("block")
        self.direct = QCheckBox("Direct I/O (no page cache)")
        self.direct.setChecked(True)
        self.direct.toggled.connect(self._edited)
        form.addRow("", self.direct)
        self.queue_depth = self._spin(1, 256, 1, "Queue depth: I/Os in flight per stream")
        self.streams = self._spin(1, 64, 1, "Parallel streams")
        self.repetitions = self._spin(1, 100, 1, "Repetitions of every phase")
        add_pair(form, ("&Queue depth", self.queue_depth), ("Stre&ams", self.streams))
        self.errors.add_row("queue_depth")  # their product's limit: under both
        form.addRow("Re&petitions", self.repetitions)
        self.rate = self._spin(1, 10, 10, "Samples per second (Hz)")
        self.rate.setSuffix(" Hz")
        self.runtime_cap = self._spin(1, 86_400, 600, "Stop a phase after this many seconds")
        self.runtime_cap.setSuffix(" s")
        add_pair(form, ("Samp&le rate", self.rate), ("Phase &cap", self.runtime_cap))
        self.latency = CpuLatencyRow()
        self.latency.edited.connect(self._edited)
        self.hold_cpu_latency, self.cpu_latency = self.latency.hold, self.latency.limit
        latency_label = QLabel("CPU &idle")
        latency_label.setBuddy(self.hold_cpu_latency)
        form.addRow(latency_label, self.latency)
        self.steady = SteadyStateRow()
        self.steady.edited.connect(self._edited)
        form.addRow("Stead&y state", self.steady)

        self.confirm = QLineEdit()
        self.confirm.setAccessibleName("Confirm serial")
        self.confirm.setToolTip("What the note under Target names: writing needs it typed back")
        self.overwrite = QCheckBox("Overwrite partitions or a filesystem")
        self.overwrite.setToolTip(
            "Without it, a device that carries a partition table or a filesystem is refused"
        )
        self.confirm_label = QLabel("Co&nfirm")
        self.confirm_label.setBuddy(self.confirm)
        form.addRow(self.confirm_label, self.confirm)
        form.addRow("", self.overwrite)
        self.errors.add_row(OTHER)
        self._allow_confirmation(False)
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
        """The hardware map's targets, read again (start-up, a hotplug, a new plan). Directories
        picked with the button stay; what is selected stays selected, found by identity; when
        it is no longer there it stays on show as gone."""
        current = self.current_target()
        offered = [t for t in targets if t.kind is not TargetKind.DIRECTORY]
        known = {t.identity for t in offered}
        picked = [t for t in self._targets if t.kind is TargetKind.DIRECTORY]
        known |= {t.identity for t in picked}
        gone = []
        if current is not None and current.identity not in known:
            gone.append(current if current.gone else current.as_gone(_gone_note(current)))
        self._fill([*gone, *picked, *offered], current)
        self._check_directories()

    def _fill(self, targets: list[BenchTarget], keep: BenchTarget | None) -> None:
        self._targets = targets
        self.target.blockSignals(True)
        self.target.clear()
        for target in targets:
            self.target.addItem(target.label)
        wanted = keep.identity if keep is not None else None
        index = next((i for i, t in enumerate(targets) if t.identity == wanted), 0)
        self.target.setCurrentIndex(index if targets else -1)
        self.target.blockSignals(False)
        self._on_target()

    def _check_directories(self) -> None:
        """Whether the picked directories still exist, looked at off the GUI thread (a hung
        network mount must not freeze the window)."""
        paths = [t.path for t in self._targets if t.kind is TargetKind.DIRECTORY]
        if not paths:
            return

        def seen(exists: dict[str, bool]) -> None:
            if shiboken6.isValid(self):
                self._mark_directories(exists)

        run_in_background(lambda: {path: os.path.isdir(path) for path in paths}, seen)

    def _mark_directories(self, exists: dict[str, bool]) -> None:
        changed = False
        for index, target in enumerate(self._targets):
            if target.kind is not TargetKind.DIRECTORY or target.path not in exists:
                continue
            if exists[target.path] == target.gone:  # it went away, or came back
                fresh = directory_target(target.path)
                self._targets[index] = (
                    fresh if exists[target.path] else fresh.as_gone(_gone_note(fresh))
                )
                self.target.setItemText(index, self._targets[index].label)
                changed = True
        if changed:
            self._on_target()

    def add_directory(self, path: str) -> None:
        """A directory the admin chose: first in the list, and selected."""
        found = next(
            (
                i
                for i, t in enumerate(self._targets)
                if t.identity == directory_target(path).identity
            ),
            None,
        )
        if found is None:
            self._targets.insert(0, directory_target(path))
            self.target.blockSignals(True)
            self.target.insertItem(0, self._targets[0].label)
            self.target.blockSignals(False)
            found = 0
        self.target.setCurrentIndex(found)
        self._on_target()
        self._check_directories()

    def targets(self) -> list[BenchTarget]:
        """What the Target box lists, in its order."""
        return list(self._targets)

    def current_target(self) -> BenchTarget | None:
        index = self.target.currentIndex()
        return self._targets[index] if 0 <= index < len(self._targets) else None

    def _choose_directory(self) -> None:
        path = file_places.chosen(
            QFileDialog.getExistingDirectory(self, BENCH_DIRECTORY, file_places.start_folder())
        )
        if path:
            self.add_directory(path)

    def _on_target(self) -> None:
        self.errors.clear()
        target = self.current_target()
        self.target_note.setText(target.note if target else NO_TARGET)
        self.target.setToolTip(target.label.strip() if target else "")
        self._allow_confirmation(self._writes_to_device())
        identity = target.identity if target else None
        if identity != self._shown:
            self._shown = identity
            self.targetChanged.emit()
            if target is not None and self.preset.currentText() != CUSTOM_PRESET:
                self.presetChosen.emit(self.preset.currentText())  # sized for this target

    def _writes_to_device(self) -> bool:
        target = self.current_target()
        return target is not None and target.is_device and not target.gone

    def _allow_confirmation(self, allowed: bool) -> None:
        """Always on show, enabled for a device only: rows that came and went moved the
        form under the admin's pointer."""
        for widget in (self.confirm, self.overwrite, self.confirm_label):
            widget.setEnabled(allowed)
        self.confirm.setPlaceholderText(
            "serial (or path) to allow writing" if allowed else "only a device needs it"
        )

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
            self.file_size.setText(size_text(values.size_bytes))
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
        self.errors.clear()  # what they said may no longer hold
        if not self._applying_preset and self.preset.currentText() != CUSTOM_PRESET:
            self.preset.blockSignals(True)
            self.preset.setCurrentText(CUSTOM_PRESET)
            self.preset.blockSignals(False)
            self.preset_note.setText(CUSTOM_NOTE)

    # --- the request -----------------------------------------------------------------------
    def phases(self) -> list[Phase]:
        return [phase for phase, box in self.phase_boxes.items() if box.isChecked()]

    def start_args(self) -> BenchStartArgs:
        """bench.start's arguments; SpecError naming the field when the form is incomplete or
        out of bounds (the helper checks the same bounds again: it trusts no client)."""
        target = self.current_target()
        if target is None:
            raise field_error("target", "pick a target first")
        if target.gone:
            raise field_error(
                "target", f"{target.path}: {gone_reason(target)}; pick another target"
            )
        if not target.runnable:
            raise field_error("target", target.note)
        spec = self.spec_for(target.path)
        raw = self._writes_to_device()
        confirm = self.confirm.text().strip() if raw else ""
        return BenchStartArgs(
            spec,
            confirm_serial=confirm or None,
            overwrite=raw and self.overwrite.isChecked(),
        )

    def spec_for(self, path: str) -> BenchSpec:
        """The form's settings run on `path` (a group run's directory on every host);
        FieldError naming the field when incomplete or out of bounds."""
        phases = self.phases()
        if not phases:
            raise field_error("phases", "tick at least one phase")
        try:
            size = parse_size(self.file_size.text().strip())
        except SpecError as exc:
            raise field_error("size", str(exc)) from None
        spec = BenchSpec(
            target=path,
            size_bytes=size,
            block_bytes=parse_size(self.block.currentText()),
            direct=self.direct.isChecked(),
            phases=tuple(phases),
            queue_depth=self.queue_depth.value(),
            streams=self.streams.value(),
            repetitions=self.repetitions.value(),
            runtime_cap_s=float(self.runtime_cap.value()),
            sample_rate_hz=float(self.rate.value()),
            engine=str(self.engine.currentData()),
            cpu_latency_us=self.latency.held_us(),
            **self.steady.spec_fields(),
        )
        if problems := spec.problems():
            raise spec_problems(problems)
        return spec

    def show_error(self, error: SpecError) -> None:
        """`error` under its field (the form's last row for one of no field), and the focus
        there, so the value can be put right at once."""
        label = self.errors.show(error)
        fields: dict[str, QWidget] = {
            "target": self.target,
            "phases": next(iter(self.phase_boxes.values())),
            "size": self.file_size,
            "block": self.block,
            "queue_depth": self.queue_depth,
        }
        field = fields.get(getattr(error, "field", OTHER))
        if field is not None:
            field.setFocus(Qt.FocusReason.OtherFocusReason)
            if field is self.file_size:
                self.file_size.selectAll()
        self.errorShown.emit(label)

    def load_spec(self, spec: BenchSpec, repetitions: int) -> list[str]:
        """A stored run's spec (as the helper normalised it) in the form, with `repetitions`
        passes: to run it again for a verdict. Returns what could not be carried over, each
        as a line to show (the form keeps its own value there)."""
        left_out: list[str] = []
        if spec.target:
            known = next((i for i, t in enumerate(self._targets) if t.path == spec.target), None)
            if known is not None:
                self.target.setCurrentIndex(known)
            elif spec.target.startswith("/dev/"):
                left_out.append(f"target {spec.target} is not among the devices found now")
            else:
                self.add_directory(spec.target)
        self.preset.setCurrentText(CUSTOM_PRESET)
        self._applying_preset = True
        try:
            if spec.phases:
                for phase, box in self.phase_boxes.items():
                    box.setChecked(phase in spec.phases)
            self.file_size.setText(size_text(spec.size_bytes))
            block = size_text(spec.block_bytes)
            if self.block.findText(block) < 0:  # a size the list lacks
                self.block.addItem(block)
            self.block.setCurrentText(block)
            self.direct.setChecked(spec.direct)
            for value, spin in (
                (spec.queue_depth, self.queue_depth),
                (spec.streams, self.streams),
                (spec.sample_rate_hz, self.rate),
                (spec.runtime_cap_s, self.runtime_cap),
            ):
                spin.setValue(round(value))
            self.repetitions.setValue(repetitions)
            held_us = spec.cpu_latency_us
            if held_us is not None and not 0 <= held_us <= MAX_CPU_LATENCY_US:
                left_out.append(f"a CPU wake-up limit of {held_us:,} \u00b5s is out of range")
                held_us = None
            self.latency.show_held(held_us)
            self.steady.show_spec(spec.steady_state, spec.precondition, spec.max_rounds)
            if spec.engine:
                found = self.engine.findData(spec.engine)
                if found >= 0:
                    self.engine.setCurrentIndex(found)
                else:
                    left_out.append(f"engine {spec.engine} is not available here")
            if spec.random_block_bytes != 4096:
                left_out.append("random phases use 4 KiB blocks here")
            self.preset_note.setText(
                f"Set up as a stored run, with {count_noun(repetitions, 'pass')}."
            )
        finally:
            self._applying_preset = False
        return left_out

    def set_running(self, running: bool) -> None:
        for child in self.findChildren(QWidget):
            child.setEnabled(not running)
        if not running:
            self._allow_confirmation(self._writes_to_device())
            self.latency.sync()
            self.steady.sync()


def _gone_note(target: BenchTarget) -> str:
    return f"Gone: {gone_reason(target)}. Pick another target."


PRESET_DEFAULT = PresetValues(
    (Phase.SEQ_WRITE, Phase.REWRITE, Phase.SEQ_READ, Phase.RANDOM_READ), 2**30, note=CUSTOM_NOTE
)

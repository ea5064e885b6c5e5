"""Rows of the Benchmark form besides its fields: hints of a fixed height, and errors each on
a line right under the field it is about.

A value that cannot run ("1GG" for a size) was reported above the plots, far from its field
and beside the previous run's progress; here it stays under its field until the form is edited.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QWidget

from stripewise.model.bench import SpecError

ERROR_COLOUR = "#c9403c"  # as the "Run on" rows' error line
OTHER = "other"  # a problem no field row is kept for: shown under the form's last row

# BenchSpec.problems() starts each line with the spec's name of the field
_SPEC_FIELDS = {
    "target": "target",
    "size": "size",
    "block_size": "block",
    "random_block_size": "block",
    "phases": "phases",
    "queue_depth": "queue_depth",
    "streams": "queue_depth",  # a spin box keeps it in range: only the buffers' limit is left
}


HINT_LINES = 3  # room kept for a hint, so the form does not jump as hints come and go


class HintLabel(QLabel):
    """A word-wrapped hint with a fixed height of `lines` lines, shown or empty alike."""

    def __init__(self, lines: int = HINT_LINES) -> None:
        super().__init__()
        self._lines = lines
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self._reserve()

    def _reserve(self) -> None:
        margins = self.contentsMargins()
        line = self.fontMetrics().lineSpacing()
        self.setFixedHeight(self._lines * line + margins.top() + margins.bottom())

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:
            self._reserve()
        super().changeEvent(event)


class FieldError(SpecError):
    """A form value that cannot run: its lines by the field each is shown under."""

    def __init__(self, lines: dict[str, list[str]]) -> None:
        super().__init__("; ".join(line for found in lines.values() for line in found))
        self.lines = lines

    @property
    def field(self) -> str:
        return next(iter(self.lines))


def field_error(field: str, message: str) -> FieldError:
    return FieldError({field: [message]})


def spec_problems(problems: list[str]) -> FieldError:
    """BenchSpec.problems() grouped by the field each names."""
    lines: dict[str, list[str]] = {}
    for problem in problems:
        name = problem.partition(":")[0].strip()
        lines.setdefault(_SPEC_FIELDS.get(name, OTHER), []).append(problem)
    return FieldError(lines)


class FieldErrors:
    """Hidden rows of a QFormLayout, one under each field that can be wrong."""

    def __init__(self, form: QFormLayout) -> None:
        self._form = form
        self.labels: dict[str, QLabel] = {}

    def add_row(self, field: str) -> None:
        """The row for `field`: call right after adding the field's own row."""
        label = QLabel()
        label.setObjectName("fieldError")
        label.setWordWrap(True)
        label.setStyleSheet(f"color: {ERROR_COLOUR};")
        self._form.addRow("", label)
        self._form.setRowVisible(label, False)
        self.labels[field] = label

    def show(self, error: SpecError) -> QLabel:
        """Each line of `error` under its field; returns the label of the first field."""
        self.clear()
        lines = error.lines if isinstance(error, FieldError) else {OTHER: [str(error)]}
        shown = []
        for field, texts in lines.items():
            label = self.labels[field if field in self.labels else OTHER]
            label.setText("\n".join(filter(None, (label.text(), *texts))))
            self._form.setRowVisible(label, True)
            shown.append(label)
        return shown[0]

    def clear(self) -> None:
        for label in self.labels.values():
            if label.text():
                label.clear()
                self._form.setRowVisible(label, False)

    def shown(self) -> dict[str, str]:
        """Field -> the error under it, for the fields that have one."""
        return {field: label.text() for field, label in self.labels.items() if label.text()}


def add_pair(form: QFormLayout, first: tuple[str, QWidget], second: tuple[str, QWidget]) -> None:
    """Two fields on one row of the form ("Queue depth [1]  Streams [1]"), each label with its
    mnemonic on its own field: rows saved so the form fits 1024x768 with a device's rows."""
    labels = []
    for text, field in (first, second):
        label = QLabel(text)
        label.setBuddy(field)
        labels.append(label)
    pair = QHBoxLayout()
    pair.addWidget(first[1], 1)
    pair.addWidget(labels[1])
    pair.addWidget(second[1], 1)
    form.addRow(labels[0], pair)

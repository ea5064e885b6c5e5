"""A small editor for a chassis layout: its product and panels (face, rows, columns, first
number, numbering origin and direction), with the bays drawn as they will be numbered."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from PySide6.QtCore import QSize
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from stripewise.gui import help_dialogs as says
from stripewise.gui.bay_view import BayView
from stripewise.gui.bench_form_rows import ERROR_COLOUR
from stripewise.gui.screen_fit import resize_within_screen
from stripewise.model.bay_map import PlacedBay
from stripewise.model.chassis import (
    MAX_BAYS,
    MAX_FIRST,
    MAX_TEXT,
    ChassisLayout,
    Direction,
    Face,
    LabelStyle,
    Origin,
    Panel,
    control_character,
)

_ORIGIN_WORDS = {
    Origin.TOP_LEFT: "top left",
    Origin.TOP_RIGHT: "top right",
    Origin.BOTTOM_LEFT: "bottom left",
    Origin.BOTTOM_RIGHT: "bottom right",
}
_DIRECTION_WORDS = {Direction.ACROSS: "along each row", Direction.DOWN: "down each column"}
_LABEL_WORDS = {LabelStyle.NUMBER: "number (12)", LabelStyle.ROW_COLUMN: "row-column (2-03)"}


def _text_problem(what: str, text: str) -> str | None:
    """What a layout file refuses in a text key (model.chassis reads it back)."""
    if len(text) > MAX_TEXT:
        return f"the {what} is longer than {MAX_TEXT} characters"
    if control_character(text) is not None:
        return f"the {what} holds a control character (a tab or line break, say)"
    return None


def _combo(words: dict[str, str]) -> QComboBox:
    combo = QComboBox()
    for value, text in words.items():
        combo.addItem(text, value)
    return combo


class BayLayoutDialog(QDialog):
    def __init__(
        self,
        layout: ChassisLayout | None,
        product: str | None,
        templates: list[ChassisLayout],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Chassis Layout")
        start = layout or ChassisLayout(product or "", panels=(Panel(),))
        self.layout_ = replace(start, product=product or start.product)
        self.panel_index = 0
        outer = QVBoxLayout(self)
        outer.addWidget(says.purpose_label(says.CHASSIS_LAYOUT))
        form = QFormLayout()
        self.start_from = QComboBox()
        self.start_from.addItem("(as it is)", None)
        for template in templates:
            self.start_from.addItem(template.name, template)
        self.start_from.activated.connect(self._start_from)
        form.addRow("Start from:", self.start_from)
        self.product = QLineEdit(self.layout_.product)
        self.product.setToolTip("The DMI product name this layout is kept under")
        form.addRow("Product:", self.product)
        self.title = QLineEdit(self.layout_.title)
        form.addRow("Title:", self.title)
        self.source = QLineEdit(self.layout_.source)
        self.source.setPlaceholderText("where the numbering comes from (the labels on the bays)")
        form.addRow("Numbering from:", self.source)
        self.labels = _combo({k.value: v for k, v in _LABEL_WORDS.items()})
        form.addRow("Bay labels:", self.labels)

        panels = QHBoxLayout()
        self.which = QComboBox()
        self.which.activated.connect(self._pick_panel)
        self.add = QPushButton("&Add Panel")
        self.add.clicked.connect(self._add_panel)
        self.remove = QPushButton("&Remove Panel")
        self.remove.clicked.connect(self._remove_panel)
        for widget in (self.which, self.add, self.remove):
            panels.addWidget(widget)
        form.addRow("Panel:", panels)
        self.face = _combo({f.value: f.value for f in Face})
        self.rows, self.columns, self.first = QSpinBox(), QSpinBox(), QSpinBox()
        # the file's own limits: a layout read from a file is shown as it is, never clamped
        limits = ((self.rows, 1, MAX_BAYS), (self.columns, 1, MAX_BAYS), (self.first, 0, MAX_FIRST))
        for spin, low, high in limits:
            spin.setRange(low, high)
        self.origin = _combo({k.value: v for k, v in _ORIGIN_WORDS.items()})
        self.direction = _combo({k.value: v for k, v in _DIRECTION_WORDS.items()})
        self.prefix = QLineEdit()
        self.prefix.setPlaceholderText("before each label of this panel, e.g. rear")
        rows: tuple[tuple[str, QWidget], ...] = (
            ("Face:", self.face),
            ("Rows:", self.rows),
            ("Columns:", self.columns),
            ("First number:", self.first),
            ("First bay at:", self.origin),
            ("Numbers run:", self.direction),
            ("Label prefix:", self.prefix),
        )
        for text, field in rows:
            form.addRow(text, field)
        outer.addLayout(form)
        self.preview = BayView(preview=True)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.preview)
        scroll.setMinimumHeight(160)
        outer.addWidget(scroll, 1)
        self.why = QLabel()  # why Save is greyed, and what to do: seen, not only hovered
        self.why.setObjectName("layoutProblem")
        self.why.setWordWrap(True)
        self.why.setStyleSheet(f"color: {ERROR_COLOUR};")
        outer.addWidget(self.why)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        outer.addWidget(buttons)
        self._show_layout()
        for combo in (self.labels, self.face, self.origin, self.direction):
            combo.currentIndexChanged.connect(self._changed)
        for spin in (self.rows, self.columns, self.first):
            spin.valueChanged.connect(self._changed)
        for line in (self.product, self.title, self.source, self.prefix):
            line.setMaxLength(MAX_TEXT)
            line.textChanged.connect(self._changed)
        resize_within_screen(self, QSize(760, 680))

    def _show_layout(self) -> None:
        """The form shows the layout's text and its current panel."""
        layout, panel = self.layout_, self.layout_.panels[self.panel_index]
        widgets: tuple[QWidget, ...] = (self.product, self.title, self.source, self.labels)
        widgets += (self.face, self.rows, self.columns, self.first, self.origin)
        widgets += (self.direction, self.prefix)
        for widget in widgets:
            widget.blockSignals(True)
        self.product.setText(layout.product)
        self.title.setText(layout.title)
        self.source.setText(layout.source)
        self.labels.setCurrentIndex(self.labels.findData(layout.labels.value))
        self.which.clear()
        for index, each in enumerate(layout.panels):
            self.which.addItem(f"{index + 1}: {each.face.value} {each.rows} x {each.columns}")
        self.which.setCurrentIndex(self.panel_index)
        self.face.setCurrentIndex(self.face.findData(panel.face.value))
        self.rows.setValue(panel.rows)
        self.columns.setValue(panel.columns)
        self.first.setValue(panel.first)
        self.origin.setCurrentIndex(self.origin.findData(panel.origin.value))
        self.direction.setCurrentIndex(self.direction.findData(panel.direction.value))
        self.prefix.setText(panel.prefix)
        for widget in widgets:
            widget.blockSignals(False)
        self.remove.setEnabled(len(layout.panels) > 1)
        self._draw()

    def _changed(self) -> None:
        panel = Panel(
            face=Face(self.face.currentData()),
            rows=self.rows.value(),
            columns=self.columns.value(),
            first=self.first.value(),
            origin=Origin(self.origin.currentData()),
            direction=Direction(self.direction.currentData()),
            prefix=self.prefix.text(),
        )
        panels = list(self.layout_.panels)
        panels[self.panel_index] = panel
        self.layout_ = replace(
            self.layout_,
            product=self.product.text().strip(),
            title=self.title.text().strip(),
            source=self.source.text().strip(),
            labels=LabelStyle(self.labels.currentData()),
            panels=tuple(panels),
        )
        self.which.setItemText(
            self.panel_index,
            f"{self.panel_index + 1}: {panel.face.value} {panel.rows} x {panel.columns}",
        )
        self._draw()

    def problem(self) -> str | None:
        """Why the layout cannot be saved as it is (what its file would refuse), or None."""
        layout = self.layout_
        if not layout.product:
            return "Give the product name it is for."
        texts = [("product", layout.product), ("title", layout.title), ("numbering", layout.source)]
        texts += [(f"label prefix of panel {i + 1}", p.prefix) for i, p in enumerate(layout.panels)]
        for what, text in texts:
            problem = _text_problem(what, text)
            if problem:
                return problem[0].upper() + problem[1:] + "."
        if sum(p.size for p in layout.panels) > MAX_BAYS:
            return f"More than {MAX_BAYS} bays: a layout holds at most {MAX_BAYS}."
        twice = sorted(x for x, n in Counter(b.label for b in layout.bays).items() if n > 1)
        if twice:
            named = ", ".join(twice[:3]) + (", ..." if len(twice) > 3 else "")
            if layout.labels is LabelStyle.ROW_COLUMN:  # row and column alone: a prefix differs
                advice = "give one of their panels a label prefix (rear, say)"
            else:
                advice = "give one of their panels another first number or a label prefix"
            return f"Two panels have bays labelled {named}: {advice}."
        return None

    def _draw(self) -> None:
        problem = self.problem()
        self.save_button.setEnabled(problem is None)
        self.save_button.setToolTip(problem or "")
        self.why.setText(problem or "")
        self.why.setVisible(problem is not None)
        placed = [PlacedBay(bay, None, None) for bay in self.layout_.bays]
        self.preview.set_bays(self.layout_, placed)

    def _start_from(self, index: int) -> None:
        template = self.start_from.itemData(index)
        if isinstance(template, ChassisLayout):
            product = self.product.text().strip() or template.product
            self.layout_ = replace(template, product=product, ports={})
            self.panel_index = 0
            self._show_layout()

    def _pick_panel(self, index: int) -> None:
        self.panel_index = max(0, index)
        self._show_layout()

    def _add_panel(self) -> None:
        """A back panel numbered on from the last bay; where its labels would still repeat
        those of a panel before (row-column labels count from 1-01 on every panel), a prefix
        of its own."""
        first = min(max(b.number for b in self.layout_.bays) + 1, MAX_FIRST)
        taken = {p.prefix for p in self.layout_.panels}
        count = len(self.layout_.panels)
        for prefix in ("", "rear ", *(f"panel {n} " for n in range(count + 1, count + 9))):
            if prefix in taken and prefix:
                continue
            panel = Panel(face=Face.BACK, rows=1, columns=4, first=first, prefix=prefix)
            layout = replace(self.layout_, panels=(*self.layout_.panels, panel))
            labels = [b.label for b in layout.bays]
            if len(set(labels)) == len(labels):
                break
        self.layout_ = layout
        self.panel_index = len(self.layout_.panels) - 1
        self._show_layout()

    def _remove_panel(self) -> None:
        panels = list(self.layout_.panels)
        del panels[self.panel_index]
        self.layout_ = replace(self.layout_, panels=tuple(panels))
        self.panel_index = 0
        self._show_layout()

    def result_layout(self) -> ChassisLayout:
        return self.layout_

"""The Tuning page's layout, apart from the page: the device list beside the preset, its
preview and the buttons, and below them the geometry and A/B results.

At 800x600 the preview comes first: it keeps a few rows and its Current/New/Unit columns
in sight, and the device list (whose labels wrap) gives way to it.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from stripewise.gui.flow_layout import FlowLayout
from stripewise.gui.pages import page_title

LIST_MIN_WIDTH = 120  # "loop0  (loop device," in two lines; the rest of a label wraps
SETTINGS_MIN_WIDTH = 470  # Device to Unit of "all (global)  vm.dirty_background_ratio  10"


class TuningWidgets(Protocol):
    """What the layout places of the page's own widgets (read-only: the page keeps them)."""

    @property
    def ab_button(self) -> QWidget: ...

    @property
    def apply_button(self) -> QWidget: ...

    @property
    def description(self) -> QWidget: ...

    @property
    def geometry_text(self) -> QWidget: ...

    @property
    def persist_button(self) -> QWidget: ...

    @property
    def preset_box(self) -> QWidget: ...

    @property
    def preview(self) -> QWidget: ...

    @property
    def restored_note(self) -> QWidget: ...

    @property
    def revert_button(self) -> QWidget: ...

    @property
    def summary(self) -> QWidget: ...

    @property
    def targets(self) -> QWidget: ...

    @property
    def unpersist_button(self) -> QWidget: ...

    @property
    def verify_button(self) -> QWidget: ...


def build_layout(page: QWidget, widgets: TuningWidgets) -> None:
    left = widgets.targets
    left.setMinimumWidth(LIST_MIN_WIDTH)
    right = QWidget()
    right.setMinimumWidth(SETTINGS_MIN_WIDTH)  # the list shrinks first, then the page scrolls
    right_layout = QVBoxLayout(right)
    right_layout.setContentsMargins(8, 0, 0, 0)
    row = QHBoxLayout()
    preset_label = QLabel("Pre&set")
    preset_label.setBuddy(widgets.preset_box)
    row.addWidget(preset_label)
    row.addWidget(widgets.preset_box, 1)
    right_layout.addLayout(row)
    right_layout.addWidget(widgets.description)
    right_layout.addWidget(widgets.preview, 2)
    right_layout.addWidget(widgets.restored_note)
    right_layout.addWidget(widgets.summary)
    buttons = FlowLayout()  # wraps rather than clipping at 800 px
    for button in (
        widgets.apply_button,
        widgets.verify_button,
        widgets.revert_button,
        widgets.persist_button,
        widgets.unpersist_button,
    ):
        buttons.addWidget(button)
    right_layout.addLayout(buttons)
    results = QHBoxLayout()  # the A/B button sits over where its results appear
    results_label = QLabel("Filesystem geometry of the selected arrays; A/B results")
    results_label.setWordWrap(True)
    results.addWidget(results_label, 1)
    results.addWidget(widgets.ab_button)
    right_layout.addLayout(results)
    right_layout.addWidget(widgets.geometry_text, 1)
    split = QSplitter()
    split.addWidget(left)
    split.addWidget(right)
    split.setStretchFactor(0, 1)  # a narrower window takes from the list too, not the table
    split.setStretchFactor(1, 3)
    split.setSizes([340, 740])  # "loop0  (loop device, 268.4 MB, free)" whole at 1280 px
    split.setChildrenCollapsible(False)
    layout = QVBoxLayout(page)
    layout.setContentsMargins(16, 14, 16, 10)
    layout.addWidget(page_title("Tuning"))
    layout.addWidget(split, 1)

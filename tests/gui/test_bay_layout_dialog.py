"""The chassis layout editor: what it lets Save is what a layout file may hold, a layout
read from a file is shown as it is, and why Save is greyed is written in the dialog."""

from __future__ import annotations

from dataclasses import replace

import pytest

from stripewise.gui.bay_layout_dialog import BayLayoutDialog
from stripewise.model.chassis import (
    MAX_TEXT,
    ChassisLayout,
    LabelStyle,
    Panel,
    dump_layout,
    parse_layout,
)


@pytest.fixture
def dialog(qtbot) -> BayLayoutDialog:
    editor = BayLayoutDialog(None, "Acme WS", [])
    qtbot.addWidget(editor)
    editor.show()
    qtbot.waitExposed(editor)
    return editor


def test_a_title_too_long_for_the_file_is_never_saved(dialog: BayLayoutDialog) -> None:
    """A 250-character title was saved, then refused at the next start ('longer than 200
    characters'): the layout was gone. Each text field holds what the file may hold."""
    for field in (dialog.product, dialog.title, dialog.source, dialog.prefix):
        field.setText("x" * 250)
        layout = dialog.result_layout()
        assert dialog.save_button.isEnabled()
        assert parse_layout(dump_layout(layout), "saved.toml") == layout
        assert len(field.text()) == MAX_TEXT
    dialog.layout_ = replace(dialog.layout_, title="x" * (MAX_TEXT + 1))  # as a file never is
    assert dialog.problem() == f"The title is longer than {MAX_TEXT} characters."


@pytest.mark.parametrize("text", ["Acme\tWS", "Acme\nWS", "Acme\x7fWS", "Acme\x85WS"])
def test_control_characters_are_refused_as_the_file_refuses_them(
    dialog: BayLayoutDialog, text: str
) -> None:
    for field, what in ((dialog.title, "title"), (dialog.prefix, "label prefix of panel 1")):
        field.setText(text)
        assert not dialog.save_button.isEnabled()
        assert dialog.why.isVisible() and f"{what} holds a control character" in (dialog.why.text())
        field.setText("Acme WS")
        assert dialog.save_button.isEnabled() and not dialog.why.isVisible()


def test_a_layout_at_the_files_limits_is_shown_as_it_is(qtbot) -> None:
    """84 columns numbered from 10000 are a valid file: editing only the title kept 64 columns
    from 9999 (the spin boxes' old ranges)."""
    wide = Panel(rows=1, columns=84, first=10_000)
    tall = Panel(rows=1024 - 84, columns=1, first=0, prefix="inner ")
    start = ChassisLayout("Acme JBOD", panels=(wide, tall))
    editor = BayLayoutDialog(start, None, [])
    qtbot.addWidget(editor)
    editor.title.setText("84 across")
    assert editor.result_layout().panels == (wide, tall)
    editor.which.activated.emit(1)
    editor.title.setText("84 across, and a column")
    assert editor.result_layout().panels == (wide, tall) and editor.save_button.isEnabled()


def test_add_panel_in_row_column_labels_gets_a_prefix_and_save_says_why_not(
    dialog: BayLayoutDialog,
) -> None:
    """Row-column labels count from 1-01 on every panel: a new panel labelled as the first
    greyed Save with the reason in a tooltip only, advising a first number that changes no
    row-column label. Now the new panel has a prefix of its own, and a clash is written out."""
    dialog.labels.setCurrentIndex(dialog.labels.findData(LabelStyle.ROW_COLUMN.value))
    dialog.add.click()
    layout = dialog.result_layout()
    labels = [bay.label for bay in layout.bays]
    assert len(set(labels)) == len(labels) and "rear 1-01" in labels
    assert dialog.prefix.text() == "rear " and dialog.save_button.isEnabled()
    assert not dialog.why.isVisible()
    preview = dialog.preview  # each bay's label whole: four `rear …` would say nothing
    assert [preview.shown_lines(p)[0] for p in preview.placed] == labels
    dialog.add.click()  # a third panel: another prefix still, read apart from the label
    assert dialog.prefix.text() == "panel 3 " and dialog.save_button.isEnabled()
    assert "panel 3 1-01" in [bay.label for bay in dialog.result_layout().bays]  # not 3:1-01

    dialog.prefix.setText("")  # labelled as the first panel again
    assert not dialog.save_button.isEnabled() and dialog.why.isVisible()
    assert dialog.why.text() == (
        "Two panels have bays labelled 1-01, 1-02, 1-03, ...: "
        "give one of their panels a label prefix (rear, say)."
    )
    dialog.labels.setCurrentIndex(dialog.labels.findData(LabelStyle.NUMBER.value))
    assert dialog.save_button.isEnabled(), "numbers run on from panel to panel"
    dialog.first.setValue(0)
    assert "another first number or a label prefix" in dialog.why.text()
    assert dialog.why.isVisible() and not dialog.save_button.isEnabled()

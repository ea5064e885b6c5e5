"""The chassis layout editor: what it lets Save is what a layout file may hold, and a layout
read from a file is shown as it is."""

from __future__ import annotations

from dataclasses import replace

import pytest

from stripewise.gui.bay_layout_dialog import BayLayoutDialog
from stripewise.model.chassis import (
    MAX_TEXT,
    ChassisLayout,
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
        assert f"{what} holds a control character" in dialog.save_button.toolTip()
        field.setText("Acme WS")
        assert dialog.save_button.isEnabled() and not dialog.save_button.toolTip()


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

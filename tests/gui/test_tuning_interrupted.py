"""The Tuning page after a helper was SIGKILLed in the middle of an apply: the page's helper
puts the values back as it starts, and the page says which, in a note that stays, as soon as
it is shown when that asks for no password."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from stripewise.environment import PrivilegeMode, Privileges
from tests.fixtures.killed_apply import killed_apply
from tests.fixtures.loops import needs_loop
from tests.fixtures.stalled_loop import needs_fsfreeze
from tests.fixtures.tuning_state import device_values
from tests.gui.conftest import WindowFactory
from tests.gui.test_tuning_page import click_and_wait, tuning_page, tuning_ready


@needs_loop
@needs_fsfreeze
def test_the_page_says_what_the_helper_put_back(
    make_window: WindowFactory, qtbot: Any, tmp_path: Path
) -> None:
    """Said as the page is first shown (its helper starts as root: no password asked), not
    only after the first Apply, Verify or Revert."""
    state = tmp_path / "helper-state"  # the window's helper keeps its journal here
    state.mkdir(mode=0o755)
    with killed_apply(state) as killed:
        _window, page = tuning_ready(make_window, qtbot, killed.first)
        qtbot.waitUntil(page.restored_note.isVisible, timeout=20_000)  # nothing clicked
        for loop in killed.loops:
            assert device_values(loop) == killed.found[loop.name]
        note = page.restored_note.text()
        assert note.startswith(
            f"Restored 2 values an interrupted apply had left (journal {killed.journal}): "
        )
        for loop in (killed.first, killed.stalled):
            assert f"{loop.name}: scheduler {killed.schedulers[loop.name]} -> " in note
        page.preset_box.setCurrentIndex(page.preset_box.findData("kernel-defaults"))
        with qtbot.waitSignal(page.service.previewReady, timeout=10_000):
            page.select_devices([killed.first.name])
        first = killed.first.name
        # the preview reads what was put back: Apply would otherwise journal half-applied values
        assert _current(page, first) == killed.found[first]["scheduler"]
        if shot := os.environ.get("STRIPEWISE_SHOT"):
            page.window().grab().save(shot)
        click_and_wait(qtbot, page, page.verify_button)  # said once: the note stays as it is
        assert page.restored_note.text() == note


def test_showing_the_page_asks_no_password(make_window: WindowFactory, qtbot: Any) -> None:
    """Through pkexec the helper would put up polkit's dialog: the page waits for a verb."""
    window = make_window(view="hardware")
    page = tuning_page(window)
    window.helper.set_privileges(Privileges(PrivilegeMode.PKEXEC, "through pkexec"))
    window.show_view("tuning")
    qtbot.waitUntil(page.isVisible, timeout=5_000)
    assert not window.helper.running and not page.restored_note.isVisible()
    window.helper.set_privileges(Privileges(PrivilegeMode.ROOT, "root"))  # no password now
    qtbot.waitUntil(lambda: window.helper.running, timeout=5_000)


def _current(page: Any, device: str) -> object:
    (change,) = [
        c for c in page.changes if c.setting.device == device and c.setting.key == "scheduler"
    ]
    return change.current

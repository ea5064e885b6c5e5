"""The planner's dialogs on an 800x600 console (README: "The window fits the console's usual
modes, 800x600"): each opens within the screen with its buttons in sight and its text whole.
Add Hardware opened at 840x634 (its least height 620) and Spread at 975 px wide, its reasons on
one line each: their Close and Apply Swaps were off the screen."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QScreen
from PySide6.QtWidgets import QAbstractButton, QDialog, QLabel, QScrollArea, QWidget

from stripewise.gui.planner_catalog import CatalogDialog
from stripewise.gui.planner_commands import SerialsDialog
from stripewise.gui.planner_dialogs import CommandsDialog, CompareDialog, SpreadDialog
from stripewise.gui.screen_fit import HEIGHT_SHARE, WIDTH_SHARE
from stripewise.model.placement import Swap
from stripewise.planner.plan_file import load_plan
from stripewise.services.planner import PlannerService

CONSOLE = QRect(0, 0, 800, 600)
EXAMPLE_PLAN = Path(__file__).resolve().parents[2] / "docs" / "examples" / "x4500-raid6.toml"
# (out, in): the example's disks on 0000:02:01.0 and 0000:02:02.0 to other controllers
MOVES = [("sdy", "sdas"), ("sdz", "sdat"), ("sdac", "sdag"), ("sdad", "sdah")] * 4


@pytest.fixture(autouse=True)
def console(monkeypatch: pytest.MonkeyPatch) -> None:
    """What an 800x600 console's screen tells a window opening on it."""
    monkeypatch.setattr(QScreen, "availableGeometry", lambda _screen: QRect(CONSOLE))


def opened(qtbot: Any, dialog: QDialog) -> QDialog:
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def assert_fits(dialog: QDialog, *buttons: QAbstractButton) -> None:
    """Within the screen, less the window manager's frame, and it cannot be made to need more;
    every button shown whole inside it."""
    room = (CONSOLE.width() * WIDTH_SHARE, CONSOLE.height() * HEIGHT_SHARE)
    least = dialog.minimumSizeHint()
    assert dialog.width() <= room[0] and dialog.height() <= room[1], dialog.size()
    assert least.width() <= room[0] and least.height() <= room[1], least
    for button in buttons:
        place = QRect(button.mapTo(dialog, button.rect().topLeft()), button.size())
        assert button.isVisible() and dialog.rect().contains(place), (button.text(), place)


def assert_unsqueezed(area: QScrollArea) -> None:
    """Its content scrolls down, never sideways, and is never narrower than it needs."""
    inner = area.widget()
    assert isinstance(inner, QWidget)
    assert inner.width() >= inner.minimumSizeHint().width()
    assert inner.width() <= area.viewport().width()


def test_add_hardware_fits_and_its_forms_scroll(qtbot: Any) -> None:
    planner = PlannerService()
    planner.set_plan(load_plan(EXAMPLE_PLAN))
    dialog = opened(qtbot, CatalogDialog(planner))
    close = next(b for b in dialog.findChildren(QAbstractButton) if b.text() == "Close")
    assert_fits(dialog, close)
    (area,) = dialog.findChildren(QScrollArea)
    assert_unsqueezed(area)
    # the reason beside Add Disks (8 disks, 5 ports free) reads whole
    assert dialog.disk_reason.text()
    reason = dialog.disk_reason
    assert reason.height() >= reason.heightForWidth(reason.width())


@pytest.mark.parametrize("count", [4, len(MOVES)])
def test_spread_fits_with_its_reasons_wrapped(qtbot: Any, count: int) -> None:
    plan = load_plan(EXAMPLE_PLAN)
    swaps = tuple(
        Swap(
            out,
            into,
            f"{out} on controller {plan.disk(out).controller} (2 members there) \u2192 {into} "
            f"on controller {plan.disk(into).controller} (0 before), on another bus.",
        )
        for out, into in MOVES[:count]
    )
    dialog = opened(qtbot, SpreadDialog("data", swaps, 17, 100, plan))
    assert isinstance(dialog, SpreadDialog)
    cancel = next(b for b in dialog.findChildren(QAbstractButton) if b.text() == "Cancel")
    assert_fits(dialog, dialog.apply, cancel)
    (area,) = dialog.findChildren(QScrollArea)
    assert_unsqueezed(area)
    reasons = [label for label in area.widget().findChildren(QLabel) if label.wordWrap()]
    assert len(reasons) == count
    for reason in reasons:
        assert reason.height() >= reason.heightForWidth(reason.width()), reason.text()
        assert reason.heightForWidth(reason.width()) > reason.fontMetrics().lineSpacing()
    if count == 4:  # a few swaps show whole, with no scrolling
        assert not area.verticalScrollBar().isVisible()


def test_commands_and_compare_fit(qtbot: Any) -> None:
    plan = load_plan(EXAMPLE_PLAN)
    script = "\n".join(f"# line {n} " + "x" * 120 for n in range(200))
    commands = opened(qtbot, CommandsDialog("Commands for data", script))
    assert_fits(commands, commands.save)
    compare = opened(qtbot, CompareDialog([(plan.name, plan), ("again", plan)]))
    assert isinstance(compare, CompareDialog)
    assert_fits(compare, compare.add_file)


@pytest.mark.parametrize("disks", [13, 24])
def test_create_on_this_machine_fits_with_a_field_per_disk(qtbot: Any, disks: int) -> None:
    """A 24-disk RAID 6 opened its serials dialog 761 px tall: Create Array was off screen."""
    plan = load_plan(EXAMPLE_PLAN)
    known = [disk.id for disk in plan.disks]  # 13 in the example; the rest named only
    names = (known + [f"disk{n}" for n in range(disks)])[:disks]
    array = replace(plan.arrays[0], members=tuple(names), spares=())
    dialog = opened(qtbot, SerialsDialog(plan, array))
    assert isinstance(dialog, SerialsDialog)
    cancel = next(b for b in dialog.findChildren(QAbstractButton) if b.text() == "Cancel")
    assert_fits(dialog, dialog.create_button, cancel)
    (area,) = dialog.findChildren(QScrollArea)
    assert_unsqueezed(area)
    fields = list(dialog.fields.values())
    assert len(fields) == disks
    # the first field is in sight at once; the rest are reached by scrolling, none cut sideways
    first = fields[0]
    assert area.viewport().rect().contains(first.mapTo(area.viewport(), first.rect().topLeft()))

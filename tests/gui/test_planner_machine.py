"""Issue 29.6: Plan This Machine plans this machine, whatever the Hardware page shows; the map on
show, when it is a file, has a button of its own; the legend explains grey ("use unknown"); an
array with too few members says so instead of "a member's speed is not known"."""

from __future__ import annotations

from html import unescape
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QLabel

from stripewise.gui.main_window import MainWindow
from stripewise.gui.planner_page import PlannerPage
from stripewise.inventory import read_live
from stripewise.model.plan import RaidLevel
from stripewise.planner.from_inventory import plan_from_inventory
from tests.fixtures.machines_other import other_server
from tests.gui.conftest import WindowFactory

OTHER_DISKS = ("sda", "sdb", "sdc", "sdd")


@pytest.fixture
def window(make_window: WindowFactory, tmp_path: Path, qtbot: Any) -> MainWindow:
    """`stripewise --inventory backup-07.umockdev --view planner`, this machine read beside."""
    recording = tmp_path / "backup-07.umockdev"
    recording.write_text(other_server().umockdev(), encoding="utf-8")
    made = make_window(view="planner", inventory=recording)
    page = made.page_widgets["planner"]
    assert isinstance(page, PlannerPage)
    qtbot.waitUntil(page.from_machine.isEnabled, timeout=20_000)  # this machine read
    return made


def planner_page(window: MainWindow) -> PlannerPage:
    page = window.page_widgets["planner"]
    assert isinstance(page, PlannerPage)
    return page


def test_plan_this_machine_plans_this_machine_not_the_recording(window: MainWindow) -> None:
    page = planner_page(window)
    here = plan_from_inventory(read_live())  # read by the test itself
    page.from_machine.click()
    plan = page.planner.plan
    assert plan.host == here.host and plan.host != "file:backup-07.umockdev"
    assert [d.id for d in plan.disks] == [d.id for d in here.disks]
    assert not {d.id for d in plan.disks} & set(OTHER_DISKS)
    assert not page.elsewhere.isVisibleTo(page)  # a plan of this machine: nothing to say

    assert page.from_map.isVisibleTo(page) and page.from_map.text() == "Plan backup-07"
    page.from_map.click()  # the recording, by its own button
    plan = page.planner.plan
    assert [d.id for d in plan.disks] == list(OTHER_DISKS)
    assert page.elsewhere.isVisibleTo(page)
    assert "of another machine (the file backup-07.umockdev)" in page.elsewhere.text()


def test_the_legend_explains_grey(window: MainWindow) -> None:
    page = planner_page(window)
    page.planner.plan_on_inventory(window.hardware.inventory)  # the recording on show
    (legend,) = (x for x in page.findChildren(QLabel) if "in a planned array" in x.text())
    text = unescape(legend.text())
    assert "#8a8f98" in text and "use unknown" in text  # the colour of a recorded disk
    chips = {chip.disk.id: chip for chip in page.pool.chips}
    assert chips["sda"].disk.state == "unknown"


def test_too_few_members_is_the_reason_given_for_no_prediction(window: MainWindow) -> None:
    page = planner_page(window)
    page.planner.plan_on_inventory(window.hardware.inventory)
    page.planner.add_array(RaidLevel.RAID6, OTHER_DISKS[:2])
    figures = unescape(page.cards["md0"].figures.text())
    assert "a member's speed is not known" not in figures
    assert "unknown: RAID 6 needs at least 4 members; md0 has 2." in figures

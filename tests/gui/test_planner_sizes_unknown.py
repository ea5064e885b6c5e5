"""The Planner page on a udev dump (issue 16, point 1): the dump records no sizes, so its disks
show "size unknown", never "0 B", and no capacity is computed from them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from stripewise.gui.main_window import MainWindow
from stripewise.gui.planner_page import PlannerPage
from stripewise.model.plan import RaidLevel
from stripewise.planner.catalog import load_catalog
from stripewise.planner.from_inventory import catalog_controller, catalog_disk
from tests.gui.conftest import WindowFactory

SERVER_DUMP = Path(__file__).parents[1] / "fixtures" / "udev" / "server_sata_usb.txt"
USB_RAID5 = ("sdc", "sdd", "sde")


@pytest.fixture
def window(make_window: WindowFactory) -> MainWindow:
    """`stripewise --inventory server.txt --view planner`, then the button that plans it."""
    made = make_window(view="planner", inventory=SERVER_DUMP)
    made.page_widgets["planner"].from_map.click()  # the dump on show
    return made


@pytest.fixture
def page(window: MainWindow) -> PlannerPage:
    planner_page = window.page_widgets["planner"]
    assert isinstance(planner_page, PlannerPage)
    return planner_page


def test_chips_of_a_dump_say_size_unknown(page: PlannerPage) -> None:
    chips = {chip.disk.id: chip for chip in page.pool.chips}
    assert len(chips) == 11
    for disk_id, chip in chips.items():
        assert chip.accessibleName() == f"{disk_id} size unknown"
        assert "size unknown" in chip.toolTip()
        assert "0 B" not in chip.toolTip()


def test_the_pool_says_why_sizes_are_unknown(page: PlannerPage) -> None:
    note = page.pool.sizes_note
    assert note is not None and note.isVisibleTo(page)
    assert note.text().startswith("Size unknown for 11 disks (a udev dump records none)")


def test_the_pool_note_goes_with_the_last_disk_of_unknown_size(page: PlannerPage) -> None:
    """A plan of disks to buy, all with their catalog size: nothing to say."""
    catalog = load_catalog()
    hba_entry, disk_entry = catalog.controller("lsi-9300-8i"), catalog.disk("samsung-870-evo-1tb")
    assert hba_entry is not None and disk_entry is not None
    hba = catalog_controller(hba_entry, "hba")
    disks = tuple(catalog_disk(disk_entry, "hba", f"d{i}") for i in range(2))
    page.planner.set_plan(replace(page.planner.plan, controllers=(hba,), disks=disks))
    assert page.pool.sizes_note is None
    assert [c.accessibleName() for c in page.pool.chips] == ["d0 1.0 TB", "d1 1.0 TB"]


# The card and the summary line are planner_card.py and planner_page.py, which other engineers
# own this round: these say what they must show, and fail until they ask planner.sizes.
def test_the_card_says_the_capacity_is_unknown(page: PlannerPage) -> None:
    name = page.planner.add_array(RaidLevel.RAID5, USB_RAID5)
    figures = page.cards[name].figures.text()
    assert "unknown: no size recorded for sdc, sdd, sde" in figures
    assert "0 B" not in figures and "0%" not in figures


def test_the_summary_says_the_capacity_is_unknown(page: PlannerPage) -> None:
    page.planner.add_array(RaidLevel.RAID5, USB_RAID5)
    assert "usable capacity unknown" in page.summary.text()
    assert "0 B" not in page.summary.text()

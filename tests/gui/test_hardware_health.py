"""Disk health on the map: a failing disk's card carries a badge, its details a health section,
and the planner speaks up when such a disk goes into an array. Health values are real
smartctl outputs (tests/fixtures/smart) fed through the hardware service, on the Sun X4500
testbed machine's map."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from stripewise.gui.hardware_page import HardwarePage
from stripewise.gui.hardware_tile import SlotTile
from stripewise.gui.planner_chips import DiskChip
from stripewise.gui.planner_page import PlannerPage
from stripewise.inventory import load_inventory
from stripewise.inventory.snapshot import dumps
from stripewise.model.health import DiskHealth, parse_smartctl
from stripewise.model.plan import RaidLevel
from stripewise.model.topology import DiskKind
from tests.fixtures.machines import sun_x4500

SMART = Path(__file__).resolve().parents[1] / "fixtures" / "smart"


def recorded(name: str, device: str) -> DiskHealth:
    return parse_smartctl(device, json.loads((SMART / name).read_text()))


@pytest.fixture
def x4500_file(tmp_path: Path) -> Path:
    recording = tmp_path / "x4500.umockdev"
    recording.write_text(sun_x4500().umockdev())
    path = tmp_path / "x4500.json"
    path.write_text(dumps(load_inventory(recording)))
    return path


def tile(page: HardwarePage, disk: str) -> SlotTile:
    return next(t for t in page.map.tiles if t.slot.disk and t.slot.disk.name == disk)


def test_a_failing_disk_carries_a_badge_and_its_details_say_why(
    qtbot, make_window, x4500_file: Path
) -> None:
    window = make_window(view="hardware", inventory=x4500_file)
    page = window.page_widgets["hardware"]
    assert isinstance(page, HardwarePage) and page.inventory is not None
    assert all(t.badge is None for t in page.map.tiles)  # nothing read yet
    host = page.inventory.host.key
    window.hardware.set_health(
        (
            recorded("sata_hdd_failing_pending.json", "sdi"),
            recorded("nvme_samsung_media_errors.json", "sdj"),
            recorded("sata_ssd_samsung_healthy.json", "sdk"),
            recorded("virtio_unknown_type.json", "sdl"),
        ),
        host,
    )
    badges = {t.slot.disk.name: t.badge for t in page.map.tiles if t.badge}
    assert badges == {"sdi": "FAILING", "sdj": "WARN"}  # healthy and unread: no badge
    sdi = tile(page, "sdi")
    assert "8 pending sectors" in sdi.toolTip() and "health failing" in sdi.accessibleName()
    assert sdi.toolTip().startswith("sdi in port 0\n")  # not "port 0 (port 0)"
    assert sdi.shown_texts()[0] == sdi.slot.title  # the port still reads beside the badge
    sdi.grab()  # it paints with its badge

    qtbot.mouseClick(sdi, Qt.MouseButton.LeftButton)
    details = page.details.browser.toPlainText()
    assert "Health" in details and "failing" in details and "FAILED" in details
    assert "Pending sectors\n8\n" in details and "Reallocated sectors\n1,975\n" in details
    assert "8 pending sectors" in details
    # said first, under the disk's name: not below its partitions, past the fold
    assert details.index("Health") < details.index("Geometry and tuning")
    qtbot.mouseClick(tile(page, "sdk"), Qt.MouseButton.LeftButton)
    healthy = page.details.browser.toPlainText()
    assert healthy.index("Health") > healthy.index("Geometry and tuning")  # kept to the end
    qtbot.mouseClick(tile(page, "sdl"), Qt.MouseButton.LeftButton)
    # smartctl's own words for a disk it could not read (recorded on a virtio disk)
    assert "Health\n/dev/vda: Unable to detect device type" in page.details.browser.toPlainText()

    # the health of another host's disks is not drawn on this map
    window.hardware.set_health((recorded("sata_hdd_failing_pending.json", "sdi"),), "another")
    assert all(t.badge is None for t in page.map.tiles)


def test_the_planner_warns_of_a_failing_or_worn_member(make_window, x4500_file: Path) -> None:
    window = make_window(view="planner", inventory=x4500_file)
    planner = window.page_widgets["planner"]
    assert isinstance(planner, PlannerPage)
    inventory = window.hardware.inventory
    planner.planner.plan_on_inventory(inventory)
    name = planner.planner.add_array(RaidLevel.RAID5, ("sdi", "sdj", "sdk"))
    report = planner.planner.report.array(name)
    assert report is not None and not {p.code for p in report.problems} & {
        "failing_disk",
        "worn_disk",
    }
    window.hardware.set_health(
        (
            recorded("sata_hdd_failing_pending.json", "sdi"),
            recorded("nvme_samsung_media_errors.json", "sdj"),
            recorded("sata_ssd_samsung_healthy.json", "sdk"),
        ),
        inventory.host.key,
    )
    report = planner.planner.report.array(name)
    assert report is not None
    found = {p.code: p for p in report.problems if p.code in ("failing_disk", "worn_disk")}
    assert found["failing_disk"].disks == ("sdi",) and found["failing_disk"].error
    assert "8 pending sectors" in found["failing_disk"].message
    assert found["worn_disk"].disks == ("sdj",) and not found["worn_disk"].error
    assert "7 NVMe media or data integrity errors" in found["worn_disk"].message
    assert not report.ok  # a failing member blocks the array's commands
    # the members stand out where they are dragged, on the card as in the disk list
    chips = planner.findChildren(DiskChip)
    badges = {(c.disk.id, c.array, c.badge[0] if c.badge else None) for c in chips}
    assert {("sdi", name, "FAILING"), ("sdj", name, "WARN"), ("sdk", name, None)} <= badges
    failing = next(c for c in chips if c.disk.id == "sdi" and c.array == name)
    assert "8 pending sectors; 1,975 reallocated sectors" in failing.toolTip()
    assert failing.accessibleName().endswith(", health failing")


@pytest.mark.skipif(shutil.which("smartctl") is None, reason="needs smartmontools")
def test_this_machines_map_reads_health_once_the_helper_runs(qtbot, make_window) -> None:
    """Opening the map asks no password: with no helper running nothing is read; once one
    runs, the map of this machine on screen reads its disks' health behind the drawn map
    (here: the real helper and smartctl on this VM's disks)."""
    window = make_window(view="hardware")
    page = window.page_widgets["hardware"]
    assert isinstance(page, HardwarePage)
    qtbot.waitUntil(lambda: window.hardware.machine is not None, timeout=20_000)
    qtbot.waitUntil(lambda: window.helper.privileges is not None, timeout=20_000)
    assert not window.helper.running and window.hardware.health == {}
    assert page.read_health.isVisibleTo(page)
    with qtbot.waitSignal(window.hardware.healthChanged, timeout=30_000):
        page.read_health.click()  # starts the helper
    disks = [d.name for d in window.hardware.machine.disks if d.kind is DiskKind.DISK]
    assert sorted(window.hardware.health) == sorted(disks)
    assert all(h.available or h.reason for h in window.hardware.health.values())
    if "vda" in disks:
        assert window.hardware.health["vda"].reason == "no SMART (virtio disk)"
    window.hardware.health = {}
    with qtbot.waitSignal(window.hardware.healthChanged, timeout=30_000):
        window.hardware.reload()  # the map read again: its health comes in behind it
    assert sorted(window.hardware.health) == sorted(disks)

"""Issue 29.2: the mdadm script names disks by what stays (by-id, by-path) wherever that can
be derived, says per member when it cannot, and groups its warnings.

The recording is the X4500 as `umockdev-record` writes it, less udev's symlink lines (`S:` and
`DEVLINKS`): its disks keep `ID_BUS` and `ID_SERIAL`, from which udev's `ata-...` names follow.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stripewise.inventory import load_inventory
from stripewise.model.plan import Plan, PlanController, PlanDisk, PlannedArray, RaidLevel
from stripewise.model.topology import Inventory
from stripewise.planner.checks import evaluate_plan
from stripewise.planner.from_inventory import plan_from_inventory
from stripewise.planner.script import shell_script
from tests.fixtures.machines import sun_x4500

SIXTEEN = 16


def without_links(text: str) -> str:
    """A recording whose udev database entries kept their properties but not their links."""
    kept = (
        line
        for line in text.splitlines()
        if not line.startswith("S: ") and not line.startswith("E: DEVLINKS=")
    )
    return "\n".join(kept) + "\n"


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Inventory:
    path = tmp_path_factory.mktemp("x4500") / "x4500-no-links.umockdev"
    path.write_text(without_links(sun_x4500(with_arrays=False).umockdev("record")))
    text = path.read_text()
    assert "E: ID_SERIAL=" in text and "\nS: " not in text and "DEVLINKS" not in text
    return load_inventory(path)


def planned(inventory: Inventory, count: int = SIXTEEN) -> Plan:
    plan = plan_from_inventory(inventory, name="thumper")
    members = tuple(d.id for d in plan.disks if d.usable)[:count]
    return plan.with_array(PlannedArray("md0", RaidLevel.RAID6, members))


def script(plan: Plan) -> str:
    return shell_script(plan, evaluate_plan(plan).arrays, host="thumper")


def create_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("mdadm --create"))


def test_members_are_named_by_id_derived_from_the_recorded_serials(recording: Inventory) -> None:
    plan = planned(recording)
    text = script(plan)
    devices = create_line(text).split()[-SIXTEEN:]
    for disk_id, device in zip(plan.arrays[0].members, devices, strict=True):
        disk = plan.disk(disk_id)
        assert disk is not None and disk.serial
        assert device.startswith("/dev/disk/by-id/"), device
        expected = f"wwn-{disk.wwn}" if disk.wwn else f"ata-{disk.model}_{disk.serial}"
        assert device == f"/dev/disk/by-id/{expected}".replace(" ", "_"), (disk_id, device)
    assert not re.search(r" /dev/sd[a-z]+\b", create_line(text))
    assert "no stable name" not in text
    assert "commands use /dev/disk/by-id" in text  # the header says so, and now it is true


def test_a_member_without_a_stable_name_is_said_where_it_is_listed(recording: Inventory) -> None:
    plan = planned(recording, 4)
    extra = PlanController("0000:09:00.0", "an HBA of the plan's own")
    bare = PlanDisk("sdz9", extra.id, 500 * 10**9, state="unknown")  # written by hand: no ids
    plan = Plan(
        name=plan.name,
        controllers=(*plan.controllers, extra),
        disks=(*plan.disks, bare),
        arrays=(PlannedArray("md0", RaidLevel.RAID6, (*plan.arrays[0].members, "sdz9")),),
        host=plan.host,
    )
    text = script(plan)
    header = text.split("set -euo pipefail")[0]
    assert "commands use /dev/disk/by-id" not in header  # no longer true of every member
    assert "1 disk has no stable name" in header
    listed = header.splitlines()
    at = next(i for i, line in enumerate(listed) if line.startswith("#     sdz9 "))
    assert "/dev/sdz9" in listed[at + 1] and "no stable name" in listed[at + 1]
    assert create_line(text).endswith(" /dev/sdz9")
    assert create_line(text).count("/dev/disk/by-id/") == 4


def test_warnings_above_the_command_are_grouped(recording: Inventory) -> None:
    """Sixteen disks of unknown use (a recording has no mounts): one warning naming them, not
    sixteen; the planner lists it once too."""
    plan = planned(recording)
    report = evaluate_plan(plan).arrays[0]
    unknown = [p for p in report.problems if p.code == "disk_use_unknown"]
    assert len(unknown) == 1 and len(unknown[0].disks) == SIXTEEN
    assert unknown[0].message.startswith("16 disks may be in use (sdu, sdv, ")
    assert unknown[0].message.endswith("check they are unused before building.")
    text = script(plan)
    above = text.split("mdadm --create")[0].split("# Create md0")[1]
    assert above.count("WARNING") <= 3, above
    assert above.count("may be in use") == 1
    warning_lines = [line for line in above.splitlines() if "WARNING" in line]
    assert all(line.startswith("# WARNING: ") for line in warning_lines), warning_lines


def test_two_disks_of_unknown_use_are_one_warning(recording: Inventory) -> None:
    plan = planned(recording, 0)
    one = plan.disks[0].id
    plan = plan.with_array(PlannedArray("md0", RaidLevel.RAID1, (one, plan.disks[1].id)))
    report = evaluate_plan(plan).arrays[0]
    (unknown,) = (p for p in report.problems if p.code == "disk_use_unknown")
    assert unknown.message.startswith(f"2 disks may be in use ({one}, ")


def test_recorded_links_win_over_derived_ones(tmp_path: Path) -> None:
    """A recording that kept its links is read as it was: nothing is added beside them."""
    path = tmp_path / "x4500.umockdev"
    path.write_text(sun_x4500(with_arrays=False).umockdev("record"))
    disk = load_inventory(path).disks[0]
    assert disk.by_id == tuple(sorted(f"disk/by-id/{name}" for name in _recorded(path, disk.name)))


def _recorded(path: Path, name: str) -> list[str]:
    block = path.read_text().split(f"/block/{name}\n", 1)[1].split("\n\n", 1)[0]
    return [
        line[len("S: disk/by-id/") :] for line in block.splitlines() if "S: disk/by-id/" in line
    ]

"""Sizes a udev dump does not record (issue 16, point 1): a plan made on such a dump keeps them
unknown (never 0 B, never a size looked up in the catalog), and an array with a member of
unknown size has an unknown capacity, as has a plan with such an array."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from stripewise.cli.main import main
from stripewise.inventory import load_inventory
from stripewise.model.evaluate import evaluate
from stripewise.model.plan import Plan, PlannedArray, RaidLevel
from stripewise.model.topology import Inventory
from stripewise.planner.catalog import load_catalog
from stripewise.planner.from_inventory import catalog_controller, catalog_disk, plan_from_inventory
from stripewise.planner.plan_file import PlanFileError, loads_plan
from stripewise.planner.plan_writer import dumps_plan
from stripewise.planner.sizes import (
    UNKNOWN_SIZE,
    cost_per_usable_tb,
    known_size,
    members_of_unknown_size,
    plan_usable_bytes,
    raw_bytes,
    size_text,
    usable_bytes,
)

SERVER_DUMP = Path(__file__).parents[1] / "fixtures" / "udev" / "server_sata_usb.txt"
EXOS = "seagate-exos-x18-18tb"
USB_RAID5 = ("sdc", "sdd", "sde")


@pytest.fixture(scope="module")
def server_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`stripewise inventory --from <dump> --save FILE`: the dump as the planner opens it."""
    path = tmp_path_factory.mktemp("server") / "server.json"
    assert main(["inventory", "--from", str(SERVER_DUMP), "--save", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def server(server_snapshot: Path) -> Inventory:
    return load_inventory(server_snapshot)


def with_exos(plan: Plan, count: int = 3) -> Plan:
    """An 8-port HBA with Exos X18 disks to buy (18 TB and a price each) added to the plan."""
    catalog = load_catalog()
    hba_entry = catalog.controller("lsi-9300-8i")
    exos_entry = catalog.disk(EXOS)
    assert hba_entry is not None and exos_entry is not None
    hba = catalog_controller(hba_entry, "new-hba")
    disks = tuple(catalog_disk(exos_entry, hba.id, f"exos{i}") for i in range(count))
    return replace(plan, controllers=(*plan.controllers, hba), disks=(*plan.disks, *disks))


def test_a_dump_gives_plan_disks_of_unknown_size(server: Inventory) -> None:
    plan = plan_from_inventory(server)
    assert len(plan.disks) == 11
    for disk in plan.disks:
        assert disk.capacity_bytes == UNKNOWN_SIZE, disk.id
        assert known_size(disk) is None
        assert size_text(disk) == "size unknown"


def test_the_catalog_gives_speeds_but_never_a_size(server: Inventory) -> None:
    """The WD Red WD40EFRX of the dump is in the catalog as a 4 TB disk: its speeds are taken,
    its size is not (another capacity may carry the same model prefix)."""
    sda = plan_from_inventory(server).disk("sda")
    assert sda is not None and sda.model is not None and "WD40EFRX" in sda.model
    assert sda.seq_read_mb_s is not None, "the catalog matched the model"
    assert known_size(sda) is None


def test_a_dump_read_directly_plans_the_same(server: Inventory) -> None:
    direct = plan_from_inventory(load_inventory(SERVER_DUMP))
    assert [(d.id, d.capacity_bytes) for d in direct.disks] == [
        (d.id, d.capacity_bytes) for d in plan_from_inventory(server).disks
    ]


def test_an_array_of_unknown_disks_has_unknown_capacity(server: Inventory) -> None:
    base = with_exos(plan_from_inventory(server))
    plan = replace(
        base,
        arrays=(
            PlannedArray("usb", RaidLevel.RAID5, members=USB_RAID5),
            PlannedArray("new", RaidLevel.RAID5, members=("exos0", "exos1", "exos2")),
        ),
    )
    report = evaluate(plan)
    usb, new = report.arrays
    assert report.usable_bytes == new.geometry.usable_bytes, "the model counts the unknown as 0"
    assert members_of_unknown_size(plan, usb) == USB_RAID5
    assert usable_bytes(plan, usb) is None and raw_bytes(plan, usb) is None
    assert usable_bytes(plan, new) == 2 * 18 * 10**12
    assert raw_bytes(plan, new) == 3 * 18 * 10**12
    assert plan_usable_bytes(plan, report) is None, "one unknown array: the sum is unknown"
    known_only = replace(plan, arrays=plan.arrays[1:])
    assert plan_usable_bytes(known_only, evaluate(known_only)) == 2 * 18 * 10**12


def test_one_member_of_unknown_size_makes_the_array_unknown(server: Inventory) -> None:
    """Capacity follows the smallest member: with one unknown, the smallest is unknown."""
    plan = with_exos(plan_from_inventory(server))
    plan = replace(
        plan, arrays=(PlannedArray("mixed", RaidLevel.RAID5, ("exos0", "exos1", "sdc")),)
    )
    report = evaluate(plan)
    assert members_of_unknown_size(plan, report.arrays[0]) == ("sdc",)
    assert usable_bytes(plan, report.arrays[0]) is None
    assert plan_usable_bytes(plan, report) is None


def test_a_spare_of_unknown_size_adds_nothing_unknown(server: Inventory) -> None:
    plan = with_exos(plan_from_inventory(server))
    array = PlannedArray("new", RaidLevel.RAID1, ("exos0", "exos1"), spares=("sdc",))
    plan = replace(plan, arrays=(array,))
    report = evaluate(plan)
    assert usable_bytes(plan, report.arrays[0]) == 18 * 10**12


def test_no_size_warning_counts_an_unknown_size_as_0(server: Inventory) -> None:
    """Not "Member sizes differ: ... sdc (0 B)" nor "Spare sdd (0 B) is smaller": an unknown
    size is compared with nothing."""
    plan = with_exos(plan_from_inventory(server), count=4)
    plan = replace(
        plan,
        arrays=(
            PlannedArray("mixed", RaidLevel.RAID5, ("exos0", "exos1", "sdc")),
            PlannedArray("mirror", RaidLevel.RAID1, ("exos2", "exos3"), spares=("sdd",)),
        ),
    )
    messages = [p.message for a in evaluate(plan).arrays for p in a.problems]
    assert not [m for m in messages if "0 B" in m], messages


def test_cost_per_usable_tb_is_unknown_with_the_capacity(server: Inventory) -> None:
    """Real disks given a price by hand: the model divides by the known arrays only."""
    plan = with_exos(plan_from_inventory(server))
    priced = tuple(replace(d, price=80.0) if d.id in USB_RAID5 else d for d in plan.disks)
    plan = replace(
        plan,
        disks=priced,
        arrays=(
            PlannedArray("usb", RaidLevel.RAID5, members=USB_RAID5),
            PlannedArray("new", RaidLevel.RAID5, members=("exos0", "exos1", "exos2")),
        ),
    )
    report = evaluate(plan)
    assert report.cost_per_usable_tb is not None, "the model's figure counts the unknown as 0"
    assert cost_per_usable_tb(plan, report) is None


def test_plan_files_keep_sizes_unknown(server: Inventory) -> None:
    plan = replace(
        plan_from_inventory(server),
        arrays=(PlannedArray("usb", RaidLevel.RAID5, members=USB_RAID5),),
    )
    text = dumps_plan(plan)
    assert "capacity_bytes = 0" in text
    again = loads_plan(text, "usb.toml", server)
    assert again == plan
    assert all(known_size(d) is None for d in again.disks)


def test_a_hand_written_real_disk_of_unknown_size_loads() -> None:
    """`capacity_bytes = 0` is the documented "unknown" for a real disk; `capacity_gb = 0` is a
    slip, refused (issue 16, point 7)."""
    head = 'format = "stripewise-plan"\nversion = 1\n[[controller]]\nid = "hba"\nports = 8\n'
    disk = '[[disk]]\nid = "sdb"\ncontroller = "hba"\nserial = "WD-1"\n'
    plan = loads_plan(head + disk + "capacity_bytes = 0\n", "p.toml")
    sdb = plan.disk("sdb")
    assert sdb is not None and known_size(sdb) is None
    with pytest.raises(PlanFileError, match="capacity_gb"):
        loads_plan(head + disk + "capacity_gb = 0\n", "p.toml")


# --- `stripewise plan` on a plan of dump disks --------------------------------------------------
# Output comes from planner/report_json.py, which another engineer owns this round: these say
# what it must print and are expected to fail until it asks planner.sizes (see the report).
@pytest.fixture
def usb_plan(tmp_path: Path) -> Path:
    path = tmp_path / "usb.toml"
    path.write_text(
        'format = "stripewise-plan"\nversion = 1\nname = "usb"\n'
        '[[array]]\nname = "usb"\nlevel = "raid5"\nmembers = ["sdc", "sdd", "sde"]\n',
        encoding="utf-8",
    )
    return path


def test_stripewise_plan_on_a_dump_runs(usb_plan: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--inventory", str(SERVER_DUMP), str(usb_plan)]) == 0
    assert "usb: 1 array on 11 disks and 2 controllers" in capsys.readouterr().out


def test_stripewise_plan_says_the_capacity_is_unknown(
    usb_plan: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", "--inventory", str(SERVER_DUMP), str(usb_plan)]) == 0
    out = capsys.readouterr().out
    assert "0 B" not in out
    assert "usable unknown: no size recorded for sdc, sdd, sde" in out
    assert "usable in all: unknown" in out


def test_stripewise_plan_json_leaves_unknown_capacities_null(
    usb_plan: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", "--json", "--inventory", str(SERVER_DUMP), str(usb_plan)]) == 0
    document = json.loads(capsys.readouterr().out)
    (array,) = document["arrays"]
    assert array["usable_bytes"] is None and array["raw_bytes"] is None
    assert array["size_unknown"] == list(USB_RAID5)
    assert document["cost"]["usable_bytes"] is None

"""Impossible hardware (issue 16, point 7) in the model and in `stripewise plan`: more disks on
a controller than it has ports, figures of 0 or beyond any hardware, and names that tell two
identical controllers apart in the plan file and the reports."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from stripewise.cli import main
from stripewise.model.plan import (
    Plan,
    PlanController,
    PlanDisk,
    PlannedArray,
    RaidLevel,
    hardware_problems,
)
from stripewise.model.topology import Inventory
from stripewise.planner.checks import evaluate_plan
from stripewise.planner.from_inventory import plan_from_inventory
from stripewise.planner.plan_file import PlanFileError, loads_plan
from stripewise.planner.plan_writer import dumps_plan
from tests.fixtures.model_inventory import machine

HEAD = 'format = "stripewise-plan"\nversion = 1\nname = "shelf"\n'
TB = 10**12


def hba(ports: int | None = 8, **changes: object) -> PlanController:
    made = PlanController(id="hba", model="LSI SAS 9300-8i", ports=ports, hypothetical=True)
    return replace(made, **changes)


def new_disks(count: int, controller: str = "hba") -> tuple[PlanDisk, ...]:
    return tuple(
        PlanDisk(id=f"d{i}", controller=controller, capacity_bytes=4 * TB, hypothetical=True)
        for i in range(count)
    )


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plan.toml"
    path.write_text(text, encoding="utf-8")
    return path


def one_error_line(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    assert main(["plan", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"stripewise: error: {path}: ")
    return lines[0]


# --- the model ---------------------------------------------------------------------------------


def test_sixteen_disks_on_eight_ports_is_an_error_naming_controller_disks_and_ports() -> None:
    plan = Plan(controllers=(hba(),), disks=new_disks(16))
    (problem,) = hardware_problems(plan)
    assert problem.error and problem.code == "over_ports"
    assert problem.message == (
        "controller LSI SAS 9300-8i (hba) has 16 disks on 8 ports: move 8 disks to another "
        "controller"
    )
    assert problem.disks == tuple(f"d{i}" for i in range(16))
    report = evaluate_plan(plan)
    assert not report.ok and problem in report.problems


@pytest.mark.parametrize(("ports", "disks"), [(8, 8), (None, 40), (1, 0)])
def test_what_fits_is_no_problem(ports: int | None, disks: int) -> None:
    assert hardware_problems(Plan(controllers=(hba(ports),), disks=new_disks(disks))) == ()


def test_one_disk_too_many_on_one_port_is_worded_in_the_singular() -> None:
    (problem,) = hardware_problems(Plan(controllers=(hba(1),), disks=new_disks(2)))
    assert "has 2 disks on 1 port: move 1 disk to another controller" in problem.message


def test_real_disks_beyond_the_ports_mean_an_expander_a_warning() -> None:
    """Disks read from a machine are really attached: more than the ports is an expander."""
    real = tuple(
        replace(d, hypothetical=False, serial=f"ZC1{i:05d}", read_from_machine=True)
        for i, d in enumerate(new_disks(9))
    )
    plan = Plan(controllers=(hba(hypothetical=False),), disks=real)
    (problem,) = hardware_problems(plan)
    assert not problem.error and "expander or port multiplier" in problem.message
    # a disk to buy on top of them is not the machine's word: an error
    to_buy = replace(new_disks(1)[0], id="new")
    (problem,) = hardware_problems(replace(plan, disks=(*real, to_buy)))
    assert problem.error and "has 10 disks on 8 ports" in problem.message


def test_an_inventory_whose_disks_outnumber_its_ports_plans_without_a_port_count() -> None:
    inventory = machine()
    (controller,) = inventory.controllers
    inventory = replace(inventory, controllers=(replace(controller, port_count=2),))
    plan = plan_from_inventory(inventory)
    assert plan.controllers[0].ports is None  # an expander: the ports bound nothing
    assert hardware_problems(plan) == ()
    six = replace(inventory, controllers=(replace(controller, port_count=6),))
    assert plan_from_inventory(six).controllers[0].ports == 6


@pytest.mark.parametrize(
    ("plan", "where"),
    [
        (
            Plan(controllers=(hba(),), disks=(replace(new_disks(1)[0], capacity_bytes=0),)),
            "disk d0: capacity_bytes",
        ),
        (
            Plan(
                controllers=(hba(),), disks=(replace(new_disks(1)[0], capacity_bytes=2 * 10**15),)
            ),
            "disk d0: capacity_bytes",
        ),
        (
            Plan(controllers=(hba(),), disks=(replace(new_disks(1)[0], seq_read_mb_s=0.0),)),
            "disk d0: seq_read_mb_s",
        ),
        (
            Plan(controllers=(hba(),), disks=(replace(new_disks(1)[0], seq_write_mb_s=math.nan),)),
            "disk d0: seq_write_mb_s",
        ),
        (
            Plan(controllers=(hba(),), disks=(replace(new_disks(1)[0], inner_ratio=0.0),)),
            "disk d0: inner_ratio",
        ),
        (
            Plan(controllers=(hba(),), disks=(replace(new_disks(1)[0], price=-1.0),)),
            "disk d0: price",
        ),
        (Plan(controllers=(hba(0),)), "controller LSI SAS 9300-8i (hba): ports"),
        (Plan(controllers=(hba(5000),)), "controller LSI SAS 9300-8i (hba): ports"),
        (Plan(controllers=(hba(bus_mb_s=0.0),)), "controller LSI SAS 9300-8i (hba): bus_mb_s"),
    ],
)
def test_figures_out_of_bounds_are_errors_naming_the_item_and_field(plan: Plan, where: str) -> None:
    problems = hardware_problems(plan)
    assert [p.message.split(" must be ")[0] for p in problems if p.code == "bad_value"] == [where]
    assert all(p.error for p in problems)


def test_a_real_disk_of_unknown_size_is_no_problem() -> None:
    """A udev dump does not record sizes: 0 means unknown there, never an error."""
    real = PlanDisk(id="sdb", controller="hba", capacity_bytes=0, serial="Z1")
    assert hardware_problems(Plan(controllers=(hba(hypothetical=False),), disks=(real,))) == ()


def test_distinct_labels_number_the_second_of_a_kind() -> None:
    plan = Plan(controllers=(hba(),))
    assert plan.distinct_label("LSI SAS 9300-8i") == "LSI SAS 9300-8i #2"
    assert plan.distinct_label("Broadcom HBA 9500-16i") == "Broadcom HBA 9500-16i"
    twins = Plan(controllers=(hba(), hba(id="hba2")))
    assert twins.controller_names() == {
        "hba": "LSI SAS 9300-8i (hba)",
        "hba2": "LSI SAS 9300-8i (hba2)",
    }


# --- `stripewise plan` -------------------------------------------------------------------------


def shelf(disks: int, disk_keys: str = "", top: str = "") -> str:
    """An 8-port controller with `disks` disks; `disk_keys` may use {i}, the disk's number."""
    text = HEAD + top + '[[controller]]\nid = "hba"\nmodel = "LSI SAS 9300-8i"\nports = 8\n'
    for i in range(disks):
        text += f'[[disk]]\nid = "d{i}"\ncontroller = "hba"\ncapacity_gb = 4000\n'
        text += disk_keys.format(i=i)
    return text


@pytest.mark.parametrize("disk_keys", ["", "hypothetical = true\n"])
def test_plan_refuses_sixteen_disks_on_eight_ports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], disk_keys: str
) -> None:
    """Hand-written (no `hypothetical`), and as the planner writes disks to buy."""
    line = one_error_line(capsys, write(tmp_path, shelf(16, disk_keys)))
    assert line.endswith(
        "controller LSI SAS 9300-8i (hba) has 16 disks on 8 ports: move 8 disks to another "
        "controller"
    )


def test_a_saved_plan_of_a_machine_with_an_expander_still_evaluates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Disks with serials on a controller of the machine (not to buy), in a plan that names
    its machine as Stripewise saves one: they were read from it, so they are attached; a plan
    saved before ports were checked keeps working."""
    saved = shelf(12, 'serial = "ZC{i}"\n', top='inventory = "host:thumper"\n')
    assert main(["plan", str(write(tmp_path, saved))]) == 0
    out = capsys.readouterr().out
    assert "warning: controller LSI SAS 9300-8i (hba) has 12 disks on 8 ports: an expander" in out


def test_plan_takes_eight_disks_on_eight_ports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", str(write(tmp_path, shelf(8)))]) == 0
    assert "shelf: 0 arrays on 8 disks and 1 controller" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("table", "keys", "field"),
    [
        ("controller", "ports = 0\n", "ports"),
        ("controller", "ports = 2000\n", "ports"),
        ("controller", "bus_mb_s = 0\n", "bus_mb_s"),
        ("controller", 'label = " "\n', "label"),
        ("disk", "capacity_gb = 0\n", "capacity_gb"),
        ("disk", "capacity_gb = 2000000\n", "capacity_gb"),
        ("disk", "capacity_bytes = 0\nhypothetical = true\n", "capacity_bytes"),
        ("disk", "capacity_gb = 4000\nseq_read_mb_s = 0\n", "seq_read_mb_s"),
        ("disk", "capacity_gb = 4000\nseq_write_mb_s = -200\n", "seq_write_mb_s"),
        ("disk", "capacity_gb = 4000\nprice = -1\n", "price"),
    ],
)
def test_plan_refuses_a_bad_figure_naming_file_entry_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, keys: str, field: str
) -> None:
    controller = '[[controller]]\nid = "hba"\n' + (keys if table == "controller" else "")
    disk = '[[disk]]\nid = "d1"\ncontroller = "hba"\n' + (
        keys if table == "disk" else "capacity_gb = 4000\n"
    )
    line = one_error_line(capsys, write(tmp_path, HEAD + controller + disk))
    entry = "[[controller]] 'hba'" if table == "controller" else "[[disk]] 'd1'"
    assert f": {entry} {field}: " in line


def test_two_controllers_may_not_share_a_label(tmp_path: Path) -> None:
    text = HEAD + "".join(f'[[controller]]\nid = "{i}"\nlabel = "Shelf HBA"\n' for i in ("a", "b"))
    with pytest.raises(PlanFileError, match=r"\[\[controller\]\] 'b' label: 'Shelf HBA' is"):
        loads_plan(text, "p.toml")


def test_labels_round_trip_and_name_the_controllers_in_both_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    controllers = (
        hba(label="LSI SAS 9300-8i"),
        hba(id="hba2", label="LSI SAS 9300-8i #2", price=250.0),
    )
    disks = (
        *new_disks(4),
        *(replace(d, id=f"e{i}", controller="hba2") for i, d in enumerate(new_disks(4))),
    )
    disks = tuple(replace(d, price=300.0) for d in disks)
    array = PlannedArray("data", RaidLevel.RAID6, tuple(d.id for d in disks))
    plan = Plan(name="two cards", controllers=controllers, disks=disks, arrays=(array,))
    text = dumps_plan(plan)
    assert '[[controller]]\nid = "hba2"\nlabel = "LSI SAS 9300-8i #2"\n' in text
    assert loads_plan(text) == plan
    path = write(tmp_path, text)
    assert main(["plan", str(path)]) == 0
    out = capsys.readouterr().out
    assert "controller to buy: LSI SAS 9300-8i (hba), 4 of 8 ports used" in out
    assert "controller to buy: LSI SAS 9300-8i #2 (hba2), 4 of 8 ports used" in out
    assert main(["plan", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(c["id"], c["name"], c["ports"], c["disks"]) for c in data["controllers"]] == [
        ("hba", "LSI SAS 9300-8i", 8, 4),
        ("hba2", "LSI SAS 9300-8i #2", 8, 4),
    ]


def test_plan_output_counts_in_the_right_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    disks = tuple(replace(d, price=100.0) for d in new_disks(2, "hba"))
    plan = Plan(
        name="mirror",
        controllers=(hba(1, id="hba", price=20.0), hba(1, id="hba2", price=20.0)),
        disks=(disks[0], replace(disks[1], controller="hba2")),
        arrays=(PlannedArray("m", RaidLevel.RAID1, ("d0", "d1")),),
    )
    path = write(tmp_path, dumps_plan(plan))
    assert main(["plan", str(path), "--json"]) == 0
    steps = json.loads(capsys.readouterr().out)["arrays"][0]["steps"]
    assert "RAID 1 of 2 disks: 1 data disk, survives 1 failed disk" in steps[0]["comment"]
    assert main(["plan", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("mirror: 1 array on 2 disks and 2 controllers\n")
    assert "LSI SAS 9300-8i (hba), 1 of 1 port used" in out


def test_serials_written_by_hand_are_not_disks_read_from_a_machine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """10 disks on an 8-port controller, every one with a serial typed into the file: nothing
    says they are attached (README: refused unless every disk "was read from the machine")."""
    disks = "".join(
        f'[[disk]]\nid = "d{i}"\ncontroller = "ctl1"\ncapacity_gb = 4000\nserial = "SN{i}"\n'
        for i in range(10)
    )
    text = HEAD + '[[controller]]\nid = "ctl1"\nports = 8\n' + disks
    plan = loads_plan(text)  # it loads: the planner opens it and shows the problem
    (problem,) = hardware_problems(plan)
    assert problem.error and "has 10 disks on 8 ports: move 2 disks" in problem.message
    assert main(["plan", str(write(tmp_path, text))]) == 2
    assert "move 2 disks to another controller" in capsys.readouterr().err


def test_an_inventory_s_disks_are_read_from_the_machine_and_stay_so_in_a_file(
    x4500: Inventory,
) -> None:
    """Disks of the inventory on a controller the file gives fewer ports: an expander (a
    warning). A disk the file adds beside them was not read from the machine."""
    head = HEAD + '[[controller]]\nid = "0000:01:01.0"\nports = 4\n'
    plan = loads_plan(head, "p.toml", x4500)
    assert all(d.read_from_machine for d in plan.disks)
    (problem,) = hardware_problems(plan)
    assert not problem.error and "8 disks on 4 ports: an expander" in problem.message
    typed = '[[disk]]\nid = "extra"\ncontroller = "0000:01:01.0"\ncapacity_gb = 500\n'
    (problem,) = hardware_problems(loads_plan(head + typed + 'serial = "SN0"\n', "p", x4500))
    assert problem.error and "9 disks on 4 ports" in problem.message
    # saved, it names its machine and its disks' serials: read back without the inventory
    saved = dumps_plan(plan)
    assert "read_from_machine" not in saved and f'inventory = "{x4500.host.key}"' in saved
    again = loads_plan(saved)
    assert again == plan and all(d.read_from_machine for d in again.disks)
    assert not hardware_problems(again)[0].error
    # the same disks typed into a file that names no machine: hardware, not a machine's word
    typed_out = "\n".join(x for x in saved.splitlines() if not x.startswith("inventory = "))
    (problem,) = hardware_problems(loads_plan(typed_out))
    assert problem.error

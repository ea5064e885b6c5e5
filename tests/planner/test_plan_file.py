"""Plan files: every field survives a round trip, every bad input names file, table and key,
and with an inventory real disks are found by kernel name or serial."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stripewise.model.plan import (
    BLOCK_CHOICES_KIB,
    CHUNK_CHOICES_KIB,
    Filesystem,
    Plan,
    PlanController,
    PlanDisk,
    PlannedArray,
    RaidLevel,
)
from stripewise.model.topology import Inventory
from stripewise.planner.from_inventory import plan_from_inventory
from stripewise.planner.plan_file import PlanFileError, load_plan, loads_plan
from stripewise.planner.plan_writer import dumps_plan
from tests.planner.plans import controllers, new_disks, one_array_plan, real_disks

HEAD = 'format = "stripewise-plan"\nversion = 1\nname = "t"\n'
BASE = (
    HEAD
    + """
[[controller]]
id = "c1"
bus_mb_s = 1064

[[disk]]
id = "d1"
controller = "c1"
capacity_gb = 500

[[disk]]
id = "d2"
controller = "c1"
capacity_gb = 500
serial = "S2"

[[disk]]
id = "d3"
controller = "c1"
capacity_gb = 500

[[array]]
name = "md0"
level = "raid5"
members = ["d1", "d2", "d3"]
"""
)


def full_plan() -> Plan:
    ctl = controllers(2)
    disks = (*real_disks(3, ctl), *new_disks(3, ctl))
    hba = PlanController(
        id="new hba", model="LSI 9300-8i", bus_mb_s=7876.0, ports=8, hypothetical=True, price=249.99
    )
    odd = PlanDisk(
        id='odd "disk"\\1',
        controller="new hba",
        capacity_bytes=500_107_862_016,
        seq_read_mb_s=65.5,
        seq_write_mb_s=None,
        inner_ratio=0.538,
        random_iops=80.0,
        price=0.0,
        model="HITACHI HDS7250SASUN500G",
        serial="KRVN\t600",
        wwn=None,
        stable_path="/dev/disk/by-path/pci-0000:01:01.0-ata-1",
        slot="Bay 1 — front",
        state="in_use",
        state_reason="mounted at /home",
    )
    arrays = (
        PlannedArray(
            "md0",
            RaidLevel.RAID6,
            ("sdb", "sdc", "sdd", "d1"),
            256,
            None,
            ("d2",),
            Filesystem.XFS,
            4,
            "/srv/data",
        ),
        PlannedArray("big", RaidLevel.RAID60, (), 1024, 4, (), None, 1, None),
        PlannedArray("single", RaidLevel.JBOD, (odd.id,)),
    )
    return Plan(
        name="Everything\nat once",
        controllers=(*ctl, hba),
        disks=(*disks, odd),
        arrays=arrays,
        host="machine:0123abcd",
        currency="EUR",
        notes='Bought "later".\nSecond line: ünïcödé ✓ \x7f',
    )


def test_round_trip_every_field() -> None:
    plan = full_plan()
    text = dumps_plan(plan)
    tomllib.loads(text)  # plain TOML
    assert loads_plan(text) == plan
    assert dumps_plan(loads_plan(text)) == text


def test_dump_is_readable() -> None:
    text = dumps_plan(one_array_plan(RaidLevel.RAID5, 3, hypothetical=True))
    assert 'format = "stripewise-plan"\nversion = 1\n' in text
    assert "capacity_gb = 18000\n" in text
    assert "chunk_kb = 512\n" in text and "chunk_kib" not in text
    assert 'members = ["d1", "d2", "d3"]' in text


def test_capacity_in_gb_is_exact() -> None:
    plan = loads_plan(BASE.replace("capacity_gb = 500\n", "capacity_gb = 500.107862016\n", 1))
    assert plan.disk("d1").capacity_bytes == 500_107_862_016  # type: ignore[union-attr]
    plan = loads_plan(BASE.replace("capacity_gb = 500\n", "capacity_bytes = 4000787030016\n", 1))
    assert plan.disk("d1").capacity_bytes == 4_000_787_030_016  # type: ignore[union-attr]


def test_defaults() -> None:
    plan = loads_plan(BASE)
    assert plan.currency == "USD" and plan.host is None and plan.notes == ""
    disk = plan.disk("d1")
    assert disk is not None
    assert (disk.inner_ratio, disk.state, disk.hypothetical) == (0.6, "free", False)
    array = plan.arrays[0]
    assert (array.chunk_kib, array.block_kib, array.filesystem, array.spares) == (512, 4, None, ())


def test_catalog_entries_fill_a_disk_and_a_controller() -> None:
    text = (
        HEAD
        + '[[controller]]\nid = "hba"\ncatalog = "lsi-9300-8i"\n'
        + '[[disk]]\nid = "n1"\ncontroller = "hba"\ncatalog = "seagate-exos-x18-18tb"\n'
        + '[[disk]]\nid = "n2"\ncontroller = "hba"\ncatalog = "seagate-exos-x18-18tb"\n'
        + "price = 250\n"
    )
    plan = loads_plan(text)
    hba, n1, n2 = plan.controller("hba"), plan.disk("n1"), plan.disk("n2")
    assert hba is not None and n1 is not None and n2 is not None
    assert hba.hypothetical and hba.bus_mb_s == 7876 and hba.price == 250
    assert n1.hypothetical and n1.capacity_bytes == 18 * 10**12 and n1.seq_read_mb_s == 270
    assert n1.inner_ratio == 0.5 and n1.price == 300 and n2.price == 250


def _error(text: str, origin: str = "plan.toml") -> str:
    with pytest.raises(PlanFileError) as caught:
        loads_plan(text, origin)
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            'members = ["d1", "d2", "d3"]',
            'members = ["d1", "d2", "sdz"]',
            "plan.toml: [[array]] 'md0' members: unknown disk 'sdz'",
        ),
        (
            'id = "d3"\ncontroller = "c1"\ncapacity_gb = 500',
            'id = "d3"\ncontroller = "c1"\ncapacity_gb = -5',
            "plan.toml: [[disk]] 'd3' capacity_gb: must be a number between 0.001 and 1000000, "
            "got -5",
        ),
        (
            "capacity_gb = 500\nserial",
            'capacity_gb = "500"\nserial',
            "plan.toml: [[disk]] 'd2' capacity_gb: must be a number between 0.001 and 1000000, "
            "got '500'",
        ),
        (
            'level = "raid5"',
            'level = "raid7"',
            "plan.toml: [[array]] 'md0' level: 'raid7' is not one of raid0, raid1, raid5, raid6, "
            "raid10, raid50, raid60, jbod",
        ),
        ('level = "raid5"\n', "", "plan.toml: [[array]] 'md0' level: missing"),
        (
            'id = "d3"\ncontroller = "c1"',
            'id = "d3"\ncontroller = "c9"',
            "plan.toml: [[disk]] 'd3' controller: unknown controller 'c9' (known: c1)",
        ),
        ('id = "d3"', 'id = "d1"', "plan.toml: [[disk]] 'd1' id: 'd1' is used by another [[disk]]"),
        (
            'members = ["d1", "d2", "d3"]',
            'members = ["d1", "d2", "d1"]',
            "plan.toml: [[array]] 'md0' members: disk 'd1' is listed twice",
        ),
        (
            'members = ["d1", "d2", "d3"]',
            'members = ["d1", "d2"]\nspares = ["d2"]',
            "plan.toml: [[array]] 'md0' spares: disk 'd2' is already used by this array",
        ),
        (
            'members = ["d1", "d2", "d3"]',
            'members = "d1 d2 d3"',
            "plan.toml: [[array]] 'md0' members: must be a list of disk names, got 'd1 d2 d3'",
        ),
        (
            'members = ["d1", "d2", "d3"]',
            'members = ["d1", "d2", "d3"]\nchunk_kb = 500',
            "plan.toml: [[array]] 'md0' chunk_kb: must be one of 4, 8, 16, 32, 64, 128, 256, 512, "
            "1024, 2048, got 500",
        ),
        (
            'members = ["d1", "d2", "d3"]',
            'members = ["d1", "d2", "d3"]\nblock_kb = 8',
            "plan.toml: [[array]] 'md0' block_kb: must be one of 1, 2, 4, got 8",
        ),
        (
            'members = ["d1", "d2", "d3"]',
            'members = ["d1", "d2", "d3"]\nfilesystem = "btrfs"',
            "plan.toml: [[array]] 'md0' filesystem: 'btrfs' is not one of ext4, xfs",
        ),
        (
            'members = ["d1", "d2", "d3"]',
            'members = ["d1", "d2", "d3"]\nmountpoint = "srv"',
            "plan.toml: [[array]] 'md0' mountpoint: must be an absolute path, got 'srv'",
        ),
        (
            'members = ["d1", "d2", "d3"]',
            'members = ["d1", "d2", "d3"]\ngroup_size = 1',
            "plan.toml: [[array]] 'md0' group_size: must be a whole number from 2 to 1024, got 1",
        ),
        (
            'members = ["d1", "d2", "d3"]',
            'members = ["d1", "d2", "d3"]\nchunk_kib = 64',
            "plan.toml: [[array]] 'md0' chunk_kib: unknown key (known keys: name, level, ",
        ),
        (
            'id = "c1"\nbus_mb_s = 1064',
            'id = "c1"\nbus_mb_s = "fast"',
            "plan.toml: [[controller]] 'c1' bus_mb_s: must be a number between 1 and 10000000, "
            "got 'fast'",
        ),
        (
            'id = "c1"\nbus_mb_s = 1064',
            'id = "c1"\nports = 2.5',
            "plan.toml: [[controller]] 'c1' ports: must be a whole number from 1 to 1024, got 2.5",
        ),
        (  # shown as written: "got 8" would refuse what reads as a whole number
            'id = "c1"\nbus_mb_s = 1064',
            'id = "c1"\nports = 8.0',
            "plan.toml: [[controller]] 'c1' ports: must be a whole number from 1 to 1024, got 8.0",
        ),
        (
            'id = "c1"\nbus_mb_s = 1064',
            'id = "c1"\nhypothetical = "yes"',
            "plan.toml: [[controller]] 'c1' hypothetical: must be true or false, got 'yes'",
        ),
        (
            'id = "d3"\ncontroller = "c1"',
            'id = "d3"\nstate = "spare"\ncontroller = "c1"',
            "plan.toml: [[disk]] 'd3' state: 'spare' is not one of system, array_member, in_use, "
            "unknown, free",
        ),
        (
            'id = "d3"\ncontroller = "c1"',
            'id = "d3"\ninner_ratio = 1.5\ncontroller = "c1"',
            "plan.toml: [[disk]] 'd3' inner_ratio: must be a number between 0.01 and 1, got 1.5",
        ),
        (
            'id = "d3"\ncontroller = "c1"',
            'id = "d3"\ncatalog = "floppy"\ncontroller = "c1"',
            "plan.toml: [[disk]] 'd3' catalog: no disk 'floppy' in the catalog",
        ),
        (
            'id = "d3"\ncontroller = "c1"\ncapacity_gb = 500\n',
            'id = "d3"\ncontroller = "c1"\n',
            "plan.toml: [[disk]] 'd3' capacity_gb: missing",
        ),
        (
            'id = "d3"\ncontroller = "c1"\n',
            'id = "d3"\n',
            "plan.toml: [[disk]] 'd3' controller: missing",
        ),
        (
            "capacity_gb = 500\nserial",
            "capacity_gb = 500\ncapacity_bytes = 1\nserial",
            "plan.toml: [[disk]] 'd2' capacity_bytes: give capacity_gb or capacity_bytes, not both",
        ),
        ('name = "md0"', 'name = ""', "plan.toml: [[array]] '' name: must not be empty"),
        (
            '[[disk]]\nid = "d3"',
            '[[disk]]\nident = "d3"',
            "plan.toml: [[disk]] #3 ident: unknown key",
        ),
        (
            "version = 1",
            "version = 2",
            "plan.toml: top level version: 2 is not 1, the version this Stripewise reads",
        ),
        ("version = 1", 'version = "1"', "plan.toml: top level version: must be a whole number"),
        (
            'format = "stripewise-plan"',
            'format = "other"',
            "plan.toml: top level format: is 'other'; a plan file starts with format = ",
        ),
        (
            'name = "t"',
            'name = "t"\ncurrency = "dollars"',
            "plan.toml: top level currency: must be a three-letter code such as USD, got 'dollars'",
        ),
        ('name = "t"', 'name = "t"\ncolour = "blue"', "plan.toml: top level colour: unknown key"),
        (
            '[[array]]\nname = "md0"',
            '[array]\nname = "md0"',
            "plan.toml: array: must be [[array]] tables",
        ),
    ],
)
def test_bad_input_names_file_table_and_key(old: str, new: str, expected: str) -> None:
    assert old in BASE, old
    assert _error(BASE.replace(old, new, 1)).startswith(expected)


def test_disk_in_two_arrays() -> None:
    text = BASE + '\n[[array]]\nname = "md1"\nlevel = "raid1"\nmembers = ["d3", "d1"]\n'
    assert _error(text) == (
        "plan.toml: [[array]] 'md1' members: disk 'd3' is already used by array 'md0'"
    )


def test_duplicate_controller_and_array() -> None:
    text = BASE.replace('[[disk]]\nid = "d1"', '[[controller]]\nid = "c1"\n[[disk]]\nid = "d1"', 1)
    assert _error(text).startswith("plan.toml: [[controller]] 'c1' id: 'c1' is used by another")
    text = BASE + '\n[[array]]\nname = "md0"\nlevel = "raid0"\n'
    assert _error(text).startswith("plan.toml: [[array]] 'md0' name: 'md0' is used by another")


def test_toml_syntax_error_has_line_and_column() -> None:
    message = _error(BASE.replace('level = "raid5"', "level = raid5"), "/tmp/x/plan.toml")
    assert message.startswith("/tmp/x/plan.toml: ")
    assert "(at line 27, column 9)" in message


def test_missing_format_and_unreadable_file(tmp_path: Path) -> None:
    assert _error('name = "x"\n').startswith("plan.toml: top level format: missing;")
    with pytest.raises(PlanFileError, match=r"cannot read .*nowhere.toml"):
        load_plan(tmp_path / "nowhere.toml")
    binary = tmp_path / "b.toml"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(PlanFileError, match=r"b\.toml: not UTF-8"):
        load_plan(binary)


def test_without_disks_the_error_says_how_to_add_them() -> None:
    text = HEAD + '[[array]]\nname = "md0"\nlevel = "raid1"\nmembers = ["sda", "sdb"]\n'
    assert _error(text) == (
        "plan.toml: [[array]] 'md0' members: unknown disk 'sda' (the plan has no disks: add "
        "[[disk]] tables or --inventory)"
    )


def test_members_by_serial_without_an_inventory() -> None:
    text = BASE.replace('"d1", "d2", "d3"', '"d1", "S2", "d3"')
    assert loads_plan(text).arrays[0].members == ("d1", "d2", "d3")


# --- with an inventory ---------------------------------------------------------------------


def test_inventory_disks_by_kernel_name_and_serial(x4500: Inventory) -> None:
    serial = x4500.find_disk("sdy").serial  # type: ignore[union-attr]
    text = (
        HEAD + f'[[array]]\nname = "md7"\nlevel = "raid5"\nmembers = ["sdas", "{serial}", "sdac"]\n'
    )
    plan = loads_plan(text, "p.toml", x4500)
    assert plan.arrays[0].members == ("sdas", "sdy", "sdac")
    assert plan.host == x4500.host.key
    base = plan_from_inventory(x4500)
    assert plan.disks == base.disks and plan.controllers == base.controllers


def test_inventory_disks_can_be_adjusted(x4500: Inventory) -> None:
    text = HEAD + '[[disk]]\nid = "sdas"\nstate = "free"\nseq_read_mb_s = 70\n'
    plan = loads_plan(text, "p.toml", x4500)
    disk, real = plan.disk("sdas"), plan_from_inventory(x4500).disk("sdas")
    assert disk is not None and real is not None
    assert disk == replace(real, state="free", seq_read_mb_s=70.0)
    assert len(plan.disks) == 48


def test_inventory_plus_hardware_to_buy(x4500: Inventory) -> None:
    text = (
        HEAD
        + '[[controller]]\nid = "hba"\ncatalog = "lsi-9300-8i"\n'
        + '[[disk]]\nid = "n1"\ncontroller = "hba"\ncatalog = "toshiba-mg08-16tb"\n'
    )
    plan = loads_plan(text, "p.toml", x4500)
    assert len(plan.controllers) == 7 and len(plan.disks) == 49
    assert plan.disk("n1").hypothetical  # type: ignore[union-attr]


def test_a_plan_for_another_machine_is_refused(x4500: Inventory) -> None:
    text = HEAD + '[[disk]]\nid = "sdas"\nserial = "SOMEONE-ELSES"\n'
    with pytest.raises(PlanFileError) as caught:
        loads_plan(text, "p.toml", x4500)
    message = str(caught.value)
    assert message.startswith("p.toml: [[disk]] 'sdas' serial: the plan says 'SOMEONE-ELSES'")
    assert "kernel names change" in message


def test_a_dumped_inventory_plan_loads_with_and_without_the_inventory(x4500: Inventory) -> None:
    plan = plan_from_inventory(x4500, name="Thumper")
    plan = plan.with_array(PlannedArray("md9", RaidLevel.RAID6, ("sdas", "sdy", "sdac", "sdag")))
    text = dumps_plan(plan)
    assert loads_plan(text) == plan
    assert loads_plan(text, "p.toml", x4500) == plan


def test_unknown_serial_with_inventory(x4500: Inventory) -> None:
    text = HEAD + '[[array]]\nname = "md7"\nlevel = "raid1"\nmembers = ["sdas", "NOPE"]\n'
    with pytest.raises(
        PlanFileError, match=r"^p.toml: \[\[array\]\] 'md7' members: unknown disk 'NOPE'$"
    ):
        loads_plan(text, "p.toml", x4500)


# --- generated plans -----------------------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_name = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8).filter(
    str.strip
)
_speed = st.none() | st.floats(0.001, 1e6, allow_nan=False)
_price = st.none() | st.floats(0, 1e9, allow_nan=False)


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    controller_ids = draw(st.lists(_name, min_size=1, max_size=3, unique=True))
    labels = draw(st.lists(_name, max_size=len(controller_ids), unique=True))
    ctl = tuple(
        PlanController(
            id=cid,
            model=draw(st.none() | _text),
            bus=draw(st.none() | _text),
            bus_mb_s=draw(st.none() | st.floats(1, 1e7, allow_nan=False)),
            ports=draw(st.none() | st.integers(1, 1024)),
            hypothetical=draw(st.booleans()),
            price=draw(_price),
            label=labels[index] if index < len(labels) else None,  # distinct, as files need
        )
        for index, cid in enumerate(controller_ids)
    )
    disk_ids = draw(st.lists(_name, max_size=8, unique=True))
    disks = []
    for did in disk_ids:
        hypothetical = draw(st.booleans())
        low = 10**6 if hypothetical else 0
        disks.append(
            PlanDisk(
                id=did,
                controller=draw(st.sampled_from(controller_ids)),
                capacity_bytes=draw(st.integers(low, 10**15)),
                seq_read_mb_s=draw(_speed),
                seq_write_mb_s=draw(_speed),
                inner_ratio=draw(st.floats(0.01, 1.0)),
                random_iops=draw(st.none() | st.floats(0.001, 1e9)),
                price=draw(_price),
                model=draw(st.none() | _text),
                serial=draw(st.none() | _text),
                wwn=draw(st.none() | _text),
                stable_path=draw(st.none() | _text),
                slot=draw(st.none() | _text),
                state=draw(
                    st.sampled_from(("free", "system", "in_use", "array_member", "unknown"))
                ),
                hypothetical=hypothetical,
                state_reason=draw(st.none() | _text),
            )
        )
    pool = list(disk_ids)
    arrays = []
    for name in draw(st.lists(_name, max_size=3, unique=True)):
        members = draw(st.lists(st.sampled_from(pool), unique=True)) if pool else []
        pool = [d for d in pool if d not in members]
        spares = draw(st.lists(st.sampled_from(pool), unique=True, max_size=2)) if pool else []
        pool = [d for d in pool if d not in spares]
        arrays.append(
            PlannedArray(
                name=name,
                level=draw(st.sampled_from(list(RaidLevel))),
                members=tuple(members),
                chunk_kib=draw(st.sampled_from(CHUNK_CHOICES_KIB)),
                group_size=draw(st.none() | st.integers(2, 1024)),
                spares=tuple(spares),
                filesystem=draw(st.none() | st.sampled_from(list(Filesystem))),
                block_kib=draw(st.sampled_from(BLOCK_CHOICES_KIB)),
                mountpoint=draw(st.none() | _text.map(lambda t: "/" + t)),
            )
        )
    return Plan(
        name=draw(_text),
        controllers=ctl,
        disks=tuple(disks),
        arrays=tuple(arrays),
        host=draw(st.none() | _text),
        currency=draw(st.sampled_from(("USD", "EUR", "GBP"))),
        notes=draw(_text),
    )


@settings(max_examples=200, deadline=None)
@given(plans())
def test_generated_plans_round_trip(plan: Plan) -> None:
    assert loads_plan(dumps_plan(plan)) == plan

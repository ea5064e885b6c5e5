"""Issue 16, points 1 and 2: `udevadm info --export-db` dumps as the field hands them over.

The dumps under tests/fixtures/udev/ are written from the export-db format (see the README
there): a workstation whose USB HID records hold a bare `MODALIAS=` line, a server with 2 SATA
and 9 USB disks, and a server whose two SAS HBAs see four volumes of one array each.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from stripewise.inventory import load_inventory
from stripewise.model.topology import Inventory
from tests.inventory.conftest import controller, disk, slots_by_disk
from tests.test_cli import run_cli

DUMPS = Path(__file__).parent.parent / "fixtures" / "udev"
WORKSTATION = DUMPS / "workstation_md_raid0.txt"
SERVER = DUMPS / "server_sata_usb.txt"
MULTIPATH = DUMPS / "multipath_two_hbas.txt"


def inventory_from(path: Path) -> tuple[dict[str, Any], list[str]]:
    """`stripewise inventory --from PATH --json`: the JSON and the lines on stderr."""
    done = run_cli("inventory", "--from", str(path), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr.splitlines()


def first_line_starting(path: Path, prefix: str) -> int:
    lines = path.read_text().split("\n")
    return next(number for number, line in enumerate(lines, 1) if line.startswith(prefix))


def array(inventory: dict[str, Any], name: str) -> dict[str, Any]:
    return next(a for a in inventory["arrays"] if a["name"] == name)


def all_disks(inventory: dict[str, Any]) -> list[dict[str, Any]]:
    return [s["disk"] for c in inventory["controllers"] for s in c["slots"] if s["disk"]]


# --- point 1: a stray line does not sink the map ----------------------------------------------


def test_workstation_with_bare_modalias_lines_is_read_with_one_warning() -> None:
    inventory, stderr = inventory_from(WORKSTATION)
    assert slots_by_disk(inventory) == {
        "sda": ("0000:00:17.0", 0, "port 0"),
        "sdb": ("0000:00:17.0", 1, "port 1"),
        "sdc": ("0000:00:17.0", 2, "port 2"),
        "sdd": ("0000:00:17.0", 3, "port 3"),
    }
    assert disk(inventory, "sdc")["serial"] == "S4EWNX0R112235D"
    assert disk(inventory, "sdc")["model"] == "Samsung SSD 860 EVO 1TB"
    skipped = [line for line in stderr if "skipped" in line]
    first = first_line_starting(WORKSTATION, "MODALIAS=")
    assert skipped == [
        f"warning: {WORKSTATION}:{first}: skipped 3 unreadable lines "
        "(first: 'MODALIAS=hid:b0003g0001v0000046Dp0000C52B')"
    ]
    assert skipped[0].removeprefix("warning: ") in inventory["warnings"]


def test_server_with_two_sata_and_nine_usb_disks() -> None:
    inventory, stderr = inventory_from(SERVER)
    placed = slots_by_disk(inventory)
    assert {name for name, where in placed.items() if where[0] == "0000:00:1f.2"} == {"sda", "sdb"}
    usb = {name: where[2] for name, where in placed.items() if where[0] == "0000:00:14.0"}
    assert usb == {
        "sdc": "USB 2-1.1",
        "sdd": "USB 2-1.2",
        "sde": "USB 2-1.3",
        "sdf": "USB 2-1.4",
        "sdg": "USB 2-2.1",
        "sdh": "USB 2-2.2",
        "sdi": "USB 2-2.3",
        "sdj": "USB 2-2.4",
        "sdk": "USB 2-3",
    }
    assert {d["transport"] for n, d in ((n, disk(inventory, n)) for n in usb)} == {"usb"}
    first = first_line_starting(SERVER, "MODALIAS=")
    assert [line for line in stderr if "skipped" in line] == [
        f"warning: {SERVER}:{first}: skipped 1 unreadable line "
        "(first: 'MODALIAS=hid:b0003g0001v00000557p00002419')"
    ]


# --- point 1: md arrays of a dump, sizes unknown ---------------------------------------------


def test_md_raid0_is_listed_with_its_members_and_their_disks() -> None:
    inventory, _stderr = inventory_from(WORKSTATION)
    md = array(inventory, "md127")
    assert md["level"] == "raid0" and md["kind"] == "array"
    assert md["members"] == ["sda3", "sdb1", "sdc1", "sdd1"]
    assert md["member_disks"] == ["sda", "sdb", "sdc", "sdd"]
    assert md["raid_devices"] == 4
    assert md["uuid"] == "6f2c1e0a:93b1d7f4:0c5a2e71:4be8d310"
    for name in ("sda", "sdb", "sdc", "sdd"):
        assert disk(inventory, name)["state"] == "array_member", name
    sda3 = next(p for p in disk(inventory, "sda")["partitions"] if p["name"] == "sda3")
    assert sda3["holders"] == ["md127"] and sda3["fs_type"] == "linux_raid_member"


def test_md_members_named_with_the_ev_prefix_of_mdadm_4() -> None:
    inventory, _stderr = inventory_from(SERVER)
    md = array(inventory, "md0")
    assert (md["level"], md["members"], md["member_disks"]) == (
        "raid1",
        ["sda2", "sdb2"],
        ["sda", "sdb"],
    )


def test_members_of_partitions_the_dump_does_not_list_still_mark_their_disk(
    tmp_path: Path,
) -> None:
    """A dump cut to the disks (`udevadm info --export-db | grep -A40 block/sd.$`...) keeps
    MD_DEVICE_sdb1_DEV but loses sdb1's own record."""
    records = WORKSTATION.read_text().split("\n\n")
    kept = [r for r in records if not re.search(r"^P: .*/block/sd[a-d]/sd[a-d]\d$", r, re.M)]
    path = tmp_path / "cut.txt"
    path.write_text("\n\n".join(kept))
    inventory, _stderr = inventory_from(path)
    assert array(inventory, "md127")["member_disks"] == ["sda", "sdb", "sdc", "sdd"]
    assert disk(inventory, "sdb")["partitions"] == []
    assert disk(inventory, "sdb")["state"] == "array_member"
    assert disk(inventory, "sdb")["holders"] == ["md127"]


def test_sizes_stay_unknown_in_json_and_text() -> None:
    inventory, _stderr = inventory_from(WORKSTATION)
    assert [d["size_bytes"] for d in all_disks(inventory)] == [None] * 4
    assert array(inventory, "md127")["size_bytes"] is None
    text = run_cli("inventory", "--from", str(WORKSTATION))
    assert text.returncode == 0, text.stderr
    assert "4 disks on 1 controller (from udev-dump)" in text.stdout
    sizes = [line for line in text.stdout.splitlines() if re.match(r"\s+port \d", line)]
    assert len(sizes) == 4 and all("size unknown" in line for line in sizes)
    assert re.search(r"md127\s+raid0\s+size unknown\s+sda3 sdb1 sdc1 sdd1", text.stdout)
    assert not re.search(r"\b0(\.0)? ?(B|MB|GB|TB)\b", text.stdout)
    assert "skipped 3 unreadable lines" in text.stderr  # warnings go to stderr only
    assert "skipped" not in text.stdout


# --- point 1: whatever else real dumps hold -------------------------------------------------


def _summary(inventory: Inventory) -> tuple[object, ...]:
    placed = [
        (c.id, s.port, d.name, d.serial, d.model, d.state.value, d.size_bytes)
        for c in inventory.controllers
        for s in c.slots
        if (d := s.disk) is not None
    ]
    arrays = [(a.name, a.level, a.members, a.member_disks) for a in inventory.arrays]
    return tuple(placed), tuple(arrays)


def _crlf(data: bytes) -> bytes:
    return data.replace(b"\n", b"\r\n")


def _trailing_blanks(data: bytes) -> bytes:
    return b"\n".join(line + b" \t " for line in data.split(b"\n"))


def _no_blank_lines_between_records(data: bytes) -> bytes:
    return data.replace(b"\n\nP: ", b"\nP: ").rstrip(b"\n")


def _pasted_into_a_forum(data: bytes) -> bytes:
    indented = b"\n".join(b"    " + line if line else line for line in data.split(b"\n"))
    return b"root@ws:~# udevadm info --export-db\n" + indented + b"\nroot@ws:~# exit\n"


def _bom_and_sys_prefix(data: bytes) -> bytes:
    return b"\xef\xbb\xbf" + data.replace(b"P: /devices/", b"P: /sys/devices/")


def _other_systemd_lines(data: bytes) -> bytes:
    """Letters of systemd versions to come (B: driver subsystem, and ones not yet invented)."""
    return data.replace(b"\nU: block\n", b"\nU: block\nB: block\nX: something new\n")


@pytest.mark.parametrize(
    "mangle",
    [
        _crlf,
        _trailing_blanks,
        _no_blank_lines_between_records,
        _pasted_into_a_forum,
        _bom_and_sys_prefix,
        _other_systemd_lines,
    ],
)
def test_the_same_machine_however_the_dump_was_carried(mangle: Any, tmp_path: Path) -> None:
    expected = _summary(load_inventory(WORKSTATION))
    path = tmp_path / "carried.txt"
    path.write_bytes(mangle(WORKSTATION.read_bytes()))
    assert _summary(load_inventory(path)) == expected


def test_bytes_that_are_not_utf8_are_read_with_a_warning(tmp_path: Path) -> None:
    data = WORKSTATION.read_bytes().replace(b"HID_NAME=Dell KB216", b"HID_NAME=Dell\xa0KB216")
    data = data.replace(
        b"ID_MODEL_FROM_DATABASE=Unifying Receiver", b"ID_MODEL_FROM_DATABASE=R\xe9"
    )
    path = tmp_path / "latin1.txt"
    path.write_bytes(data)
    inventory, stderr = inventory_from(path)
    assert len(all_disks(inventory)) == 4
    first = data.split(b"\n").index(next(line for line in data.split(b"\n") if b"R\xe9" in line))
    note = [line for line in stderr if "UTF-8" in line]
    assert len(note) == 1 and f"{path}:{first + 1}:" in note[0], stderr
    assert "5 lines hold bytes that are not UTF-8" in note[0]


def test_records_with_unreadable_lines_keep_the_rest(tmp_path: Path) -> None:
    """A property without `=`, a device path that is not one: that line (or that record)
    goes, the disks around it stay."""
    text = WORKSTATION.read_text()
    text = text.replace("E: ID_ATA_SATA=1\n", "E: ID_ATA_SATA\n", 1)
    text = text.replace("P: /devices/pci0000:00/0000:00:14.0\n", "P: pci0000:00/0000:00:14.0\n")
    path = tmp_path / "odd.txt"
    path.write_text(text)
    inventory, stderr = inventory_from(path)
    assert sorted(slots_by_disk(inventory)) == ["sda", "sdb", "sdc", "sdd"]
    assert array(inventory, "md127")["members"] == ["sda3", "sdb1", "sdc1", "sdd1"]
    dropped = next(r for r in text.split("\n\n") if r.startswith("P: pci0000:00/"))
    count = len(dropped.splitlines()) + 1 + 3  # that record, the bad property, 3 MODALIAS
    first = first_line_starting(path, "P: pci0000:00/")
    assert [line for line in stderr if "skipped" in line] == [
        f"warning: {path}:{first}: skipped {count} unreadable lines "
        "(first: 'P: pci0000:00/0000:00:14.0')"
    ]


def _as_udevadm_json(text: str, pretty: bool) -> str:
    """`udevadm info --export-db --json=short|pretty` (systemd 256 on) of the same devices:
    one object per device with SYSNAME and every property."""
    objects = []
    for record in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in record.splitlines():
            if line.startswith("M: "):
                fields["SYSNAME"] = line[3:]
            elif line.startswith("E: "):
                key, _, value = line[3:].partition("=")
                fields[key] = value
        if fields:
            objects.append(fields)
    if pretty:
        return "\n".join(json.dumps(o, indent=8) for o in objects) + "\n"
    return "".join(json.dumps(o, separators=(",", ":")) + "\n" for o in objects)


@pytest.mark.parametrize("pretty", [False, True])
def test_udevadm_json_export_draws_the_same_map(pretty: bool, tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(_as_udevadm_json(WORKSTATION.read_text(), pretty))
    inventory, _stderr = inventory_from(path)
    assert inventory["source"] == "udev-dump"
    expected, _ = inventory_from(WORKSTATION)
    assert slots_by_disk(inventory) == slots_by_disk(expected)
    assert array(inventory, "md127")["members"] == array(expected, "md127")["members"]


def test_a_broken_object_in_a_udevadm_json_stream_is_skipped(tmp_path: Path) -> None:
    objects = _as_udevadm_json(WORKSTATION.read_text(), pretty=False).splitlines()
    middle = len(objects) // 2
    objects.insert(middle, '{"SYSNAME":"sdz","DEVPATH":"/devices/pci0000:00/0000:00:17.0/at')
    path = tmp_path / "cut.json"
    path.write_text("\n".join(objects) + "\n")
    inventory, stderr = inventory_from(path)
    assert sorted(slots_by_disk(inventory)) == ["sda", "sdb", "sdc", "sdd"]
    skipped = [line for line in stderr if "skipped" in line]
    assert len(skipped) == 1
    assert skipped[0].startswith(
        f"""warning: {path}:{middle + 1}: skipped 1 unreadable object (first: '{{"SYSNAME":"sdz","""
    )


def test_a_file_with_no_device_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("MODALIAS=hid:b0003g0001v0000046Dp0000C52B\nsome notes\n")
    done = run_cli("inventory", "--from", str(path))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"stripewise: error: {path}: no devices found (is this `udevadm info --export-db`?)"
    )


# --- point 2: multipath ------------------------------------------------------------------------

VOLUMES = {  # map -> (name, its paths on HBA 0000:03:00.0 and 0000:82:00.0)
    "dm-0": ("mpatha", "sda", "sdb"),
    "dm-1": ("mpathb", "sdc", "sdd"),
    "dm-2": ("mpathc", "sde", "sdf"),
    "dm-3": ("mpathd", "sdg", "sdh"),
}


def test_multipath_volumes_are_one_disk_with_two_paths() -> None:
    inventory, stderr = inventory_from(MULTIPATH)
    assert sorted(slots_by_disk(inventory)) == ["dm-0", "dm-1", "dm-2", "dm-3", "sdi"]
    for lun, (name, (label, first, second)) in enumerate(VOLUMES.items()):
        shown = disk(inventory, name)
        suffix = f" lun {lun}" if lun else ""
        assert slots_by_disk(inventory)[name][::2] == ("0000:03:00.0", f"phy 0{suffix}")
        assert shown["devnode"] == f"/dev/mapper/{label}"
        assert shown["model"] == "MSA 2050 SAS" and shown["transport"] == "sas"
        assert shown["wwn"] == f"0x600c0ff000d5b8a52f3c4b5d0{lun + 1}000000"
        assert [(p["name"], p["controller"], p["port"]) for p in shown["paths"]] == [
            (first, "0000:03:00.0", f"phy 0{suffix}"),
            (second, "0000:82:00.0", f"phy 4{suffix}"),
        ]
        assert [p["hctl"] for p in shown["paths"]] == [f"0:0:0:{lun}", f"1:0:0:{lun}"]
        other = next(
            s for s in controller(inventory, "0000:82:00.0")["slots"] if s["path_of"] == name
        )
        assert other["disk"] is None and other["port"] == f"phy 4{suffix}"
        assert second in other["note"]
        volume = array(inventory, name)
        assert (volume["level"], volume["label"], volume["members"]) == (
            "multipath",
            label,
            [first, second],
        )
    assert not [line for line in stderr if "multipath" in line]


def test_a_multipath_disk_keeps_what_its_map_holds() -> None:
    inventory, _stderr = inventory_from(MULTIPATH)
    assert array(inventory, "dm-4")["members"] == ["dm-0"]  # mpatha's partition map
    assert disk(inventory, "dm-0")["holders"] == ["dm-4"]
    assert disk(inventory, "dm-0")["state"] == "in_use"
    assert disk(inventory, "dm-1")["fs_type"] == "xfs"  # the map's, not the paths' mpath_member
    assert disk(inventory, "dm-2")["fs_type"] is None
    assert disk(inventory, "sdi")["paths"] == []


def test_paths_are_paired_by_the_whole_wwid_never_the_shared_short_wwn(tmp_path: Path) -> None:
    """Every volume of the array has the same ID_WWN (the first 16 digits): a map whose WWID
    no path carries gets no paths, and says so, rather than another volume's."""
    text = MULTIPATH.read_text().replace(
        "DM_UUID=mpath-3600c0ff000d5b8a52f3c4b5d04000000", "DM_UUID=mpath-3600c0ff000d5b8a5ffff"
    )
    path = tmp_path / "lost.txt"
    path.write_text(text)
    inventory, stderr = inventory_from(path)
    assert array(inventory, "dm-3")["members"] == []
    assert {"sdg", "sdh"} <= set(slots_by_disk(inventory))  # its paths stay plain disks
    assert disk(inventory, "dm-2")["paths"][0]["name"] == "sde"
    assert [line for line in stderr if "dm-3" in line] == [
        "warning: dm-3 (multipath mpathd): none of its paths found: listed as a volume only"
    ]


def test_user_friendly_names_off_pairs_by_dm_name(tmp_path: Path) -> None:
    """Without DM_UUID (an old dump) the map's name is its WWID when user_friendly_names is off."""
    text = MULTIPATH.read_text()
    for name, (label, _first, _second) in VOLUMES.items():
        number = name.removeprefix("dm-")
        block = text.split(f"P: /devices/virtual/block/dm-{number}\n", 1)[1].split("\n\n", 1)[0]
        wwid = re.search(r"DM_UUID=mpath-(\w+)", block).group(1)  # type: ignore[union-attr]
        lean = "\n".join(
            line.replace(f"DM_NAME={label}", f"DM_NAME={wwid}")
            for line in block.splitlines()
            if not line.startswith(("E: DM_UUID=", "E: DM_SERIAL=", "E: DM_WWN="))
        )
        text = text.replace(block, lean)
    path = tmp_path / "wwid-names.txt"
    path.write_text(text)
    inventory, _stderr = inventory_from(path)
    assert [p["name"] for p in disk(inventory, "dm-3")["paths"]] == ["sdg", "sdh"]


def test_multipath_text_output_names_the_paths() -> None:
    done = run_cli("inventory", "--from", str(MULTIPATH))
    assert done.returncode == 0, done.stderr
    assert "5 disks on 3 controllers" in done.stdout
    assert re.search(r"phy 0 lun 1\s+dm-1\s+size unknown .*paths sdc sdd", done.stdout)
    assert re.search(r"phy 4 lun 1\s+\(sdd: path to dm-1\)", done.stdout)
    assert re.search(r"dm-1\s+multipath\s+size unknown\s+sdc sdd", done.stdout)


def test_a_multipath_snapshot_loads_back_the_same(tmp_path: Path) -> None:
    inventory, _stderr = inventory_from(MULTIPATH)
    saved = tmp_path / "snapshot.json"
    saved.write_text(json.dumps(inventory))
    again, _stderr = inventory_from(saved)
    assert [p["name"] for p in disk(again, "dm-0")["paths"]] == ["sda", "sdb"]
    assert again["controllers"] == inventory["controllers"]  # path_of and notes included
    assert again["arrays"] == inventory["arrays"]  # member_disks, raid_devices included

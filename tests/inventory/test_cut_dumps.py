"""Issue 28, point 12: a udev dump cut short says so, in one line naming where, and the map
keeps whatever came before the cut.

The damaged files are the field dumps of tests/fixtures/udev/ and the X4500's export-db cut
as transfers, full disks and `head` cut them: inside a line, between lines, at the start; and
their `--json` form cut inside an object.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from stripewise.inventory import load_inventory
from stripewise.inventory.build import build_inventory
from stripewise.inventory.udevdump import DumpSource
from stripewise.model.topology import Inventory
from tests.fixtures.machines import sun_x4500
from tests.fixtures.udev_growth import as_json
from tests.test_cli import run_cli

DUMPS = Path(__file__).parent.parent / "fixtures" / "udev"
WORKSTATION = DUMPS / "workstation_md_raid0.txt"
DGX = DUMPS / "dgx_nvme_raid.txt"
MULTIPATH = DUMPS / "multipath_two_hbas.txt"
FIELD = sorted(DUMPS.glob("*.txt"))
# Listed as export-db lists them, virtual devices last (server_sata_usb.txt has its md0 among
# the first records, so a cut after it keeps a virtual device and says nothing of the rest).
ORDERED = [DGX, DUMPS / "nvme_storage_server.txt", WORKSTATION]
MISSING = "disks listed after it are missing"


def read(text: str, name: str = "cut.txt") -> Inventory:
    return build_inventory(DumpSource(text, name))


def cuts(inventory: Inventory) -> list[str]:
    return [w for w in inventory.warnings if " looks cut " in w]


def names(inventory: Inventory) -> set[str]:
    return {d.name for d in inventory.disks}


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def x4500_text() -> str:
    return sun_x4500().export_db()


# --- whole dumps say nothing -------------------------------------------------------------------


@pytest.mark.parametrize("path", FIELD, ids=lambda p: p.stem)
def test_whole_dumps_and_their_json_say_nothing_of_a_cut(path: Path) -> None:
    text = path.read_text()
    carried = {
        "as is": text,
        "without blank lines": text.replace("\n\nP: ", "\nP: ").rstrip("\n"),
        "CRLF": text.replace("\n", "\r\n"),
        "--json=short": as_json(text),
        "--json=pretty": as_json(text, pretty=True),
    }
    if path.stem != "server_sata_usb":  # it ends with a keyboard, where no whole dump ends
        carried["without its last line end"] = text.rstrip("\n")
    for how, variant in carried.items():
        inventory = read(variant)
        assert (cuts(inventory), inventory.incomplete) == ([], ()), how


def test_the_x4500_export_db_says_nothing_of_a_cut() -> None:
    inventory = read(x4500_text())
    assert len(inventory.disks) == 48 and cuts(inventory) == []


# --- cut inside a line -----------------------------------------------------------------------


def record_at(text: str, offset: int) -> str:
    """The device path of the record holding `offset`."""
    start = text.rfind("\n\nP: ", 0, offset)
    return text[start + 5 : text.index("\n", start + 5)] if start >= 0 else ""


@pytest.mark.parametrize("path", FIELD, ids=lambda p: p.stem)
def test_a_dump_cut_inside_a_line_names_that_line(path: Path) -> None:
    """Anywhere but after `E: KEY=` in the virtual devices a whole dump ends with (a whole
    dump saved without its last line end ends like that too)."""
    text = path.read_text()
    whole = read(text)
    known = names(whole) | {p.name for d in whole.disks for p in d.paths}
    tried = 0
    for offset in range(text.index("\n\n") + 8, len(text) - 1, len(text) // 41):
        half = text[text.rfind("\n", 0, offset) + 1 : offset]
        virtual = record_at(text, offset).startswith("/devices/virtual/")
        if "\n" in text[offset - 1 : offset + 1] or (virtual and re.match(r"E: [^=]+=", half)):
            continue
        tried += 1
        inventory = read(text[:offset], "dump.txt")
        line = line_of(text, offset)
        said = f"dump.txt looks cut short at line {line} (a line without its end): {MISSING}"
        assert cuts(inventory) == [said], offset
        assert inventory.incomplete == (said,)
        assert names(inventory) <= known, "nothing invented from half a record"
    assert tried > 20


def test_the_half_line_at_the_cut_is_not_read() -> None:
    """Cut inside sdc's ID_SERIAL_SHORT: sdc stays, with its whole serial from ID_SERIAL,
    never the half."""
    text = WORKSTATION.read_text()
    offset = text.index("E: ID_SERIAL_SHORT=S4EWNX0R112235D") + len("E: ID_SERIAL_SHORT=S4EWN")
    inventory = read(text[:offset])
    sdc = inventory.find_disk("sdc")
    assert sdc is not None and sdc.serial == "Samsung_SSD_860_EVO_1TB_S4EWNX0R112235D"


# --- cut between lines (`head -n`) -------------------------------------------------------------


@pytest.mark.parametrize("name", [p.stem for p in ORDERED] + ["x4500"])
def test_every_cut_between_lines_that_loses_a_disk_says_so(name: str) -> None:
    """From all the disks down to none: whenever the map differs from the whole dump's, one
    line says the dump looks cut short."""
    text = x4500_text() if name == "x4500" else (DUMPS / f"{name}.txt").read_text()
    lines = text.split("\n")
    whole = names(read(text))
    counts = set()
    for end in range(1, len(lines), len(lines) // 160 | 1):  # 160 cuts, at odd line steps
        inventory = read("\n".join(lines[:end]) + "\n")
        counts.add(len(inventory.disks))
        if names(inventory) != whole:
            assert len(cuts(inventory)) == 1, (end, inventory.warnings)
    assert min(counts) == 0 and max(counts) == len(whole), counts


def test_a_record_cut_before_its_properties() -> None:
    text = WORKSTATION.read_text()
    end = text.index("S: disk/by-path/pci-0000:00:17.0-ata-3.0\n")
    inventory = read(text[:end])
    line = line_of(text, end) - 1
    why = "a record without its properties"
    assert cuts(inventory) == [f"cut.txt looks cut short at line {line} ({why}): {MISSING}"]
    assert names(inventory) == {"sda", "sdb", "sdc"}  # what its record says: its name


def test_a_dump_cut_at_a_record_end_before_the_virtual_devices() -> None:
    text = WORKSTATION.read_text()
    end = text.index("P: /devices/pci0000:00/0000:00:17.0/ata3/")
    inventory = read(text[:end])
    line = line_of(text, end) - 2
    why = "no virtual device, which a whole dump ends with"
    assert cuts(inventory) == [f"cut.txt looks cut short after line {line} ({why}): {MISSING}"]


def test_nvme_namespaces_cut_off_after_their_path_disks() -> None:
    """The native-multipath namespaces come last, under /devices/virtual/nvme-subsystem/: a
    cut before them keeps the path disks and the md arrays, and loses the U.2 drives."""
    text = DGX.read_text()
    end = text.index("P: /devices/virtual/nvme-subsystem/nvme-subsys4\n")
    inventory = read(text[:end])
    assert names(inventory) == {"nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1"}
    assert cuts(inventory) == [
        "cut.txt looks cut short: NVMe namespaces nvme4n1, nvme5n1, nvme6n1 and 3 more are "
        "missing (only their path disks are listed)"
    ]


def test_multipath_maps_cut_off_after_their_paths() -> None:
    text = MULTIPATH.read_text()
    end = text.index("P: /devices/virtual/block/dm-2\n")
    inventory = read(text[:end])
    assert {"sde", "sdf"} <= names(inventory)  # mpathc's paths, each a disk of its own
    assert cuts(inventory) == [
        "cut.txt looks cut short: the multipath maps of sde, sdf are missing, so each path "
        "shows as a disk of its own"
    ]


# --- cut at the start ----------------------------------------------------------------------------


def test_a_dump_whose_start_is_cut_off_says_so_instead_of_skipping_lines() -> None:
    text = WORKSTATION.read_text()
    start = text.index("E: ID_ATA_FEATURE_SET_PM=1", text.index("block/sdb\n"))
    inventory = read(text[start - 7 :])  # inside a line of sdb's record
    first = line_of(text[start - 7 :], text.index("P: ", start) - start + 7) - 2
    assert cuts(inventory) == [
        f"cut.txt looks cut at its start (lines 1-{first} are the end of a record): devices "
        "listed before them are missing"
    ]
    assert not [w for w in inventory.warnings if ":1: skipped" in w]
    assert {"sdc", "sdd"} <= names(inventory)


def test_a_json_stream_whose_start_is_cut_off_is_read() -> None:
    stream = as_json(WORKSTATION.read_text())
    start = stream.index('{"SYSNAME":"sdb"')
    inventory = read(stream[start + 40 :])
    assert cuts(inventory) == [
        "cut.txt looks cut at its start (line 1 is the end of an object): devices listed "
        "before them are missing"
    ]
    assert {"sdc", "sdd"} <= names(inventory)


# --- the --json form cut inside an object -----------------------------------------------------


@pytest.mark.parametrize("pretty", [False, True], ids=["short", "pretty"])
def test_a_json_dump_cut_inside_an_object_keeps_what_it_holds(pretty: bool) -> None:
    stream = as_json(WORKSTATION.read_text(), pretty=pretty)
    start = stream.index('"SYSNAME": "sdc"' if pretty else '"SYSNAME":"sdc"')
    end = stream.index("ID_ATA_ROTATION_RATE_RPM", start)
    inventory = read(stream[:end])
    line = line_of(stream, stream.rfind("\n{", 0, start) + 1)
    why = "an object without its end"
    assert cuts(inventory) == [f"cut.txt looks cut short at line {line} ({why}): {MISSING}"]
    sdc = inventory.find_disk("sdc")
    assert sdc is not None and sdc.serial == "S4EWNX0R112235D"
    assert not [w for w in inventory.warnings if "skipped" in w]


# --- what the commands say -----------------------------------------------------------------------


def cut_file(tmp_path: Path) -> tuple[Path, str]:
    """The DGX dump cut inside a line of its fourth drive, and the line saying so."""
    text = DGX.read_text()
    offset = text.index("E: ID_SERIAL=", text.index("nvme3/nvme3n1\n")) + 20
    path = tmp_path / "dgx.txt"
    path.write_text(text[:offset])
    line = line_of(text, offset)
    return path, f"{path} looks cut short at line {line} (a line without its end): {MISSING}"


def test_inventory_text_says_the_cut_once_on_stderr(tmp_path: Path) -> None:
    path, said = cut_file(tmp_path)
    done = run_cli("inventory", "--from", str(path))
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if "looks cut" in line] == [
        f"warning: {said}"
    ]
    assert re.search(r"nvme2n1 .* s/n S436NA0N301234", done.stdout), done.stdout


def test_inventory_json_has_the_cut_in_warnings_and_incomplete(tmp_path: Path) -> None:
    path, said = cut_file(tmp_path)
    done = run_cli("inventory", "--from", str(path), "--json")
    assert done.returncode == 0, done.stderr
    inventory: dict[str, Any] = json.loads(done.stdout)
    assert inventory["incomplete"] == [said]
    assert said in inventory["warnings"]
    assert [line for line in done.stderr.splitlines() if "looks cut" in line] == [
        f"warning: {said}"
    ]
    whole = json.loads(run_cli("inventory", "--from", str(DGX), "--json").stdout)
    assert whole["incomplete"] == []


def test_a_snapshot_of_a_cut_dump_keeps_saying_so(tmp_path: Path) -> None:
    path, said = cut_file(tmp_path)
    saved = tmp_path / "dgx.json"
    done = run_cli("inventory", "--from", str(path), "--save", str(saved))
    assert done.returncode == 0, done.stderr
    again = load_inventory(saved)
    assert again.incomplete == (said,) and said in again.warnings

"""`stripewise bays import|show|export` and `inventory --json`'s `bay`, run for real inside the
X4500's umockdev testbed with the layout and mapping in a private config folder."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

from stripewise.cli.bays import format_bays
from stripewise.inventory.chassis_files import layouts
from stripewise.model.chassis import ChassisLayout, dump_layout, parse_layout
from stripewise.model.topology import Inventory
from tests.bays.conftest import x4500_bay_of_port, x4500_port_name
from tests.bays.test_layouts import HAND_WRITTEN
from tests.bays.test_mapping import walk_x4500
from tests.fixtures.machines import X4500_SLOT_MAP, sun_x4500
from tests.fixtures.machines_sas import SAS_BAYS, sas_enclosure
from tests.fixtures.testbed_model import Machine
from tests.fixtures.umock import needs_umockdev, run_in_testbed


def stripewise(tmp_path: Path, *argv: str, machine: Machine | None = None) -> tuple[int, str, str]:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    argv = (sys.executable, "-m", "stripewise", *argv)
    done = run_in_testbed(machine or sun_x4500(), list(argv), env=env)
    return done.returncode, done.stdout, done.stderr


@needs_umockdev
def test_import_then_inventory_json_and_show_and_export(x4500: Inventory, tmp_path: Path) -> None:
    layout = layouts(Path("/nonexistent"))["Sun Fire X4500"][0]
    shared = tmp_path / "thumper.toml"
    shared.write_text(dump_layout(layout, walk_x4500(x4500)), encoding="utf-8")

    code, _out, err = stripewise(tmp_path, "bays", "import", str(shared))
    assert code == 0, err
    assert "48 mapped bays kept for this host" in err
    assert list((tmp_path / "config" / "stripewise" / "chassis").iterdir())

    code, out, err = stripewise(tmp_path, "inventory", "--json")
    assert code == 0, err
    disks = {
        s["disk"]["name"]: s["disk"] for c in json.loads(out)["controllers"] for s in c["slots"]
    }
    for name, (controller, port) in X4500_SLOT_MAP.items():
        number = x4500_bay_of_port(controller, port)
        assert disks[name]["bay"] == {
            "label": str(number),
            "row": 4 - number // 12,  # the top is drawn with the front row at the bottom
            "column": number % 12 + 1,
        }, name

    code, out, err = stripewise(tmp_path, "bays", "show", "--json", "--product", "Sun Fire X4500")
    assert code == 0, err
    shown = json.loads(out)
    assert shown["product"] == "Sun Fire X4500" and len(shown["bays"]) == 48
    sdi = next(b for b in shown["bays"] if b["disk"] == "sdi")
    assert sdi["label"] == "6" and sdi["port"] == x4500_port_name(3, 0) and sdi["face"] == "top"
    assert sdi["state"] == "system"

    code, out, err = stripewise(tmp_path, "bays", "show")
    assert code == 0, err
    assert "48 of 48 bays mapped" in out and "bay 6      sdi" in out

    exported = tmp_path / "out.toml"
    code, _out, err = stripewise(tmp_path, "bays", "export", str(exported))
    assert code == 0, err
    again = parse_layout(exported.read_text(encoding="utf-8"), "out.toml")
    assert dict(again.ports) == walk_x4500(x4500)
    # a folder that is not there is a typo: said, not made (as root), as inventory --save does
    typo = tmp_path / "no-such-folder" / "out.toml"
    code, _out, err = stripewise(tmp_path, "bays", "export", str(typo))
    assert code == 2 and not typo.parent.exists()
    assert err == f"stripewise: error: cannot write {typo}: No such file or directory\n"


def test_a_layout_imported_for_a_recording_is_the_one_shown_for_it(tmp_path: Path) -> None:
    """A recording names no product (no DMI): the layout imported with --from is kept for
    its host, so `bays show --from` the same file finds it, not "run bays import"."""
    recording = tmp_path / "x4500.umockdev"
    recording.write_text(sun_x4500().umockdev())
    layout = tmp_path / "x4500.toml"
    layout.write_text(dump_layout(layouts()["Sun Fire X4500"][0], {}))
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "stripewise", "bays", *argv, "--from", str(recording)]
        return subprocess.run(command, capture_output=True, text=True, env=env, check=False)

    imported = cli("import", str(layout))
    assert imported.returncode == 0, imported.stderr
    assert "kept for this host (its product is not known: a file)" in imported.stderr
    shown = cli("show")
    assert shown.returncode == 0, shown.stderr
    assert "0 of 48 bays mapped" in shown.stdout


@needs_umockdev
def test_no_layout_says_how_to_make_one(tmp_path: Path) -> None:
    code, _out, err = stripewise(tmp_path, "bays", "show")
    assert code != 0
    assert "no chassis layout for this machine" in err and "bays import FILE" in err
    code, out, err = stripewise(tmp_path, "inventory", "--json")
    assert code == 0 and '"bay"' not in out, err


@needs_umockdev
def test_the_ses_testbed_is_mapped_by_its_enclosure(tmp_path: Path) -> None:
    """No mapping saved: a 12-bay layout for the product, and every disk an SES slot holds
    lands in the bay of its slot's number, in `bays show` and in `inventory --json`."""
    sas = sas_enclosure()
    product = ("--product", "Generic 2U 12-bay")
    code, out, err = stripewise(tmp_path, "bays", "show", "--json", *product, machine=sas)
    assert code == 0, err
    shown = {int(b["label"]): b for b in json.loads(out)["bays"]}
    assert {n for n, b in shown.items() if b["disk"]} == set(SAS_BAYS)
    assert shown[0]["state"] == "system" and shown[3]["disk"] is None
    assert "exp0x500304801f3b2a7f-phy" in shown[0]["port"]

    exported = tmp_path / "sas.toml"
    code, _out, err = stripewise(tmp_path, "bays", "export", str(exported), *product, machine=sas)
    assert code == 0, err
    code, _out, err = stripewise(tmp_path, "bays", "import", str(exported), machine=sas)
    assert code == 0, err
    code, out, err = stripewise(tmp_path, "inventory", "--json", machine=sas)
    assert code == 0, err
    bays = {
        s["disk"]["name"]: s["disk"].get("bay")
        for c in json.loads(out)["controllers"]
        for s in c["slots"]
        if s["disk"]
    }
    assert bays["sdi"] is None  # cabled straight to the HBA: in no bay
    assert sorted(int(b["label"]) for b in bays.values() if b) == sorted(SAS_BAYS)
    for bay in (b for b in bays.values() if b):  # the template: 3 rows of 4 from the top left
        number = int(bay["label"])
        assert (bay["row"], bay["column"]) == (number // 4 + 1, number % 4 + 1)


def from_recording(tmp_path: Path, recording: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """`stripewise bays ARGV --from RECORDING` with the config in tmp_path."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    command = [sys.executable, "-m", "stripewise", "bays", *argv, "--from", str(recording)]
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


def two_x4500s(tmp_path: Path) -> tuple[Path, Path]:
    """Two recordings of the same box: two hosts (their keys are their files' names)."""
    text = sun_x4500().umockdev()
    hosts = (tmp_path / "one.umockdev", tmp_path / "two.umockdev")
    for host in hosts:
        host.write_text(text)
    return hosts


def test_a_layout_without_ports_replaces_the_one_each_host_was_mapped_on(tmp_path: Path) -> None:
    """docs/bays.md's example imported with its [ports] on two hosts, then drawn again with
    three front rows and no [ports]: the host it is imported on and the other host of the
    model both show it, each keeping the bays it still has and saying which it lost."""
    one, two = two_x4500s(tmp_path)
    example = tmp_path / "l36.toml"
    example.write_text(HAND_WRITTEN.replace('"1-01" =', '"4-02" = "pci-x"\n"1-01" ='))
    product = ("--product", "Example 4U 36-bay")
    for host in (one, two):
        done = from_recording(tmp_path, host, "import", str(example), *product)
        assert done.returncode == 0 and "3 mapped bays kept for this host" in done.stderr
    three_rows = tmp_path / "l30.toml"
    three_rows.write_text(HAND_WRITTEN.replace("rows = 4", "rows = 3").split("[ports]")[0])

    done = from_recording(tmp_path, one, "import", str(three_rows), *product)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[1:] == [
        "2 mapped bays kept for this host",
        "note: 1 mapped bay not in the layout any more, unmapped: 4-02",
    ]
    for host in (one, two):
        shown = from_recording(tmp_path, host, "show")
        assert shown.returncode == 0 and "front (3 x 6)" in shown.stdout, shown.stderr
        assert "(2 of 30 bays mapped)" in shown.stdout
        listed = json.loads(from_recording(tmp_path, host, "show", "--json").stdout)["bays"]
        assert {b["label"] for b in listed if b["port"]} == {"1-01", "rear 2-06"}
    lost = from_recording(tmp_path, two, "show").stderr
    assert lost == (
        'note: the layout of "Example 4U 36-bay" changed since this host was mapped: '
        "1 mapped bay not in the layout any more, unmapped: 4-02\n"
    )


def test_the_grid_lines_up_whatever_the_labels(x4500: Inventory) -> None:
    """Every bay of a panel's column starts at the same place on the terminal, be its label
    `rear 2-06`, `1-01` or wide characters, its disk `sdk`, `empty` or `?`."""
    wide = HAND_WRITTEN.replace("rear ", "背面 ")
    sdi = next(p for p in walk_x4500(x4500).values() if p.endswith("ata-1"))
    for text in (HAND_WRITTEN, wide):
        layout = parse_layout(text, "l36.toml")
        ports = {**layout.ports, f"{layout.panels[1].prefix}1-03": sdi, "2-02": sdi}
        lines = format_bays(layout, ports, x4500).splitlines()
        for index, panel in enumerate(layout.panels):
            top = lines.index(f"{panel.face.value} ({panel.rows} x {panel.columns})")
            grid = lines[top + 1 : top + 1 + panel.rows]
            starts = [cell_starts(line, layout, index, row) for row, line in enumerate(grid)]
            assert all(s == starts[0] for s in starts), grid
            assert all(a < b for a, b in itertools.pairwise(starts[0])), grid


def cell_starts(line: str, layout: ChassisLayout, panel: int, row: int) -> list[int]:
    """Where each bay's cell starts on the screen, in terminal columns."""
    found, at = [], 0
    for bay in (b for b in layout.bays if b.panel == panel and b.row == row):
        at = line.index(f"{bay.label}:", at)
        assert line[at - 1] == " ", line  # the cell before ends in a space
        found.append(sum(2 if unicodedata.east_asian_width(c) == "W" else 1 for c in line[:at]))
        at += 1
    return found


def test_no_layout_for_a_recording_names_the_recording(tmp_path: Path) -> None:
    """A recording names no DMI product: the refusal says which map, and how to name one."""
    one, _two = two_x4500s(tmp_path)
    shown = from_recording(tmp_path, one, "show")
    assert shown.returncode == 2
    assert shown.stderr.startswith(
        f"stripewise: error: no chassis layout for the map in {one} (product not named: "
        "give --product NAME): "
    )


def test_a_label_with_a_line_break_is_refused_in_one_line(tmp_path: Path) -> None:
    one, _two = two_x4500s(tmp_path)
    broken = tmp_path / "nl.toml"
    broken.write_text(HAND_WRITTEN.replace('prefix = "rear "', 'prefix = "a\\nb"'))
    imported = from_recording(tmp_path, one, "import", str(broken))
    assert imported.returncode == 2 and imported.stderr == (
        f"stripewise: error: {broken}: panel 2 prefix: holds the control character U+000A: "
        "one line of text only\n"
    )
    assert not (tmp_path / "config").exists()


def test_an_export_over_a_kernel_file_gives_the_real_reason(tmp_path: Path) -> None:
    """/proc/version is there: the reason is /proc's, which makes no file beside it (root may
    write in /proc as far as access(2) says), never that the file is missing."""
    one, _two = two_x4500s(tmp_path)
    product = ("--product", "Sun Fire X4500")
    exported = from_recording(tmp_path, one, "export", "/proc/version", *product)
    reason = "no file can be made in /proc (No such file or directory)"
    said = reason if os.geteuid() == 0 else "Permission denied"
    assert exported.returncode == 2
    assert exported.stderr == f"stripewise: error: cannot write /proc/version: {said}\n"

"""`stripewise tune presets|show|preview` on real loop devices and the real /proc/sys/vm."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from stripewise.cli import main
from stripewise.model.tunables import parse_scheduler
from tests.fixtures.loops import Loop, loop_device, needs_loop
from tests.fixtures.tuning_presets import HEAD, SHIPPED, queue_file, sysfs_value
from tests.test_cli import run_cli

MiB = 2**20


@pytest.fixture
def loop() -> Iterator[Loop]:
    with loop_device(8 * MiB) as device:
        yield device


def user_folder() -> Path:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "stripewise" / "presets"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def vm(name: str) -> int:
    return int(Path("/proc/sys/vm", name).read_text())


# --- tune presets ------------------------------------------------------------------------------
def test_presets_lists_shipped_and_user_presets(capsys: pytest.CaptureFixture[str]) -> None:
    mine = user_folder() / "mine.toml"
    mine.write_text(HEAD + 'name = "mine"\ndescription = """Mine.\nSecond line."""\n')
    assert main(["tune", "presets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "SOURCE", "DESCRIPTION"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert set(rows) == {*SHIPPED, "mine"}
    assert rows["mine"].split()[1:] == [str(mine), "Mine."]
    assert rows["legacy-2002-yocum"].split()[1] == "shipped"
    assert "Second line" not in "\n".join(lines)


def test_presets_json_has_each_first_description_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", "presets", "--json"]) == 0
    presets = {p["name"]: p for p in json.loads(capsys.readouterr().out)["presets"]}
    assert tuple(presets) == SHIPPED
    entry = presets["parity-raid-writes"]
    assert entry["source"] == "shipped" and entry["path"].endswith("parity-raid-writes.toml")
    first = Path(entry["path"]).read_text().split('description = """', 1)[1].splitlines()[0]
    assert entry["description"] == first


def test_a_broken_user_preset_is_listed_and_reported(capsys: pytest.CaptureFixture[str]) -> None:
    broken = user_folder() / "broken.toml"
    broken.write_text(HEAD + 'name = "broken"\n[device]\nread_ahead_kb = "lots"\n')
    assert main(["tune", "presets"]) == 1
    captured = capsys.readouterr()
    assert f"{broken}: [device] read_ahead_kb" in captured.err
    assert "(broken: see above)" in captured.out
    assert "kernel-defaults" in captured.out


# --- tune show ---------------------------------------------------------------------------------
@needs_loop
def test_show_reports_the_real_read_ahead_kb(loop: Loop) -> None:
    with sysfs_value(queue_file(loop, "read_ahead_kb"), "3172"):
        done = run_cli("tune", "show", "--device", loop.device)
        as_json = run_cli("tune", "show", "--device", loop.name, "--json")
    assert done.returncode == 0, done.stderr
    # the journal's newest entry comes first when a helper put back what another left (a test
    # kills helpers on purpose): the device's table follows
    lines = done.stdout.splitlines()
    while lines and (lines[0].startswith("note: ") or not lines[0]):
        lines.pop(0)
    assert lines[0] == loop.name
    assert lines[1].split()[:3] == ["read_ahead_kb", "3172", "KiB"]
    assert as_json.returncode == 0, as_json.stderr
    (device,) = json.loads(as_json.stdout)["devices"]
    assert device["values"]["read_ahead_kb"] == {"value": 3172, "unit": "KiB"}
    active, offered = parse_scheduler(queue_file(loop, "scheduler").read_text())
    assert device["values"]["scheduler"] == {"value": active, "unit": "name"}
    assert device["schedulers"] == list(offered)
    assert device["max_hw_sectors_kb"] == int(queue_file(loop, "max_hw_sectors_kb").read_text())
    assert device["values"]["nr_requests"]["value"] == int(
        queue_file(loop, "nr_requests").read_text()
    )
    assert f"offered: {', '.join(offered)}" in done.stdout
    assert f"max_hw_sectors_kb {device['max_hw_sectors_kb']} KiB" in done.stdout


@needs_loop
def test_show_marks_the_dirty_pair_in_force(loop: Loop, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", "show", "--device", loop.name, "--json"]) == 0
    vm_now = json.loads(capsys.readouterr().out)["global"]
    bytes_in_force = vm("dirty_bytes") != 0
    assert vm_now["vm.dirty_bytes"]["in_force"] is bytes_in_force
    assert vm_now["vm.dirty_ratio"]["in_force"] is not bytes_in_force
    assert vm_now["vm.dirty_ratio"] == {
        "value": vm("dirty_ratio"),
        "unit": "%",
        "in_force": not bytes_in_force,
    }
    assert vm_now["vm.dirty_expire_centisecs"]["value"] == vm("dirty_expire_centisecs")
    assert main(["tune", "show", "--device", loop.name]) == 0
    text = capsys.readouterr().out
    ratio_line = next(line for line in text.splitlines() if "vm.dirty_ratio" in line)
    assert ratio_line.split()[1:3] == [str(vm("dirty_ratio")), "%"]
    assert ratio_line.endswith("in force") is not bytes_in_force
    writeback = vm("dirty_writeback_centisecs")
    assert f"{writeback} centisecs ({writeback / 100:g} s)" in text


@needs_loop
def test_show_several_devices_once_each(loop: Loop, capsys: pytest.CaptureFixture[str]) -> None:
    with loop_device(8 * MiB) as other:
        args = ["tune", "show", "--json", "--device", loop.device, "--device", other.name]
        assert main([*args, "--device", loop.name]) == 0
    names = [d["name"] for d in json.loads(capsys.readouterr().out)["devices"]]
    assert names == [loop.name, other.name]


# --- tune preview -----------------------------------------------------------------------------
@needs_loop
def test_preview_shows_current_to_new_and_writes_nothing(loop: Loop) -> None:
    read_ahead = queue_file(loop, "read_ahead_kb")
    scheduler = queue_file(loop, "scheduler")
    with sysfs_value(read_ahead, "512"), sysfs_value(scheduler, "none"):
        before = scheduler.read_text()
        done = run_cli("tune", "preview", "streaming-throughput", "--device", loop.device)
        as_json = run_cli(
            "tune", "preview", "streaming-throughput", "--device", loop.name, "--json"
        )
        assert read_ahead.read_text().strip() == "512" and scheduler.read_text() == before
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "preset streaming-throughput (shipped)"
    rows = {line.split("  ")[0]: line for line in lines if line.startswith(f"{loop.name}: ")}
    assert rows[f"{loop.name}: read_ahead_kb"].split()[2:6] == ["512", "->", "4096", "KiB"]
    assert rows[f"{loop.name}: scheduler"].split()[2:5] == ["none", "->", "mq-deadline"]
    assert (
        f"the first of mq-deadline, none that {loop.name} offers" in rows[f"{loop.name}: scheduler"]
    )
    assert "written after the scheduler switch" in rows[f"{loop.name}: nr_requests"]
    ratio = next(line for line in lines if line.startswith("vm.dirty_ratio"))
    if vm("dirty_ratio") != 40:
        assert ratio.split()[1:5] == [str(vm("dirty_ratio")), "->", "40", "%"]
    assert lines[-1].endswith("preview only: nothing was written.")
    assert as_json.returncode == 0, as_json.stderr
    result = json.loads(as_json.stdout)
    changes = {(c["device"], c["key"]): c for c in result["changes"]}
    assert changes[(loop.name, "read_ahead_kb")] | {"note": ""} == {
        "device": loop.name,
        "key": "read_ahead_kb",
        "unit": "KiB",
        "current": 512,
        "new": 4096,
        "changes": True,
        "skipped": False,
        "note": "",
        "side_effects": [],
    }
    assert changes[(None, "vm.dirty_ratio")]["side_effects"] == [
        {"device": None, "key": "vm.dirty_bytes", "value": 0}
    ]


@needs_loop
def test_preview_keeps_a_larger_value_and_skips_md_values(
    loop: Loop, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = user_folder() / "raid-box.toml"
    mine.write_text(
        HEAD + 'name = "raid-box"\ninclude = ["streaming-throughput", "parity-raid-writes"]\n'
    )
    with sysfs_value(queue_file(loop, "read_ahead_kb"), "16384"):
        assert main(["tune", "preview", "raid-box", "--device", loop.name]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        f"preset raid-box ({mine}, includes streaming-throughput, parity-raid-writes)\n"
    )
    row = next(line for line in out.splitlines() if f"{loop.name}: read_ahead_kb" in line)
    assert row.split()[2:] == ["16384", "KiB", "(unchanged)", "kept:", "already", "larger"]
    row = next(line for line in out.splitlines() if "stripe_cache_size" in line)
    assert row.split()[2] == "-" and f"skipped: {loop.name} is not an md array" in row
    assert "1 skipped" in out


@needs_loop
def test_nr_requests_written_after_a_scheduler_switch_shows_its_current_value(
    loop: Loop, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 29.8: the value read, as `tune show` prints it, never "?" beside "(was 128)";
    written all the same, since the switch resets it."""
    with sysfs_value(queue_file(loop, "scheduler"), "none"):
        now = int(queue_file(loop, "nr_requests").read_text())
        assert main(["tune", "show", "--device", loop.name]) == 0
        shown = capsys.readouterr().out
        assert main(["tune", "preview", "streaming-throughput", "--device", loop.name]) == 0
        out = capsys.readouterr().out
        args = ["tune", "preview", "streaming-throughput", "--device", loop.name, "--json"]
        assert main(args) == 0
        result = json.loads(capsys.readouterr().out)
    show_row = next(line for line in shown.splitlines() if "nr_requests" in line)
    assert show_row.split()[1] == str(now)
    row = next(line for line in out.splitlines() if f"{loop.name}: nr_requests" in line)
    assert row.split()[2:6] == [str(now), "->", "256", "requests"], row
    assert "?" not in row and "(was" not in row
    assert "written after the scheduler switch, which resets it" in row
    change = next(c for c in result["changes"] if c["key"] == "nr_requests")
    assert (change["current"], change["new"], change["changes"]) == (now, 256, True)


@needs_loop
def test_preview_of_a_preset_file_by_path(
    loop: Loop, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "small.toml"
    path.write_text(HEAD + 'name = "small"\n[device]\nread_ahead_kb = 64\n')
    with sysfs_value(queue_file(loop, "read_ahead_kb"), "256"):
        assert main(["tune", "preview", str(path), "--device", loop.name, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["source"], result["path"]) == ("file", str(path))
    ((change),) = result["changes"]
    assert (change["current"], change["new"]) == (256, 64)


# --- refusals: one line, exit 2 ----------------------------------------------------------------
@pytest.mark.parametrize(
    "device, words",
    [
        ("../etc", "not a device name: '../etc'"),
        ("/dev/../sda", "not a device name"),
        ("sd/b", "not a device name"),
        ("..", "not a device name"),
        ("nosuchdisk9", "no block device 'nosuchdisk9' (nothing in /sys/block/nosuchdisk9)"),
        ("/dev/nosuchdisk9", "no block device 'nosuchdisk9'"),
    ],
)
@pytest.mark.parametrize("action", [["show"], ["preview", "kernel-defaults"]])
def test_bad_device_names_exit_2(action: list[str], device: str, words: str) -> None:
    done = run_cli("tune", *action, "--device", device)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and words in done.stderr, done.stderr


def test_an_unknown_preset_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", "preview", "no-such-preset", "--device", "loop0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "stripewise: error: unknown preset 'no-such-preset' (known: " + ", ".join(SHIPPED) + ")\n"
    )


def test_a_broken_preset_file_exits_2() -> None:
    folder = user_folder()
    (folder / "bad.toml").write_text(HEAD + 'name = "bad"\n[global]\n"vm.dirty_ratio" = 140\n')
    done = run_cli("tune", "preview", "bad", "--device", "loop0")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"stripewise: error: {folder / 'bad.toml'}: [global] vm.dirty_ratio: "
        "140 is out of range (0 to 100 %)\n"
    )


def test_the_device_option_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["tune", "show"])
    assert caught.value.code == 2
    assert "--device" in capsys.readouterr().err

"""`stripewise plan`: bad files exit 2 with one line; valid plans exit 0 and list problems;
--json has the documented keys; --inventory finds real disks; --script writes the script."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from stripewise.cli import main
from stripewise.model.plan import Filesystem, RaidLevel
from stripewise.model.topology import Inventory
from stripewise.planner.plan_writer import dumps_plan
from tests.planner.plans import one_array_plan

REQUIRED_ARRAY_KEYS = {
    "name",
    "level",
    "members",
    "data_disks",
    "usable_bytes",
    "fault_tolerance",
    "predicted",
    "spread_score",
    "warnings",
    "commands",
}
HEAD = 'format = "stripewise-plan"\nversion = 1\nname = "t"\n'


def write(tmp_path: Path, text: str, name: str = "plan.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["plan", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_has_the_documented_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = one_array_plan(
        RaidLevel.RAID6, 6, chunk_kib=256, filesystem=Filesystem.XFS, hypothetical=True
    )
    data = run_json(capsys, str(write(tmp_path, dumps_plan(plan))))
    assert {"arrays", "cost"} <= set(data)
    (array,) = data["arrays"]
    assert set(array) >= REQUIRED_ARRAY_KEYS
    assert array["name"] == "data" and array["level"] == "raid6"
    assert array["members"] == ["d1", "d2", "d3", "d4", "d5", "d6"]
    assert array["data_disks"] == 4 and array["fault_tolerance"] == 2
    assert array["usable_bytes"] == 4 * 18 * 10**12
    predicted = array["predicted"]
    assert set(predicted) >= {"read_mb_s", "write_mb_s", "bottleneck"}
    for side in ("read_mb_s", "write_mb_s"):
        assert set(predicted[side]) == {"low", "high"}
        assert 0 < predicted[side]["low"] <= predicted[side]["high"]
    assert isinstance(predicted["bottleneck"], str)
    assert 0 <= array["spread_score"] <= 100
    assert isinstance(array["warnings"], list)
    assert array["commands"][0].startswith("mdadm --create /dev/md/data --level=6")
    assert array["commands"][1] == "mkfs.xfs -L data -b size=4096 -d su=256k,sw=4 /dev/md/data"
    assert array["filesystem"]["su_kib"] == 256 and array["filesystem"]["sw"] == 4
    assert array["raw_bytes"] == 6 * 18 * 10**12 and array["efficiency"] == pytest.approx(4 / 6)
    cost = data["cost"]
    assert cost["currency"] == "USD"
    assert cost["total"] == 6 * 300  # the controllers are real: only the disks cost
    assert cost["cost_per_usable_tb"] == pytest.approx(cost["total"] / 72)


def test_problems_exit_0_and_are_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = one_array_plan(RaidLevel.RAID6, 3)  # one disk short
    path = write(tmp_path, dumps_plan(plan))
    data = run_json(capsys, str(path))
    (array,) = data["arrays"]
    assert array["commands"] == [] and array["ok"] is False
    assert any("at least 4 members" in e for e in array["errors"])
    assert data["ok"] is False
    assert main(["plan", str(path)]) == 0
    out = capsys.readouterr().out
    assert "error: RAID 6 needs at least 4 members" in out


def test_text_output_is_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = one_array_plan(RaidLevel.RAID50, 8, group_size=4, hypothetical=True)
    assert main(["plan", str(write(tmp_path, dumps_plan(plan)))]) == 0
    out = capsys.readouterr().out
    assert "data  RAID 50, 8 disks (6 data), 512 KiB chunk, 2 sets of 4" in out
    assert "predicted: read" in out and "spread" in out
    assert "mkfs.ext4 -b 4096 -E stride=384,stripe_width=768" in out
    assert "cost of new hardware: 2,400 USD" in out
    assert "--script FILE" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            HEAD + '[[array]]\nname = "md0"\nlevel = "raid5"\nmembers = ["sdz"]\n',
            "[[array]] 'md0' members: unknown disk 'sdz'",
        ),
        (
            HEAD + '[[controller]]\nid = "c"\n[[disk]]\nid = "d3"\ncontroller = "c"\n'
            "capacity_gb = -5\n",
            "[[disk]] 'd3' capacity_gb: must be a number between 0.001 and 1000000, got -5",
        ),
        (
            HEAD + '[[array]]\nname = "a"\nlevel = "raid7"\n',
            "[[array]] 'a' level: 'raid7' is not one of raid0, raid1",
        ),
        (HEAD + "[[array]\n", "(at line 4, column"),
    ],
)
def test_bad_files_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    path = write(tmp_path, text)
    assert main(["plan", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"stripewise: error: {path}: ") and message in err[0]


def test_real_process_exit_code_and_stderr(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + '[[array]]\nname = "md0"\nlevel = "raid5"\nmembers = ["sdz"]\n')
    done = subprocess.run(
        [sys.executable, "-m", "stripewise", "plan", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"stripewise: error: {path}: [[array]] 'md0' members: unknown disk 'sdz' (the plan has "
        "no disks: add [[disk]] tables or --inventory)\n"
    )


def test_missing_file_and_bad_inventory_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", str(tmp_path / "none.toml")]) == 2
    assert "cannot read" in capsys.readouterr().err
    path = write(tmp_path, HEAD)
    assert main(["plan", str(path), "--inventory", str(tmp_path / "none.json")]) == 2
    assert "none.json" in capsys.readouterr().err


def test_inventory_by_name_and_serial(
    tmp_path: Path, x4500_file: Path, x4500: Inventory, capsys: pytest.CaptureFixture[str]
) -> None:
    serial = x4500.find_disk("sdz").serial  # type: ignore[union-attr]
    names = ["sdas", "sdy", serial, "sdac"]
    text = HEAD + "".join(
        f'[[disk]]\nid = "{n}"\nstate = "free"\n' for n in ("sdas", "sdy", "sdz", "sdac")
    )
    text += f'[[array]]\nname = "md7"\nlevel = "raid6"\nmembers = {json.dumps(names)}\n'
    path = write(tmp_path, text)
    data = run_json(capsys, str(path), "--inventory", str(x4500_file))
    (array,) = data["arrays"]
    assert array["members"] == ["sdas", "sdy", "sdz", "sdac"]
    assert array["errors"] == [], array["errors"]
    by_id = "/dev/disk/by-id/ata-HITACHI_HDS7250SASUN500G_"
    last = x4500.find_disk("sdac").serial  # type: ignore[union-attr]
    assert array["commands"][0].endswith(f"{by_id}{serial} {by_id}{last}")
    assert data["host"] == x4500.host.key
    # without the inventory the same file names disks it does not describe
    assert main(["plan", str(path)]) == 2
    assert "[[disk]] 'sdas' controller: missing" in capsys.readouterr().err


def test_disks_of_unknown_use_are_planned_with_a_warning(
    tmp_path: Path, x4500_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A umockdev recording does not record mounts: its disks may be planned, and every place
    that shows the commands says to check them first."""
    text = HEAD + '[[array]]\nname = "md7"\nlevel = "raid1"\nmembers = ["sdas", "sdat"]\n'
    data = run_json(capsys, str(write(tmp_path, text)), "--inventory", str(x4500_file))
    (array,) = data["arrays"]
    assert array["errors"] == []
    assert any("check they are unused before building" in w for w in array["warnings"])
    assert array["commands"]
    assert "WARNING: 2 disks may be in use (sdas, sdat)" in array["steps"][0]["comment"]


def test_disks_in_existing_arrays_are_refused(
    tmp_path: Path, x4500_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = HEAD + '[[array]]\nname = "md7"\nlevel = "raid1"\nmembers = ["sdas", "sdm"]\n'
    data = run_json(capsys, str(write(tmp_path, text)), "--inventory", str(x4500_file))
    (array,) = data["arrays"]
    assert array["commands"] == []
    assert any("sdm is a member of an existing md array" in e for e in array["errors"])


def test_script_option_writes_a_private_script(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, dumps_plan(one_array_plan(RaidLevel.RAID10, 4)))
    script = tmp_path / "build.sh"
    assert main(["plan", str(path), "--script", str(script)]) == 0
    captured = capsys.readouterr()
    assert f"script written to {script}" in captured.err
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash\n") and "--layout=n2" in text
    assert stat.S_IMODE(script.stat().st_mode) == 0o700


def test_script_of_a_plan_without_buildable_arrays_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, dumps_plan(one_array_plan(RaidLevel.RAID5, 2)))
    script = tmp_path / "build.sh"
    assert main(["plan", str(path), "--script", str(script)]) == 1
    assert "no script written" in capsys.readouterr().err
    assert not script.exists()


def test_script_of_a_plan_without_arrays_names_the_plan_as_a_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "array 'Untitled plan' cannot be built yet": the plan's name, called an array."""
    script = tmp_path / "build.sh"
    assert main(["plan", str(write(tmp_path, HEAD)), "--script", str(script)]) == 1
    err = capsys.readouterr().err
    assert "no script written: plan 't' cannot be built yet: it has no arrays" in err
    assert "array 't'" not in err and not script.exists()


EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "x4500-raid6.toml"


def test_the_documented_example_builds(
    x4500_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = run_json(capsys, str(EXAMPLE))
    (array,) = data["arrays"]
    assert data["ok"] and array["level"] == "raid6" and array["data_disks"] == 10
    assert array["spread_score"] == 100
    assert array["commands"][0].startswith(
        "mdadm --create /dev/md/data --level=6 --raid-devices=12 --chunk=256K --spare-devices=1"
    )
    # the same file on the machine's own inventory: same disks, serials agree
    again = run_json(capsys, str(EXAMPLE), "--inventory", str(x4500_file))
    assert again["arrays"][0]["commands"] == array["commands"]


def test_new_hardware_is_costed_beside_the_machine_s_own_disks(
    tmp_path: Path, x4500_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An array of the machine's disks costs nothing new: the cost line still counts the
    catalog controller and disks bought for the other array."""
    new = "".join(
        f'[[disk]]\nid = "n{i}"\ncontroller = "newhba"\ncatalog = "seagate-exos-x18-18tb"\n'
        for i in range(4)
    )
    text = (
        HEAD
        + '[[controller]]\nid = "newhba"\ncatalog = "lsi-9300-8i"\n'
        + new
        + '[[array]]\nname = "old"\nlevel = "raid5"\nmembers = ["sdas", "sdy", "sdac"]\n'
        + '[[array]]\nname = "new"\nlevel = "raid5"\nmembers = ["n0", "n1", "n2", "n3"]\n'
    )
    path = write(tmp_path, text)
    data = run_json(capsys, str(path), "--inventory", str(x4500_file))
    old, new_array = data["arrays"]
    assert old["cost"] == 0 and new_array["cost"] > 0
    hba = next(c for c in data["controllers"] if c["id"] == "newhba")
    assert data["cost"]["total"] == pytest.approx(new_array["cost"] + hba["price"])
    # per usable TB of the array the purchase builds, not diluted by the machine's own disks
    per_tb = data["cost"]["total"] / (new_array["usable_bytes"] / 1e12)
    assert data["cost"]["cost_per_usable_tb"] == pytest.approx(per_tb)
    assert main(["plan", str(path), "--inventory", str(x4500_file)]) == 0
    total = data["cost"]["total"]
    assert f"cost of new hardware: {total:,.0f} USD" in capsys.readouterr().out


def test_reads_and_writes_name_their_own_bottleneck(capsys: pytest.CaptureFixture[str]) -> None:
    """The example's RAID 6 reads at the disks' pace and writes at parity's: the text names
    each; the JSON keeps `bottleneck` (the overall one) and adds one per side."""
    predicted = run_json(capsys, str(EXAMPLE))["arrays"][0]["predicted"]
    assert predicted["bottleneck"] == "parity"
    assert (predicted["read_bottleneck"], predicted["write_bottleneck"]) == ("disks", "parity")
    assert main(["plan", str(EXAMPLE)]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "predicted:" in x]
    assert "(limited by disks), write" in line and line.endswith("(limited by parity)")


def test_an_array_without_prediction_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    disks = "".join(
        f'[[disk]]\nid = "d{i}"\ncontroller = "c"\ncapacity_gb = 4000\n' for i in range(3)
    )
    text = HEAD + '[[controller]]\nid = "c"\n' + disks
    text += '[[array]]\nname = "slow"\nlevel = "raid5"\nmembers = ["d0", "d1", "d2"]\n'
    text += '[[array]]\nname = "few"\nlevel = "raid6"\nmembers = []\n'
    path = write(tmp_path, text)
    slow, few = run_json(capsys, str(path))["arrays"]
    assert slow["predicted"] is None
    assert slow["unpredicted_why"].startswith("no speed known for d0, d1, d2")
    assert few["predicted"] is None and few["unpredicted_why"] == "no members yet"
    fine = run_json(capsys, str(EXAMPLE))["arrays"][0]
    assert fine["predicted"] is not None and fine["unpredicted_why"] is None
    assert main(["plan", str(path)]) == 0
    out = capsys.readouterr().out
    assert "  predicted: unknown: no speed known for d0, d1, d2" in out
    assert "  predicted: unknown: no members yet" in out

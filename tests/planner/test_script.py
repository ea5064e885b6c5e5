"""The generated shell script: every command commented, serials listed, and it refuses to run
without --i-have-checked-the-serials.

It is run with bash for real, with PATH holding only stand-ins that record their arguments
(the one place a stand-in is right: the real commands would destroy disks)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from stripewise.model.evaluate import evaluate
from stripewise.model.plan import Filesystem, Plan, PlannedArray, RaidLevel
from stripewise.planner.commands import PlanNotReady
from stripewise.planner.script import CONFIRM_FLAG, shell_script
from tests.planner.plans import one_array_plan

BASH = shutil.which("bash") or "/bin/bash"
STUBBED = ("mdadm", "mkfs.ext4", "mkfs.xfs", "mkdir", "mount")
# Major 240 is reserved for local use: no driver answers behind these nodes.
UNUSED_MAJOR = 240


def script_of(plan: Plan) -> str:
    return shell_script(plan, evaluate(plan).arrays, host="nas")


def stub_path(tmp_path: Path) -> Path:
    """A PATH directory whose commands only append their name and arguments to $LOG."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in STUBBED:
        stub = bin_dir / name
        stub.write_text(
            f"#!{BASH}\n"
            'printf "%s\\n" "${0##*/} $*" >> "$LOG"\n'
            'if [[ "$*" == --detail* ]]; then echo "ARRAY /dev/md/data name=nas:data"; fi\n'
        )
        stub.chmod(0o755)
    return bin_dir


def run_script(
    tmp_path: Path, text: str, *args: str
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    script = tmp_path / "build.sh"
    script.write_text(text)
    log = tmp_path / "calls.log"
    log.touch()
    done = subprocess.run(
        [BASH, str(script), *args],
        env={"PATH": str(stub_path(tmp_path)), "LOG": str(log)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return done, log.read_text().splitlines()


def test_header_warns_and_lists_serials() -> None:
    plan = one_array_plan(RaidLevel.RAID6, 4)
    text = script_of(plan)
    lines = text.splitlines()
    assert lines[0] == "#!/usr/bin/env bash"
    assert "set -euo pipefail" in lines
    assert any("DESTROYS" in line for line in lines[:10])
    for disk in plan.disks:
        assert any(disk.id in line and f"serial {disk.serial}" in line for line in lines)
        assert f"#              {disk.stable_path}" in lines
    assert CONFIRM_FLAG in text


def test_every_command_has_a_comment_above_it() -> None:
    text = script_of(one_array_plan(RaidLevel.RAID50, 6, group_size=3))
    lines = text.splitlines()
    start = lines.index("set -x  # show each command as it runs")
    for index, line in enumerate(lines[start + 1 :], start + 1):
        if line and not line.startswith("#") and line not in ("set +x",):
            if line.startswith("echo 'done"):
                continue
            assert lines[index - 1].startswith("# "), line


def test_refuses_to_run_without_the_flag(tmp_path: Path) -> None:
    text = script_of(one_array_plan(RaidLevel.RAID5, 3))
    for args in ((), ("--yes",), ("--i-have-checked-the-serial",)):
        target = tmp_path / f"run{len(args)}{args[0] if args else ''}"
        target.mkdir()
        done, calls = run_script(target, text, *args)
        assert done.returncode == 2, done.stderr
        assert calls == []
        assert "destroys the data" in done.stderr and CONFIRM_FLAG in done.stderr


def test_stops_before_any_command_when_a_disk_is_missing(tmp_path: Path) -> None:
    done, calls = run_script(tmp_path, script_of(one_array_plan(RaidLevel.RAID5, 3)), CONFIRM_FLAG)
    assert done.returncode == 1
    assert "not a block device: /dev/disk/by-id/wwn-" in done.stderr
    assert "nothing was changed" in done.stderr
    assert calls == []


def test_placeholders_of_disks_to_buy_stop_it_too(tmp_path: Path) -> None:
    text = script_of(one_array_plan(RaidLevel.RAID1, 2, hypothetical=True))
    assert "NOT BOUGHT YET" in text
    done, calls = run_script(tmp_path, text, CONFIRM_FLAG)
    assert done.returncode == 1 and calls == []
    assert "<Seagate Exos X18 ST18000NM000J 18 TB #1>" in done.stderr


def named_in_header(text: str) -> dict[str, str]:
    """Disk id -> the path the header lists under it."""
    lines = text.splitlines()
    return {
        line.split()[1]: lines[i + 1].removeprefix("#").strip()
        for i, line in enumerate(lines)
        if line.startswith("#     ") and " serial " in line
    }


def created_with(text: str) -> dict[str, tuple[str, ...]]:
    """md device -> the devices its mdadm --create names."""
    argvs = (shlex.split(line) for line in text.splitlines() if line.startswith("mdadm --create"))
    return {argv[2]: tuple(a for a in argv[3:] if not a.startswith("--")) for argv in argvs}


def test_each_disk_to_buy_has_one_name_in_the_whole_script() -> None:
    """A RAID 60 of 16 disks to buy (two sets of 8) and two RAID 5 arrays beside it: each disk
    is one placeholder in the header, the disk check and its set's or array's mdadm line."""
    plan = one_array_plan(
        RaidLevel.RAID60, 24, group_size=8, hypothetical=True, mountpoint=None, name="big"
    )
    big = replace(plan.arrays[0], members=plan.arrays[0].members[:16])
    ids = [d.id for d in plan.disks]
    small = [
        PlannedArray(n, RaidLevel.RAID5, tuple(ids[i : i + 4])) for n, i in (("a", 16), ("b", 20))
    ]
    text = script_of(replace(plan, arrays=(big, *small)))
    header = named_in_header(text)
    assert len(set(header.values())) == len(header) == 24, header
    created = created_with(text)
    members = {"/dev/md/big-g1": ids[:8], "/dev/md/big-g2": ids[8:16]}
    members |= {"/dev/md/a": ids[16:20], "/dev/md/b": ids[20:24]}
    for device, disk_ids in members.items():
        assert created[device] == tuple(header[d] for d in disk_ids), device
    checked = next(line for line in text.splitlines() if line.startswith("for device in"))
    checked = checked.removeprefix("for device in ").removesuffix("; do")
    assert shlex.split(checked) == list(header.values())
    assert "#24>" in header["d24"]


def _device_nodes(tmp_path: Path, count: int) -> list[Path]:
    nodes = []
    for index in range(count):
        node = tmp_path / "dev" / f"disk{index}"
        node.parent.mkdir(exist_ok=True)
        try:
            os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(UNUSED_MAJOR, index))
        except (PermissionError, OSError) as exc:
            pytest.skip(f"cannot make block device nodes here: {exc}")
        nodes.append(node)
    return nodes


def test_with_the_flag_it_runs_each_command_in_order(tmp_path: Path) -> None:
    plan = one_array_plan(
        RaidLevel.RAID50,
        6,
        group_size=3,
        chunk_kib=256,
        filesystem=Filesystem.XFS,
        mountpoint=str(tmp_path / "mnt"),
    )
    nodes = _device_nodes(tmp_path, 6)
    disks = tuple(replace(d, stable_path=str(n)) for d, n in zip(plan.disks, nodes, strict=True))
    plan = replace(plan, disks=disks)
    etc = tmp_path / "etc"
    etc.mkdir()
    text = script_of(plan)
    text = text.replace("/etc/mdadm/mdadm.conf", str(etc / "mdadm.conf"))
    text = text.replace("/etc/fstab", str(etc / "fstab"))
    commands = [line for line in text.splitlines() if not line.startswith("#")]
    assert not any(re.search(r"(^|[\s'\"=])/etc/", line) for line in commands)
    done, calls = run_script(tmp_path, text, CONFIRM_FLAG)
    assert done.returncode == 0, done.stderr
    assert [c.split()[0] for c in calls] == [
        "mdadm",
        "mdadm",
        "mdadm",
        "mkfs.xfs",
        "mdadm",
        "mkdir",
        "mount",
    ]
    assert calls[0].startswith("mdadm --create /dev/md/data-g1 --level=5 --raid-devices=3")
    assert calls[0].endswith(" ".join(str(n) for n in nodes[:3]))
    assert calls[2].startswith(
        "mdadm --create /dev/md/data --level=0 --raid-devices=2 --chunk=512K"
    )
    assert calls[3] == "mkfs.xfs -L data -b size=4096 -d su=512k,sw=2 /dev/md/data"
    assert (etc / "mdadm.conf").read_text() == "ARRAY /dev/md/data name=nas:data\n"
    fstab = f"LABEL=data {tmp_path / 'mnt'} xfs defaults,noatime 0 2\n"
    assert (etc / "fstab").read_text() == fstab
    assert "+ mdadm --create" in done.stderr  # set -x shows each command


def test_arrays_with_errors_are_left_out_and_said_so() -> None:
    plan = one_array_plan(RaidLevel.RAID5, 3, spares=1)
    data = replace(plan.arrays[0], spares=())
    broken = PlannedArray(name="broken", level=RaidLevel.RAID6, members=(plan.disks[3].id,))
    plan = replace(plan, arrays=(data, broken))
    text = script_of(plan)
    assert "left out: array 'broken' cannot be built yet" in text
    assert "--create /dev/md/broken" not in text
    with pytest.raises(PlanNotReady, match="broken"):
        script_of(replace(plan, arrays=(broken,)))

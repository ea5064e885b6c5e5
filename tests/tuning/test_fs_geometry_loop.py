"""The generated mkfs commands, run for real on loop devices, give filesystems whose stripe
geometry is the plan's (this kernel has no md driver, so the filesystem goes straight onto a
loop device where /dev/md/NAME would be). Needs root and losetup; skipped otherwise.

Every loop device is detached in a finalizer, also when a test fails, and the module checks
that `losetup -a` lists none of its images at the end (only its own: an admin's may be there)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stripewise.model.arrays import FsGeometry
from stripewise.model.evaluate import evaluate
from stripewise.model.plan import Filesystem, RaidLevel
from stripewise.planner.commands import commands_for
from tests.planner.plans import one_array_plan

MIB = 1024 * 1024
IMAGE_MIB = {Filesystem.EXT4: 64, Filesystem.XFS: 600}  # XFS wants a few hundred MB
TOOLS = {Filesystem.EXT4: ("mkfs.ext4", "dumpe2fs"), Filesystem.XFS: ("mkfs.xfs", "xfs_info")}

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
    pytest.mark.skipif(shutil.which("losetup") is None, reason="losetup is not installed"),
]

CASES = [
    pytest.param(RaidLevel.RAID5, 4, 512, None, id="raid5-4x512k"),
    pytest.param(RaidLevel.RAID6, 6, 256, None, id="raid6-6x256k"),
    pytest.param(RaidLevel.RAID10, 4, 512, None, id="raid10-4x512k"),
    pytest.param(RaidLevel.RAID50, 8, 512, 4, id="raid50-2x4x512k"),
    pytest.param(RaidLevel.RAID60, 12, 256, 6, id="raid60-2x6x256k"),
    pytest.param(RaidLevel.RAID0, 3, 64, None, id="raid0-3x64k"),
]


def _attached() -> str:
    done = subprocess.run(["losetup", "-a"], capture_output=True, text=True, check=True)
    return done.stdout


_IMAGES: list[Path] = []  # every image this module attached (an admin's may be attached too)


@pytest.fixture(scope="module", autouse=True)
def loops_left_as_found() -> Iterator[None]:
    yield
    left = _attached()
    assert not [i for i in _IMAGES if f"({i})" in left], f"a loop device was left attached: {left}"


@pytest.fixture
def loop_device(tmp_path: Path) -> Iterator[Callable[[int], str]]:
    """Attach a fresh sparse image of the given MiB; detached at teardown whatever happens."""
    attached: list[str] = []

    def attach(size_mib: int) -> str:
        image = tmp_path / f"disk{len(attached)}.img"
        with image.open("wb") as handle:
            handle.truncate(size_mib * MIB)
        done = subprocess.run(
            ["losetup", "-f", "--show", "--direct-io=on", str(image)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot attach a loop device: {done.stderr.strip()}")
        device = done.stdout.strip()
        attached.append(device)
        _IMAGES.append(image)
        return device

    try:
        yield attach
    finally:
        for device in attached:
            subprocess.run(["losetup", "-d", device], capture_output=True, check=False)
        # by image: another test may attach the freed device at once. A device still open
        # (udev probing what mkfs wrote) is only marked to go when closed: given 10 s to.
        deadline = time.monotonic() + 10
        while f"({tmp_path}/" in (left := _attached()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(f"({tmp_path}/" in line for line in left.splitlines()), left


def _mkfs_on(
    device: str, level: RaidLevel, count: int, chunk: int, group: int | None, filesystem: Filesystem
) -> tuple[tuple[str, ...], FsGeometry]:
    """Run the plan's own mkfs command with the loop device in place of /dev/md/data."""
    for tool in TOOLS[filesystem]:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    plan = one_array_plan(
        level, count, chunk_kib=chunk, group_size=group, filesystem=filesystem, hypothetical=True
    )
    report = evaluate(plan).arrays[0]
    assert report.ok, [p.message for p in report.problems]
    commands = commands_for(plan.arrays[0], plan, report)
    mkfs = next(c for c in commands if c.argv and c.argv[0] == f"mkfs.{filesystem.value}")
    assert mkfs.argv[-1] == "/dev/md/data"
    assert report.fs is not None
    assert mkfs.argv[1:-1] == ("-L", "data", *report.fs.mkfs_args())
    argv = (*mkfs.argv[:-1], device)
    done = subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"{' '.join(argv)}\n{done.stdout}\n{done.stderr}"
    return argv, report.fs


def _field(text: str, name: str) -> str | None:
    match = re.search(rf"^{re.escape(name)}:\s+(.*)$", text, re.MULTILINE)
    return match.group(1).strip() if match else None


@pytest.mark.parametrize(("level", "count", "chunk", "group"), CASES)
def test_ext4_geometry_reads_back(
    loop_device: Callable[[int], str],
    level: RaidLevel,
    count: int,
    chunk: int,
    group: int | None,
) -> None:
    device = loop_device(IMAGE_MIB[Filesystem.EXT4])
    _argv, fs = _mkfs_on(device, level, count, chunk, group, Filesystem.EXT4)
    shown = subprocess.run(
        ["dumpe2fs", "-h", device], capture_output=True, text=True, check=True
    ).stdout
    assert _field(shown, "Block size") == str(fs.block_kib * 1024)
    assert _field(shown, "Filesystem volume name") == "data"
    assert _field(shown, "RAID stride") == str(fs.stride)
    assert _field(shown, "RAID stripe width") == str(fs.stripe_width)
    # and what that means: a stride is one chunk (the outer one for 50/60)
    unit = chunk * (group - (1 if level is RaidLevel.RAID50 else 2)) if group else chunk
    assert fs.stride * fs.block_kib == unit


@pytest.mark.parametrize(("level", "count", "chunk", "group"), CASES)
def test_xfs_geometry_reads_back(
    loop_device: Callable[[int], str],
    level: RaidLevel,
    count: int,
    chunk: int,
    group: int | None,
) -> None:
    device = loop_device(IMAGE_MIB[Filesystem.XFS])
    _argv, fs = _mkfs_on(device, level, count, chunk, group, Filesystem.XFS)
    shown = subprocess.run(["xfs_info", device], capture_output=True, text=True, check=True).stdout
    data = re.search(
        r"^data\s+=.*?bsize=(\d+).*?\n\s+=\s+sunit=(\d+)\s+swidth=(\d+) blks",
        shown,
        re.MULTILINE | re.DOTALL,
    )
    assert data is not None, shown
    bsize, sunit, swidth = (int(x) for x in data.groups())
    assert bsize == fs.block_kib * 1024
    assert sunit * fs.block_kib == fs.su_kib  # blocks -> KiB
    assert swidth == sunit * fs.sw


def test_mirror_gets_no_stripe_geometry(loop_device: Callable[[int], str]) -> None:
    device = loop_device(IMAGE_MIB[Filesystem.EXT4])
    argv, _fs = _mkfs_on(device, RaidLevel.RAID1, 2, 512, None, Filesystem.EXT4)
    assert "-E" not in argv
    shown = subprocess.run(
        ["dumpe2fs", "-h", device], capture_output=True, text=True, check=True
    ).stdout
    assert _field(shown, "RAID stride") is None

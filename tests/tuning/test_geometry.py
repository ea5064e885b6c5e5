"""Stripe geometry advice, checked against real filesystems made on loop devices."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from stripewise.tuning.geometry import (
    GeometryError,
    advise,
    check,
    data_disks,
    parse_dumpe2fs,
    read_recorded,
)
from tests.fixtures.loops import Loop, loop_device, needs_loop

MiB = 2**20


@pytest.fixture
def loop() -> Iterator[Loop]:
    with loop_device(600 * MiB, direct_io=False) as device:
        yield device


def test_data_disks_per_level() -> None:
    assert [data_disks(level, 8) for level in ("raid0", "raid5", "raid6", "raid10")] == [
        8,
        7,
        6,
        4,
    ]
    assert data_disks("raid1", 2) is None and data_disks(None, 4) is None
    assert advise("raid1", 2, 512, "ext4") is None  # mirrors do not stripe


def test_the_reference_example() -> None:
    advice = advise("raid5", 4, 512, "ext4")
    assert advice is not None
    assert advice.mkfs_argv("/dev/md0") == [
        "mkfs.ext4",
        "-b",
        "4096",
        "-E",
        "stride=128,stripe_width=384",
        "/dev/md0",
    ]
    assert advice.fix_argv("/dev/md0") == [
        "tune2fs",
        "-E",
        "stride=128,stripe_width=384",
        "/dev/md0",
    ]


@needs_loop
@pytest.mark.parametrize("filesystem", ["ext4", "xfs"])
def test_advised_mkfs_reads_back_as_matching(loop: Loop, filesystem: str) -> None:
    advice = advise("raid6", 6, 256, filesystem)
    assert advice is not None
    subprocess.run(
        [
            *advice.mkfs_argv(loop.device)[:-1],
            "-q",
            "-f" if filesystem == "xfs" else "-F",
            loop.device,
        ],
        check=True,
        capture_output=True,
    )
    recorded = read_recorded(loop.device, filesystem)
    assert (recorded.unit_blocks, recorded.width_blocks) == (64, 256)
    assert check(recorded, advice) == []


@needs_loop
@pytest.mark.parametrize("filesystem", ["ext4", "xfs"])
def test_a_filesystem_made_without_geometry_is_flagged(loop: Loop, filesystem: str) -> None:
    subprocess.run(
        [f"mkfs.{filesystem}", "-q", "-f" if filesystem == "xfs" else "-F", loop.device],
        check=True,
        capture_output=True,
    )
    advice = advise("raid5", 4, 512, filesystem)
    assert advice is not None
    problems = check(read_recorded(loop.device, filesystem), advice)
    assert len(problems) == 2 and "not set" in problems[0] and "128 blocks" in problems[0]


@needs_loop
def test_tune2fs_fix_makes_an_ext4_match(loop: Loop) -> None:
    subprocess.run(["mkfs.ext4", "-q", "-F", loop.device], check=True, capture_output=True)
    advice = advise("raid10", 8, 64, "ext4")
    assert advice is not None
    fix = advice.fix_argv(loop.device)
    assert fix is not None
    subprocess.run(fix, check=True, capture_output=True)
    assert check(read_recorded(loop.device, "ext4"), advice) == []


def test_unreadable_output_and_other_filesystems_are_errors() -> None:
    with pytest.raises(GeometryError, match="no block size"):
        parse_dumpe2fs("dumpe2fs: Bad magic number")
    with pytest.raises(GeometryError, match="btrfs"):
        read_recorded("/dev/null", "btrfs")
    with pytest.raises(GeometryError, match="dumpe2fs /dev/null"):
        read_recorded("/dev/null", "ext4")

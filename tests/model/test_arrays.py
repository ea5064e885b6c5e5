"""Capacity, tolerance, stripe and filesystem geometry, and the problems check_array names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stripewise.model.array_problems import check_array, plan_problems
from stripewise.model.arrays import (
    MIN_MEMBERS,
    FsGeometry,
    fs_geometry,
    geometry,
    sizes_match,
)
from stripewise.model.plan import Filesystem, PlannedArray, RaidLevel
from tests.model import GB, TB, array, disk, plan_of

R = RaidLevel


def disks(n: int, size_gb: float = 1000, prefix: str = "d") -> tuple:
    return tuple(disk(f"{prefix}{i}", f"c{i % 2}", size_gb) for i in range(n))


def geo(level: RaidLevel, n: int, size_gb: float = 1000, **fields: object):
    pool = disks(n, size_gb)
    a = array(level, [d.id for d in pool], **fields)
    return geometry(a, plan_of(pool, a))


def codes(level: RaidLevel, members, pool, **fields: object) -> set[str]:
    a = array(level, members, **fields)
    return {p.code for p in check_array(a, plan_of(tuple(pool), a))}


def test_min_members() -> None:
    assert MIN_MEMBERS == {
        R.RAID0: 2, R.RAID1: 2, R.RAID5: 3, R.RAID6: 4,
        R.RAID10: 4, R.RAID50: 6, R.RAID60: 8, R.JBOD: 1,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("level", "n", "group", "data", "usable_tb", "tolerance", "best", "per_group", "groups"),
    [
        (R.RAID0, 4, None, 4, 4, 0, 0, 0, 1),
        (R.RAID1, 3, None, 1, 1, 2, 2, 2, 1),
        (R.RAID5, 4, None, 3, 3, 1, 1, 1, 1),
        (R.RAID6, 6, None, 4, 4, 2, 2, 2, 1),
        (R.RAID10, 6, None, 3, 3, 1, 3, 1, 3),
        (R.RAID50, 9, 3, 6, 6, 1, 3, 1, 3),
        (R.RAID60, 8, 4, 4, 4, 2, 4, 2, 2),
        (R.JBOD, 3, None, 3, 3, 0, 0, 0, 1),
    ],
)
def test_every_level(level, n, group, data, usable_tb, tolerance, best, per_group, groups) -> None:
    g = geo(level, n, group_size=group)
    assert g.members == n
    assert g.data_disks == data
    assert g.usable_bytes == usable_tb * TB
    assert g.raw_bytes == n * TB
    assert g.efficiency == pytest.approx(usable_tb / n)
    assert g.fault_tolerance == tolerance
    assert g.best_fault_tolerance == best
    assert g.failures_per_group == per_group
    assert g.groups == groups
    assert g.smallest_bytes == TB


def test_stripe_sizes() -> None:
    assert geo(R.RAID5, 4).stripe_kib == 3 * 512
    assert geo(R.RAID5, 4).outer_chunk_kib is None
    assert geo(R.RAID10, 4, chunk_kib=64).stripe_kib == 2 * 64
    assert geo(R.RAID1, 2).stripe_kib == 0
    assert geo(R.JBOD, 2).stripe_kib == 0
    nested = geo(R.RAID50, 8, group_size=4, chunk_kib=128)
    assert (nested.stripe_kib, nested.outer_chunk_kib) == (384, 384)  # inner full stripe
    nested = geo(R.RAID60, 12, group_size=6, chunk_kib=64)
    assert (nested.groups, nested.group_size, nested.outer_chunk_kib) == (2, 6, 256)


def test_mixed_sizes_follow_the_smallest() -> None:
    pool = (disk("a", size_gb=1000), disk("b", size_gb=1000), disk("c", size_gb=2000))
    a = array(R.RAID5, ["a", "b", "c"])
    g = geometry(a, plan_of(pool, a))
    assert (g.smallest_bytes, g.raw_bytes, g.usable_bytes) == (TB, 4 * TB, 2 * TB)
    assert g.efficiency == 0.5
    jbod = array(R.JBOD, ["a", "c"])
    assert geometry(jbod, plan_of(pool, jbod)).usable_bytes == 3 * TB  # linear concatenates


def test_spares_add_no_capacity() -> None:
    pool = disks(4)
    a = array(R.RAID5, ["d0", "d1", "d2"], spares=("d3",))
    g = geometry(a, plan_of(pool, a))
    assert (g.members, g.raw_bytes, g.usable_bytes) == (3, 3 * TB, 2 * TB)


@pytest.mark.parametrize(
    ("level", "members", "fields"),
    [
        (R.RAID5, [], {}),
        (R.RAID5, ["d0", "d1"], {}),
        (R.RAID5, ["d0", "d1", "nope"], {}),
        (R.RAID10, ["d0", "d1", "d2", "d3", "d4"], {}),
        (R.RAID50, [f"d{i}" for i in range(6)], {}),
        (R.RAID50, [f"d{i}" for i in range(7)], {"group_size": 3}),
        (R.RAID60, [f"d{i}" for i in range(8)], {"group_size": 8}),
    ],
)
def test_incomplete_arrays_give_zeros(level, members, fields) -> None:
    pool = disks(8)
    a = array(level, members, **fields)
    g = geometry(a, plan_of(pool, a))
    assert (g.data_disks, g.usable_bytes, g.fault_tolerance, g.efficiency) == (0, 0, 0, 0.0)
    assert not g.valid
    assert g.members == len(members)


def test_unknown_member_leaves_no_smallest_guess() -> None:
    a = array(R.RAID0, ["ghost", "phantom"])
    g = geometry(a, plan_of((), a))
    assert (g.smallest_bytes, g.raw_bytes, g.usable_bytes) == (None, 0, 0)


def test_sizes_match_within_one_percent() -> None:
    assert sizes_match(1000 * GB, 1009 * GB)
    assert not sizes_match(1000 * GB, 1011 * GB)


# --- problems -----------------------------------------------------------------------------


def test_clean_array_has_no_problems() -> None:
    assert codes(R.RAID6, ["d0", "d1", "d2", "d3"], disks(4), filesystem=Filesystem.XFS) == set()


def test_unknown_disk() -> None:
    found = codes(R.RAID1, ["d0", "ghost"], disks(2), spares=("phantom",))
    assert "unknown_disk" in found


def test_too_few_members() -> None:
    pool = disks(4)
    a = array(R.RAID6, ["d0", "d1", "d2"])
    (problem,) = (p for p in check_array(a, plan_of(pool, a)) if p.code == "too_few_members")
    assert problem.error and "at least 4" in problem.message


@pytest.mark.parametrize(
    ("level", "n", "group"),
    [(R.RAID50, 6, None), (R.RAID50, 8, 2), (R.RAID60, 12, 3), (R.RAID50, 8, 3), (R.RAID50, 6, 6)],
)
def test_group_size(level, n, group) -> None:
    pool = disks(12)
    assert "group_size" in codes(level, [f"d{i}" for i in range(n)], pool, group_size=group)


def test_good_group_size() -> None:
    assert "group_size" not in codes(R.RAID60, [f"d{i}" for i in range(8)], disks(8), group_size=4)


def test_bad_chunk() -> None:
    assert "bad_chunk" in codes(R.RAID0, ["d0", "d1"], disks(2), chunk_kib=96)
    assert "bad_chunk" in codes(R.RAID5, ["d0", "d1", "d2"], disks(3), chunk_kib=4096)
    assert "bad_chunk" not in codes(R.RAID1, ["d0", "d1"], disks(2), chunk_kib=96)  # no chunk


def test_bad_block() -> None:
    assert "bad_block" in codes(
        R.RAID0, ["d0", "d1"], disks(2), filesystem=Filesystem.EXT4, block_kib=8
    )
    assert "bad_block" not in codes(R.RAID0, ["d0", "d1"], disks(2), block_kib=8)  # no mkfs


def test_size_mismatch_names_the_smallest_and_the_waste() -> None:
    pool = (disk("sda", size_gb=2000), disk("sdb", size_gb=1000), disk("sdc", size_gb=2000))
    a = array(R.RAID5, ["sda", "sdb", "sdc"])
    (problem,) = check_array(a, plan_of(pool, a))
    assert problem.code == "size_mismatch" and not problem.error
    assert "smallest" in problem.message and "sdb" in problem.message
    assert "2.0 TB" in problem.message  # two 2 TB disks each waste 1 TB
    assert problem.disks == ("sdb",)


def test_sizes_within_one_percent_are_fine() -> None:
    pool = (disk("a", size_gb=1000), disk("b", size_gb=1005))
    assert codes(R.RAID1, ["a", "b"], pool) == set()
    assert codes(R.JBOD, ["a", "b"], (disk("a", size_gb=100), disk("b", size_gb=900))) == set()


@pytest.mark.parametrize(
    ("state", "words"),
    [
        ("system", "sdi holds the running system"),
        ("in_use", "sdi is in use"),
        ("array_member", "sdi is a member of an existing md array"),
    ],
)
def test_disk_not_free(state: str, words: str) -> None:
    pool = (disk("sdh"), disk("sdi", state=state, hypothetical=False))
    a = array(R.RAID1, ["sdh", "sdi"])
    (problem,) = check_array(a, plan_of(pool, a))
    assert problem.code == "disk_not_free" and problem.error
    assert problem.message.startswith(words)
    assert "refused for real hardware" in problem.message
    assert problem.disks == ("sdi",)


def test_disk_of_unknown_use_is_planned_with_a_warning() -> None:
    """From a dump nothing says what is mounted: plan it, but say to check before building."""
    pool = (disk("sdh"), disk("sdi", state="unknown", hypothetical=False))
    a = array(R.RAID1, ["sdh", "sdi"])
    (problem,) = check_array(a, plan_of(pool, a))
    assert problem.code == "disk_use_unknown" and not problem.error
    assert problem.message.startswith("sdi may be in use")


def test_refusal_names_the_reason_when_known() -> None:
    from dataclasses import replace

    pool = (
        disk("sdh"),
        replace(disk("sdi", state="system", hypothetical=False), state_reason="/ on sdi1"),
    )
    a = array(R.RAID1, ["sdh", "sdi"])
    (problem,) = check_array(a, plan_of(pool, a))
    assert "(/ on sdi1)" in problem.message


def test_free_real_disks_and_hypothetical_ones_pass() -> None:
    pool = (disk("a", hypothetical=False), disk("b", state="system"))  # b is hypothetical
    assert codes(R.RAID1, ["a", "b"], pool) == set()


def test_duplicate_serial_and_wwn() -> None:
    pool = (disk("a", serial="WD-1"), disk("b", serial="WD-1"), disk("c", wwn="0x5"),
            disk("d", wwn="0x5"))  # fmt: skip
    a = array(R.RAID10, ["a", "b", "c", "d"])
    problems = [p for p in check_array(a, plan_of(pool, a)) if p.code == "duplicate_serial"]
    assert [p.disks for p in problems] == [("a", "b"), ("c", "d")]
    assert all(p.error for p in problems)


def test_duplicate_member() -> None:
    assert "duplicate_member" in codes(R.RAID1, ["d0", "d0"], disks(2))
    assert "duplicate_member" in codes(R.RAID1, ["d0", "d1"], disks(2), spares=("d1",))


def test_spare_too_small() -> None:
    pool = (*disks(3), disk("small", size_gb=500), disk("big", size_gb=2000))
    a = array(R.RAID5, ["d0", "d1", "d2"], spares=("small", "big"))
    problems = [p for p in check_array(a, plan_of(pool, a))]
    assert [(p.code, p.disks, p.error) for p in problems] == [
        ("spare_too_small", ("small",), False)
    ]


@pytest.mark.parametrize("level", [R.RAID0, R.JBOD])
def test_spares_on_levels_without_redundancy_are_an_error(level: RaidLevel) -> None:
    """mdadm refuses spares below RAID 1 ("This level does not support spare devices"): a
    warning let the commands through to fail at the first mdadm line."""
    a = array(level, ["d0", "d1"], spares=("d2",))
    (problem,) = [p for p in check_array(a, plan_of(disks(3), a)) if p.code == "useless_spare"]
    assert problem.error and problem.disks == ("d2",)
    assert "mdadm refuses" in problem.message
    assert "useless_spare" not in codes(R.RAID1, ["d0", "d1"], disks(3), spares=("d2",))


def test_odd_raid10() -> None:
    assert "odd_raid10" in codes(R.RAID10, [f"d{i}" for i in range(5)], disks(5))
    assert "odd_raid10" not in codes(R.RAID10, [f"d{i}" for i in range(6)], disks(6))


def test_plan_problems() -> None:
    pool = disks(6)
    one = array(R.RAID1, ["d0", "d1"], name="md0")
    two = array(R.RAID1, ["d1", "d2"], name="md1", spares=("d3",))
    three = array(R.RAID0, ["d4", "d5"], name="md0")
    problems = plan_problems(plan_of(pool, one, two, three))
    assert [(p.code, p.disks) for p in problems] == [
        ("disk_in_two_arrays", ("d1",)),
        ("duplicate_name", ()),
    ]
    assert all(p.error for p in problems)
    assert "md0 and md1" in problems[0].message


# --- filesystem geometry ------------------------------------------------------------------


def fs(level: RaidLevel, n: int, filesystem: str | None, **fields: object) -> FsGeometry | None:
    pool = disks(n)
    chosen = Filesystem(filesystem) if filesystem else None
    a = array(level, [d.id for d in pool], filesystem=chosen, **fields)
    return fs_geometry(a, geometry(a, plan_of(pool, a)))


def test_reference_examples() -> None:
    """REFERENCE §3: 512 KiB chunk, 4 KiB blocks, 4-disk RAID 5; and the verified 128k case."""
    ext4 = fs(R.RAID5, 4, "ext4")
    assert ext4 is not None and (ext4.stride, ext4.stripe_width) == (128, 384)
    assert ext4.mkfs_args() == ("-b", "4096", "-E", "stride=128,stripe_width=384")
    xfs = fs(R.RAID5, 4, "xfs")
    assert xfs is not None and (xfs.su_kib, xfs.sw) == (512, 3)
    assert xfs.mkfs_args() == ("-b", "size=4096", "-d", "su=512k,sw=3")
    verified = fs(R.RAID5, 4, "ext4", chunk_kib=128)
    assert verified is not None
    assert verified.mkfs_args() == ("-b", "4096", "-E", "stride=32,stripe_width=96")
    verified_xfs = fs(R.RAID5, 4, "xfs", chunk_kib=128)
    assert verified_xfs is not None and verified_xfs.mkfs_args()[-1] == "su=128k,sw=3"


def test_stride_counts_filesystem_blocks() -> None:
    """stride = chunk / block: 128 KiB chunks are 32 blocks of 4 KiB, 64 of 2 KiB."""
    for block_kib, stride in ((4, 32), (2, 64), (1, 128)):
        ext4 = fs(R.RAID0, 2, "ext4", chunk_kib=128, block_kib=block_kib)
        assert ext4 is not None and (ext4.stride, ext4.stripe_width) == (stride, 2 * stride)


def test_nested_uses_the_outer_stripe() -> None:
    raid50 = fs(R.RAID50, 8, "xfs", group_size=4, chunk_kib=128)  # 2 sets, 3 data disks each
    assert raid50 is not None
    assert raid50.mkfs_args() == ("-b", "size=4096", "-d", "su=384k,sw=2")
    raid50_ext4 = fs(R.RAID50, 8, "ext4", group_size=4, chunk_kib=128)
    assert raid50_ext4 is not None
    assert (raid50_ext4.stride, raid50_ext4.stripe_width) == (96, 192)  # 6 data disks x 32
    raid60 = fs(R.RAID60, 12, "xfs", group_size=6, chunk_kib=64)
    assert raid60 is not None and (raid60.su_kib, raid60.sw) == (256, 2)


@pytest.mark.parametrize(("level", "n"), [(R.RAID1, 2), (R.JBOD, 3)])
def test_no_stripe_options(level: RaidLevel, n: int) -> None:
    ext4 = fs(level, n, "ext4")
    assert ext4 is not None and ext4.mkfs_args() == ("-b", "4096")
    xfs = fs(level, n, "xfs", block_kib=1)
    assert xfs is not None and xfs.mkfs_args() == ("-b", "size=1024")


def test_no_filesystem_no_geometry() -> None:
    assert fs(R.RAID5, 4, None) is None


# --- properties ---------------------------------------------------------------------------


@given(
    level=st.sampled_from(list(RaidLevel)),
    sizes=st.lists(st.integers(100, 20_000), min_size=0, max_size=16),
    group=st.one_of(st.none(), st.integers(1, 8)),
)
def test_geometry_properties(level: RaidLevel, sizes: list[int], group: int | None) -> None:
    pool = tuple(disk(f"d{i}", size_gb=s) for i, s in enumerate(sizes))
    a = PlannedArray("md0", level, tuple(d.id for d in pool), group_size=group)
    g = geometry(a, plan_of(pool, a))
    assert 0 <= g.usable_bytes <= g.raw_bytes
    assert 0 <= g.data_disks <= g.members
    assert 0.0 <= g.efficiency <= 1.0
    if g.valid:
        assert 0 <= g.fault_tolerance <= g.best_fault_tolerance < g.members
        assert len(sizes) >= MIN_MEMBERS[level]
        assert not any(p.error for p in check_array(a, plan_of(pool, a)))
    else:
        assert any(p.error for p in check_array(a, plan_of(pool, a)))


@pytest.mark.parametrize("name", ["my data", "-x", "a/b", "x" * 33, ""])
def test_names_md_cannot_use_are_errors(name: str) -> None:
    from dataclasses import replace

    pool = (disk("a"), disk("b"))
    a = replace(array(R.RAID1, ["a", "b"]), name=name)
    assert "bad_name" in {p.code for p in check_array(a, plan_of(pool, a)) if p.error}

"""What tells compared runs of one generated name apart (the field notes: ext4, ext4
data=writeback and xfs all named "fio on .../b (1 MiB blocks, QD 1, 128 MiB, direct)")."""

from __future__ import annotations

from stripewise.model.compare_context import ContextDifference
from stripewise.model.compare_labels import MAX_TELLING, telling_apart

NAME = "fio on /tmp/review-fieldnotes/mnt1/b (1 MiB blocks, QD 1, 128 MiB, direct)"
FILESYSTEMS = ContextDifference("filesystem", "filesystem", ("ext4", "ext4", "xfs"))
OPTIONS = ContextDifference(
    "superblock_options",
    "filesystem",
    ("rw,data=ordered", "rw,data=writeback", "rw,inode64,logbufs=8,logbsize=32k,noquota"),
)
DISK_SIZE = ContextDifference("disks[loop1].size_bytes", "disks", (2**27, 2**27, 2**28))


def test_each_run_reads_what_sets_it_apart_and_no_more() -> None:
    told = telling_apart([NAME] * 3, [DISK_SIZE, FILESYSTEMS, OPTIONS])
    # the filesystem before a disk's size; xfs is told by its filesystem alone
    assert told == ["ext4, data=ordered", "ext4, data=writeback", "xfs"]


def test_names_no_other_run_has_need_nothing() -> None:
    assert telling_apart(["chunk 64K", "chunk 128K"], [FILESYSTEMS]) == ["", ""]
    # two of three share a name: only those two are told apart, by what differs between them
    assert telling_apart([NAME, NAME, "xfs run"], [FILESYSTEMS, OPTIONS]) == [
        "data=ordered",
        "data=writeback",
        "",
    ]


def test_settings_are_named_unless_their_value_says_it_and_long_ones_are_cut() -> None:
    read_ahead = ContextDifference("disks[sdb].tuning.read_ahead_kb", "tuning", (128, 4096))
    assert telling_apart([NAME, NAME], [read_ahead]) == [
        "sdb read_ahead_kb 128 KiB",
        "sdb read_ahead_kb 4096 KiB",
    ]
    long = ContextDifference("kernel", "kernel", ("6.18.0-" + "a" * 60, "6.18.0-" + "b" * 60))
    told = telling_apart([NAME, NAME], [long])
    assert all(len(t) == MAX_TELLING and t.endswith("\u2026") for t in told)


def test_a_run_without_the_setting_or_nothing_differing_leaves_the_id_to_tell() -> None:
    missing = ContextDifference("superblock_options", "filesystem", (None, "rw,data=writeback"))
    assert telling_apart([NAME, NAME], [missing]) == ["", ""]
    assert telling_apart([NAME, NAME], []) == ["", ""]

"""A disk's interval figures (await, queue size, busy, rates) from a recorded pair of
/proc/diskstats snapshots, one second apart, as iostat -x works them out."""

from __future__ import annotations

import pytest

from stripewise.helper import diskstats

# a virtio disk reading, then the same disk a second later (kernel 6.1: 20 fields a line)
# ruff: noqa: E501 (the lines as the kernel wrote them)
BEFORE = """\
   7       0 loop0 68480448 28734 1769340990 5443434 1998537 205876 1506179360 2451587 0 1035808 7898803 1409 0 349497284 135 46057 3646
 254       0 vda 25087648 13570967 2887780113 6080873 6083418 1425717 2457503569 4394560 0 3098424 10864325 1303424 46 1807928576 323698 839700 65193
 254       1 vda1 25080000 13570000 2887700000 6080000 6083000 1425000 2457500000 4394000 0 3098000 10864000
"""
AFTER = """\
   7       0 loop0 68480448 28734 1769340990 5443434 1998537 205876 1506179360 2451587 0 1035808 7898803 1409 0 349497284 135 46057 3646
 254       0 vda 25088044 13570997 2887783529 6080900 6083418 1425717 2457503569 4394560 0 3098440 10864383 1303827 46 1807932184 323728 839700 65193
 254       1 vda1 25080396 13570030 2887703416 6080027 6083000 1425000 2457500000 4394000 0 3098016 10864058
"""


def test_await_queue_and_busy_of_a_recorded_second() -> None:
    before = diskstats.parse(BEFORE, {"vda", "loop0"})
    after = diskstats.parse(AFTER, {"vda", "loop0"})
    assert set(before) == set(after) == {"vda", "loop0"}  # the partition was not asked for
    vda = diskstats.interval(before["vda"], after["vda"], 1.0)
    # 396 reads of 3,416 sectors that waited 27 ms in all; 16 ms busy; 58 weighted ms
    assert vda.read_iops == 396.0 and vda.write_iops == 0.0
    assert vda.read_mb_s == round(3416 * 512 / 1e6, 3) and vda.write_mb_s == 0.0
    assert vda.await_ms == round(27 / 396, 3)
    assert vda.busy_pct == 1.6
    assert vda.queue_size == 0.06  # 58 ms of requests in flight over 1,000 ms
    idle = diskstats.interval(before["loop0"], after["loop0"], 1.0)
    assert idle.await_ms is None  # nothing completed: no await, never 0
    assert idle.queue_size == 0.0 and idle.busy_pct == 0.0


def test_reads_and_writes_share_one_await_over_half_a_second() -> None:
    before = diskstats.DiskCounters(100, 50, 0, 0, 1_000, 2_000, 5_000, 9_000)
    after = diskstats.DiskCounters(300, 250, 10**8, 2 * 10**8, 1_600, 4_400, 5_450, 10_800)
    figures = diskstats.interval(before, after, 0.5)
    # 200 reads waited 600 ms, 200 writes 2,400 ms: 3,000 ms over 400 I/Os
    assert figures.await_ms == 7.5
    assert figures.read_iops == 400.0 and figures.write_iops == 400.0
    assert figures.read_mb_s == 200.0 and figures.write_mb_s == 400.0
    assert figures.busy_pct == 90.0  # 450 ms of 500
    assert figures.queue_size == 3.6  # 1,800 weighted ms over 500 ms


def test_millisecond_counters_that_wrapped_and_busy_over_the_interval() -> None:
    top = 2**32
    before = diskstats.DiskCounters(0, 0, 0, 0, top - 10, 0, top - 100, top - 50)
    after = diskstats.DiskCounters(10, 0, 4096, 0, 30, 0, 1_100, 4_950)
    figures = diskstats.interval(before, after, 1.0)
    assert figures.await_ms == 4.0  # 40 ms over 10 reads, across the wrap
    assert figures.busy_pct == 100.0  # 1,200 ms busy in 1 s: capped
    assert figures.queue_size == 5.0


@pytest.mark.parametrize("line", ["", " 8 0 sda 1 2 3", " 8 0 sda x 0 0 0 0 0 0 0 0 0 0"])
def test_short_or_garbled_lines_are_skipped(line: str) -> None:
    assert diskstats.parse(line, {"sda"}) == {}


def test_this_machines_counters_read() -> None:
    with open("/proc/diskstats") as handle:
        name = handle.readline().split()[2]
    found = diskstats.read({name, "nosuchdisk"})
    assert set(found) == {name}
    assert diskstats.read(()) == {}

"""Which sampled disks are an array's members, and which member stands out over a phase."""

from __future__ import annotations

from stripewise.model.members import MIN_INTERVALS, MemberTally, member_groups, stored_stand_outs
from stripewise.protocol.events import DiskLayer, DiskRates


def rates(
    mb_s: float, iops: float, busy: float, wait: float | None, role: str = "target",
    under: str | None = None, depth: int = 0,
) -> DiskRates:  # fmt: skip
    return DiskRates(mb_s, 0.0, iops, 0.0, busy, role, under, depth, wait, busy / 50)


def test_members_are_disks_side_by_side_never_a_disk_and_the_one_under_it() -> None:
    btrfs = {
        "loop1": DiskLayer("loop1", "target"),
        "loop2": DiskLayer("loop2", "target"),
        "sda": DiskLayer("sda", "backing", "loop1", 1),
    }
    assert member_groups(btrfs) == [("loop1", "loop2")]
    md = {
        "sdb": DiskLayer("sdb", "member", "md0", 1),
        "sdc": DiskLayer("sdc", "member", "md0", 1),
        "sdd": DiskLayer("sdd", "member", "md1", 1),
        "sde": DiskLayer("sde", "member", "md1", 1),
    }
    assert member_groups(md) == [("sdb", "sdc"), ("sdd", "sde")]
    one_loop = {
        "loop0": DiskLayer("loop0", "target"),
        "vda": DiskLayer("vda", "backing", "loop0", 1),
    }
    assert member_groups(one_loop) == []


def test_the_slow_member_is_named_with_its_ratio_and_both_figures() -> None:
    tally = MemberTally()
    for _ in range(MIN_INTERVALS):
        tally.add({
            "loop1": rates(40, 400, 30, 3.0),
            "loop2": rates(40, 400, 34, 3.4),
            "loop3": rates(20, 100, 95, 9.8),
            "vda": rates(100, 900, 20, 1.0, "backing", "loop1", 1),
        })  # fmt: skip
    found = tally.stand_outs()
    assert [(s.member, s.figure) for s in found] == [("loop3", "await"), ("loop3", "utilisation")]
    assert found[0].ratio == round(9.8 / 3.2, 2) and found[0].others == 3.2
    said = tally.describe()
    assert said is not None
    assert said.startswith("loop3: 3.1x the others' await (9.8 ms vs 3.2 ms)")
    assert "3.0x the others' utilisation (95 % vs 32 %)" in said
    member = tally.members["loop3"]
    assert member.mb_s == 20 and member.iops == 100 and member.queue_size == 1.9
    assert "vda" not in tally.members


def test_await_is_weighted_by_the_ios_each_interval_completed() -> None:
    tally = MemberTally()
    for wait, iops in ((1.0, 900), (10.0, 100)) * MIN_INTERVALS:
        tally.add({"sdb": rates(1, iops, 50, wait, "member", "md0", 1),
                   "sdc": rates(1, 1000, 50, 1.9, "member", "md0", 1)})  # fmt: skip
    assert tally.members["sdb"].await_ms == 1.9  # not (1 + 10) / 2
    assert tally.stand_outs() == []


def test_too_few_intervals_with_io_judge_nothing() -> None:
    tally = MemberTally()
    for index in range(MIN_INTERVALS + 3):
        busy = index < MIN_INTERVALS - 1  # one interval short on loop3
        tally.add({
            "loop1": rates(40, 400, 30, 3.0),
            "loop2": rates(40, 400, 30, 3.0),
            "loop3": rates(20, 100, 95, 9.8) if busy else rates(0, 0, 0, None),
        })  # fmt: skip
    assert tally.members["loop3"].busy_intervals == MIN_INTERVALS - 1
    assert tally.stand_outs() == [] and tally.describe() is None


def test_twice_the_median_is_not_yet_standing_out() -> None:
    tally = MemberTally()
    for _ in range(MIN_INTERVALS):
        tally.add({"loop1": rates(1, 10, 20, 2.0), "loop2": rates(1, 10, 40, 4.0)})
    assert tally.stand_outs() == []


def test_a_run_stored_before_await_was_sampled_is_judged_by_utilisation() -> None:
    places = {
        "sdb": DiskLayer("sdb", "member", "md0", 1),
        "sdc": DiskLayer("sdc", "member", "md0", 1),
        "sdd": DiskLayer("sdd", "member", "md0", 1),
    }
    old = {"engine_read_mb_s": 300.0}
    for name, busy in (("sdb", 30.0), ("sdc", 32.0), ("sdd", 90.0)):
        old |= {f"disks.{name}.read_mb_s": 100.0, f"disks.{name}.read_iops": 100.0,
                f"disks.{name}.write_mb_s": 0.0, f"disks.{name}.write_iops": 0.0,
                f"disks.{name}.busy_pct": busy}  # fmt: skip
    new = old | {f"disks.{n}.await_ms": 1.0 for n in places} | {"disks.sdd.await_ms": 5.0}
    samples = [("seq_read", 1, old)] * MIN_INTERVALS + [("seq_read", 2, new)] * MIN_INTERVALS
    named = stored_stand_outs(places, samples)
    utilisation = "sdd: 2.9x the others' utilisation (90 % vs 31 %)"
    assert named == {
        ("seq_read", 1): utilisation,  # no await stored: by utilisation alone
        ("seq_read", 2): f"sdd: 5.0x the others' await (5.0 ms vs 1.0 ms); {utilisation}",
    }

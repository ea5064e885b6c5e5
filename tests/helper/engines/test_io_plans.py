"""What each stream of the built-in engine does next."""

from __future__ import annotations

from stripewise.helper.engines.io_plans import START, RandomPlan, RewritePlan, SequentialPlan
from stripewise.helper.engines.linux_aio import PREAD, PWRITE

BLOCK = 4096


def drain(plan: RandomPlan | SequentialPlan) -> list[tuple[int, int, int]]:
    ios = []
    while (io := plan.next(0, START)) is not None:
        ios.append(io)
    return ios


def test_sequential_covers_the_region_in_order_with_a_short_last_block() -> None:
    ios = drain(SequentialPlan(PWRITE, 8192, 8192 + 3 * BLOCK + 100, BLOCK))
    assert ios == [
        (PWRITE, 8192, BLOCK),
        (PWRITE, 8192 + BLOCK, BLOCK),
        (PWRITE, 8192 + 2 * BLOCK, BLOCK),
        (PWRITE, 8192 + 3 * BLOCK, 100),
    ]


def test_random_offsets_are_aligned_inside_the_region_and_reproducible() -> None:
    start, end, ops = 10 * BLOCK, 10_010 * BLOCK, 20_000  # more than one draw of 4096
    ios = drain(RandomPlan(start, end, BLOCK, ops, 1.0, seed=5))
    assert len(ios) == ops
    offsets = [offset for _op, offset, _size in ios]
    assert all(start <= o < end and o % BLOCK == 0 for o in offsets)
    assert len(set(offsets)) > 8000  # spread over the region, not a few hot blocks
    assert {(op, size) for op, _offset, size in ios} == {(PREAD, BLOCK)}
    assert drain(RandomPlan(start, end, BLOCK, ops, 1.0, seed=5)) == ios
    assert drain(RandomPlan(start, end, BLOCK, ops, 1.0, seed=6)) != ios


def test_a_mixed_plan_reads_its_share() -> None:
    ios = drain(RandomPlan(0, 1000 * BLOCK, BLOCK, 30_000, 0.7, seed=1))
    reads = sum(op == PREAD for op, _offset, _size in ios)
    assert 0.68 < reads / len(ios) < 0.72
    writes = drain(RandomPlan(0, 1000 * BLOCK, BLOCK, 50, 0.0, seed=1))
    assert {op for op, _o, _s in writes} == {PWRITE}


def test_rewrite_writes_each_block_back_where_it_was_read_after_changing_it() -> None:
    flipped: list[int] = []
    plan = RewritePlan(0, 3 * BLOCK, BLOCK, flipped.append)
    first, second = plan.next(0, START), plan.next(1, START)
    assert (first, second) == ((PREAD, 0, BLOCK), (PREAD, BLOCK, BLOCK))
    assert plan.next(1, PREAD) == (PWRITE, BLOCK, BLOCK) and flipped == [1]
    assert plan.next(1, PWRITE) == (PREAD, 2 * BLOCK, BLOCK)
    assert plan.next(0, PREAD) == (PWRITE, 0, BLOCK) and flipped == [1, 0]
    assert plan.next(0, PWRITE) is None
    assert plan.next(1, PREAD) == (PWRITE, 2 * BLOCK, BLOCK)
    assert plan.next(1, PWRITE) is None

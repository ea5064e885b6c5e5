"""A live run freezes the heap as it starts and as its samples pile up, so the collector's full
passes never walk the whole program or a 2-hour run's samples on the GUI thread."""

from __future__ import annotations

import gc

from stripewise.gui.live_heap import LiveHeap


def test_a_run_start_and_every_few_thousand_samples_freeze_what_is_alive() -> None:
    heap = LiveHeap(every=100)
    heap.run_started()
    frozen = gc.get_freeze_count()
    kept = [[n] for n in range(1_000)]  # the samples a run keeps, tracked objects each
    heap.samples_kept(99)
    assert gc.get_freeze_count() == frozen  # not yet
    heap.samples_kept(100)
    assert gc.get_freeze_count() >= frozen + len(kept)
    again = gc.get_freeze_count()
    heap.samples_kept(199)
    assert gc.get_freeze_count() == again  # counted from the last freeze
    heap.run_started()  # a new run: counted from 0 again
    more = [[n] for n in range(10)]
    heap.samples_kept(100)
    assert gc.get_freeze_count() >= again + len(more)

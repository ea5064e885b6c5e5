"""A calm heap for live runs: what is alive as a run starts, and the samples it keeps as it
goes, are frozen out of Python's cyclic garbage collector.

The collector's full (oldest-generation) pass walks every tracked object: with PySide6,
pyqtgraph, numpy and the history's ORM loaded that is most of a million, 100-250 ms of the GUI
thread, and a run's first seconds (the page's set-up, the samples kept for the history) are what
tends to set one off. A run then keeps every sample for the history, four tracked objects each:
at 72,000 samples (2 hours at 10 Hz) a full pass walks some 300,000 more objects, half a second
on a loaded machine, several times an hour. `gc.freeze()` moves everything alive into a
generation no pass walks, so the passes walk only what was made since the last freeze: a few
milliseconds. Freezing costs nothing itself (it links lists); what it costs is that cycles among
frozen objects are never collected: samples hold none, and the little cyclic garbage of the
moment it keeps is bounded by a freeze per few thousand samples.
"""

from __future__ import annotations

import gc

FREEZE_EVERY = 3_000  # samples kept since the last freeze: 5 minutes at 10 Hz


class LiveHeap:
    """Freezes the heap as a live run starts, and again each time it has kept `every` more
    samples (for the plots that count them)."""

    def __init__(self, every: int = FREEZE_EVERY) -> None:
        self._every = every
        self._frozen_at = 0

    def run_started(self) -> None:
        gc.freeze()
        self._frozen_at = 0

    def samples_kept(self, count: int) -> None:
        """`count`: the run's samples so far."""
        if count - self._frozen_at >= self._every:
            gc.freeze()
            self._frozen_at = count

"""A calm heap for live runs: the program as it stands when its first run starts is frozen out
of Python's cyclic garbage collector.

The collector's full (oldest-generation) pass walks every tracked object: with PySide6,
pyqtgraph, numpy and the history's ORM loaded that is most of a million, 100-250 ms of the GUI
thread, and a run's first seconds (the page's set-up, the samples kept for the history) are what
tends to set one off. `gc.freeze()` moves everything alive into a generation no pass walks, so
the passes during a run walk only what was made since: a few milliseconds. Freezing is done once
per process: what is frozen is the long-lived program (modules, pages, services), and only the
cycles among it that die later are never collected, a bounded amount; freezing again at every
run would keep each run's garbage too.
"""

from __future__ import annotations

import gc

_frozen = False


def freeze_for_live_runs() -> None:
    """Called as a live run starts (a run here or on a group of hosts); only the first counts."""
    global _frozen
    if _frozen:
        return
    _frozen = True
    gc.freeze()

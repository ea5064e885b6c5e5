"""A group run's lines, merged as they arrive: every host's samples (and the total's) appended to
numpy columns on the driver's thread, read by the GUI thread once per frame.

Eight hosts at a few samples a second each are many small Python objects; unpacking each into
the plots' columns on the GUI thread put that work between its paints. Here the driver's thread
does it as it delivers the sample, under a lock held for one row; the GUI thread takes views of
the columns (never copies) and draws a line only when its count moved. A view stays valid while
samples keep arriving: appends write past its end, and growing the columns makes new arrays.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import numpy as np

from stripewise.protocol.events import Sample

TOTAL = "total"  # the line that sums one tick over the hosts
_FIELDS = 3  # t, MB/s (read + write), IOPS (read + write)


class GroupSeries:
    """Per line (a host's label, or "total"): seconds, MB/s and IOPS, read + write each."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: dict[str, np.ndarray] = {}
        self._counts: dict[str, int] = {}
        self.version = 0  # grows with every sample kept: nothing new to draw while it stands

    def reset(self, labels: Iterable[str]) -> None:
        """A new run with these lines; samples of any other line are not kept."""
        with self._lock:
            self._lines = {label: np.empty((_FIELDS, 256)) for label in labels}
            self._counts = dict.fromkeys(self._lines, 0)
            self.version += 1

    def add(self, sample: Sample) -> bool:
        """Keep one sample in its host's line (from any thread); False if the run has no such
        line."""
        label = sample.host or TOTAL
        row = (
            sample.t_s,
            sample.engine_read_mb_s + sample.engine_write_mb_s,
            sample.engine_read_iops + sample.engine_write_iops,
        )
        with self._lock:
            columns = self._lines.get(label)
            if columns is None:
                return False
            count = self._counts[label]
            if count == columns.shape[1]:  # full: twice the room, the old array left as it is
                grown = np.empty((_FIELDS, 2 * count))
                grown[:, :count] = columns
                self._lines[label] = columns = grown
            columns[:, count] = row
            self._counts[label] = count + 1
            self.version += 1
        return True

    def labels(self) -> list[str]:
        with self._lock:
            return list(self._lines)

    def count(self, label: str) -> int:
        with self._lock:
            return self._counts.get(label, 0)

    def view(self, label: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(seconds, MB/s, IOPS) of the line's samples so far: views, not copies."""
        with self._lock:
            columns = self._lines.get(label)
            if columns is None:
                empty = np.empty(0)
                return empty, empty, empty
            count = self._counts[label]
            return columns[0, :count], columns[1, :count], columns[2, :count]
